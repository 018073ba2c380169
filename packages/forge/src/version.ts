/** The Gitea API version this forge speaks; clients such as the Go SDK gate features on it. */
export const GITEA_COMPAT_VERSION = '1.23.0';
