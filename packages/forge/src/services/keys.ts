import sshpk from 'sshpk';
import { Forbidden, Invalid, NotFound } from '../errors.js';
import {
  deletePublicKey,
  findKeyByOwnerAndName,
  findKeysByFingerprint,
  findPublicKeyById,
  insertPublicKey,
  listPublicKeys,
} from '../store/keys.js';
import { AccessMode, KeyType, type PublicKeyRow, type UserRow } from '../store/schema.js';
import { nowUnix, type ServiceContext } from './context.js';

/** Parses an OpenSSH public key line into its stored form (`type base64`, no comment) and SHA256 fingerprint. */
export function parseSshPublicKey(text: string): { content: string; fingerprint: string } {
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(text.trim(), 'ssh');
  } catch (error) {
    throw new Invalid(`Invalid key content: ${(error as Error).message}`);
  }
  const [type, body] = key.toString('ssh').split(' ');
  return { content: `${type} ${body}`, fingerprint: key.fingerprint('sha256').toString() };
}

/** `POST /user/keys`: registers an SSH public key for `owner`. */
export async function addUserKey(
  ctx: ServiceContext,
  owner: UserRow,
  input: { title: string; key: string; read_only?: boolean },
): Promise<PublicKeyRow> {
  const parsed = parseSshPublicKey(input.key);
  if ((await findKeysByFingerprint(ctx.db, parsed.fingerprint, KeyType.User)).length > 0) {
    throw new Invalid('Key content has been used as non-deploy key');
  }
  if (await findKeyByOwnerAndName(ctx.db, owner.id, input.title))
    throw new Invalid('Key title has been used');
  const now = nowUnix();
  return insertPublicKey(ctx.db, {
    owner_id: owner.id,
    name: input.title,
    fingerprint: parsed.fingerprint,
    content: parsed.content,
    mode: input.read_only ? AccessMode.Read : AccessMode.Write,
    type: KeyType.User,
    created_unix: now,
    updated_unix: now,
  });
}

/** One page of a user's keys, optionally only the one with `fingerprint`. */
export function listUserKeys(
  ctx: ServiceContext,
  owner: UserRow,
  page: { offset: number; limit: number },
  fingerprint?: string,
) {
  return listPublicKeys(ctx.db, owner.id, page, fingerprint);
}

/** A key by id (any owner), or 404. */
export async function getKey(ctx: ServiceContext, id: number): Promise<PublicKeyRow> {
  const key = Number.isSafeInteger(id) ? await findPublicKeyById(ctx.db, id) : undefined;
  if (!key) throw new NotFound();
  return key;
}

/** `DELETE /user/keys/{id}`: 404 unknown, 403 someone else's key. */
export async function deleteUserKey(ctx: ServiceContext, doer: UserRow, id: number): Promise<void> {
  const key = await getKey(ctx, id);
  if (key.owner_id !== doer.id && !doer.is_admin) throw new Forbidden('You do not have access to this key');
  await deletePublicKey(ctx.db, key.id);
}
