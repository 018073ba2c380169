import { Invalid } from '../errors.js';

// Gitea's reserved names and patterns (models/user/user.go) for users and organizations.
const RESERVED_NAMES = new Set([
  '.',
  '..',
  '.well-known',
  'admin',
  'api',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'captcha',
  'commits',
  'debug',
  'error',
  'explore',
  'favicon.ico',
  'ghost',
  'issues',
  'login',
  'manifest.json',
  'metrics',
  'milestones',
  'new',
  'notifications',
  'org',
  'pulls',
  'raw',
  'repo',
  'repo-avatars',
  'robots.txt',
  'search',
  'serviceworker.js',
  'ssh_info',
  'swagger.v1.json',
  'user',
  'v2',
  'gitea-actions',
]);
const RESERVED_SUFFIXES = ['.keys', '.gpg', '.rss', '.atom', '.png'];
// Alphanumerics, dash, underscore and dot; no leading/trailing or doubled punctuation.
const VALID_NAME = /^[\da-zA-Z](?:[\da-zA-Z]|[-_.](?=[\da-zA-Z]))*$/;

/** Throws Gitea's 422 errors for names a user or organization may not take. */
export function assertValidOwnerName(name: string): void {
  const lower = name.toLowerCase();
  if (RESERVED_NAMES.has(lower)) throw new Invalid(`name is reserved [name: ${name}]`);
  const suffix = RESERVED_SUFFIXES.find((s) => lower.endsWith(s));
  if (suffix) throw new Invalid(`name pattern is not allowed [pattern: *${suffix}]`);
  if (!VALID_NAME.test(name)) {
    throw new Invalid(
      `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`,
    );
  }
}

const EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*$/;

/** Throws Gitea's 422 for a malformed e-mail address. */
export function assertValidEmail(email: string): void {
  if (!EMAIL.test(email)) throw new Invalid(`e-mail invalid [email: ${email}]`);
}
