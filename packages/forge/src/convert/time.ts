/** Go's zero `time.Time` as RFC 3339, what Gitea emits for times it does not fill in. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** Unix seconds as RFC 3339 in UTC without fractional seconds, like Go's `time.Time` JSON. */
export function rfc3339(unix: number): string {
  // toISOString always ends in `.sssZ`; cutting it is cheaper than a regular expression on every field.
  return `${new Date(unix * 1000).toISOString().slice(0, -5)}Z`;
}
