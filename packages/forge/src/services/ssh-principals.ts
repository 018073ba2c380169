import { Forbidden, Invalid, NotFound } from '../errors.js';
import { deletePublicKey, findPrincipals, findPublicKeyById, insertPublicKey } from '../store/keys.js';
import { listPrincipals } from '../store/principals.js';
import { AccessMode, KeyType, type PublicKeyRow, type UserRow } from '../store/schema.js';
import { nowUnix, type ServiceContext } from './context.js';

// A principal is one entry of an OpenSSH certificate's comma-separated principal list.
const PRINCIPAL = /^[^\s,*]{1,255}$/;

/**
 * Registers an SSH certificate principal for `owner`: a certificate naming it then signs requests as
 * that user. Like Gitea's default `AUTHORIZED_PRINCIPALS_ALLOW = email, username`, a user may claim only
 * their own user name or e-mail; a site admin may register any principal for anyone. A principal
 * belongs to one user at most.
 */
export async function addPrincipal(
  ctx: ServiceContext,
  doer: UserRow,
  owner: UserRow,
  input: { principal: string; title?: string },
): Promise<PublicKeyRow> {
  const principal = input.principal.trim();
  if (!PRINCIPAL.test(principal)) {
    throw new Invalid('principal must be 1 to 255 characters without spaces, commas or "*"');
  }
  const own = [owner.name.toLowerCase(), owner.email.toLowerCase()];
  if (!doer.is_admin && !own.includes(principal.toLowerCase())) {
    throw new Forbidden('a principal must be your user name or e-mail address');
  }
  if ((await findPrincipals(ctx.db, principal, KeyType.Principal)).length > 0) {
    throw new Invalid('principal has been used');
  }
  const now = nowUnix();
  return insertPublicKey(ctx.db, {
    owner_id: owner.id,
    name: input.title?.trim() || principal,
    fingerprint: '',
    content: principal,
    mode: AccessMode.Write,
    type: KeyType.Principal,
    created_unix: now,
    updated_unix: now,
  });
}

/** One page of a user's principals (oldest first) and their total. */
export function listUserPrincipals(
  ctx: ServiceContext,
  owner: UserRow,
  page: { offset: number; limit: number },
) {
  return listPrincipals(ctx.db, owner.id, page);
}

/** Removes a principal: 404 unknown (or not a principal), 403 someone else's unless site admin. */
export async function deletePrincipal(ctx: ServiceContext, doer: UserRow, id: number): Promise<void> {
  const row = Number.isSafeInteger(id) ? await findPublicKeyById(ctx.db, id) : undefined;
  if (!row || row.type !== KeyType.Principal) throw new NotFound();
  if (row.owner_id !== doer.id && !doer.is_admin)
    throw new Forbidden('You do not have access to this principal');
  await deletePublicKey(ctx.db, row.id);
}
