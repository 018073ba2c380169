/**
 * Who a contents-API commit is by, and what it says (Gitea's GetAuthorAndCommitterUsers, User.NewGitSig
 * and changeFilesCommitMessage):
 *  - an identity whose e-mail is the doer's is the doer (their name unless one is given);
 *  - only one of author/committer given: it is used for both; neither: both are the doer;
 *  - the doer signs as their full name (else login) and their e-mail, or the no-reply address when they
 *    keep it private;
 *  - without a message: "Add a, b" / "Update c" / "Delete d" lines, in that order.
 */
import { placeholderEmail } from '../convert/user.js';
import { Invalid } from '../errors.js';
import type { GitSignature } from '../git/repository.js';
import type { CommitIdentity } from '../git/tree-writes.js';
import type { UserRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';

/** An `Identity` as the request gave it. */
export interface IdentityInput {
  name?: string;
  email?: string;
}

/** `CommitDateOptions` as the request gave them (RFC 3339). */
export interface DatesInput {
  author?: string;
  committer?: string;
}

/** Gitea's `User.GitName`: the full name when it is usable in a signature, else the login. */
function gitName(user: UserRow): string {
  if (user.full_name !== '' && !/[\n<>]/.test(user.full_name)) return user.full_name;
  return user.name;
}

function doerSignature(ctx: ServiceContext, doer: UserRow, name?: string): GitSignature {
  const email = doer.keep_email_private ? placeholderEmail(ctx.config, doer) : doer.email;
  return { name: name || gitName(doer), email };
}

function identitySignature(
  ctx: ServiceContext,
  doer: UserRow,
  given: IdentityInput | undefined,
): GitSignature | null {
  if (!given?.email) return null;
  if (given.email.toLowerCase() === doer.email.toLowerCase()) return doerSignature(ctx, doer, given.name);
  // A stranger's identity: git requires a name, Gitea's placeholder user has none but its e-mail.
  return { name: given.name || given.email, email: given.email };
}

function parseDate(field: string, text: string | undefined): Date | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new Invalid(`[Dates.${field}]: invalid date-time "${text}"`);
  return new Date(ms);
}

/** Author and committer of a contents-API commit. */
export function commitIdentity(
  ctx: ServiceContext,
  doer: UserRow,
  input: { author?: IdentityInput; committer?: IdentityInput; dates?: DatesInput },
): CommitIdentity {
  const committerGiven = identitySignature(ctx, doer, input.committer);
  const authorGiven = identitySignature(ctx, doer, input.author);
  const author = authorGiven ?? committerGiven ?? doerSignature(ctx, doer);
  const committer = committerGiven ?? author;
  const now = new Date();
  return {
    author: { ...author, when: parseDate('Author', input.dates?.author) ?? now },
    committer: { ...committer, when: parseDate('Committer', input.dates?.committer) ?? now },
  };
}

/** One file operation's verb and the path the caller wrote, for the default message. */
export interface MessagePart {
  operation: 'create' | 'update' | 'upload' | 'rename' | 'delete';
  path: string;
}

/** Gitea's default commit message (locale en-US). */
export function defaultCommitMessage(parts: readonly MessagePart[]): string {
  const of = (ops: string[]) => parts.filter((part) => ops.includes(part.operation)).map((part) => part.path);
  const created = of(['create']);
  const updated = of(['update', 'upload', 'rename']);
  const deleted = of(['delete']);
  let message = '';
  if (created.length) message += `Add ${created.join(', ')}\n`;
  if (updated.length) message += `Update ${updated.join(', ')}\n`;
  if (deleted.length) message += `Delete ${deleted.join(', ')}`;
  return message.replace(/^\n+|\n+$/g, '');
}

/** The message with a `Signed-off-by` trailer for the committer when asked (Gitea's signoff). */
export function withSignoff(message: string, committer: GitSignature, signoff: boolean): string {
  if (!signoff) return message;
  return `${message}\n\nSigned-off-by: ${committer.name} <${committer.email}>`;
}
