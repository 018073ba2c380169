import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type sshpk from 'sshpk';
import { isCleanText } from '../clean-text.js';
import { Unauthorized } from '../errors.js';
import type { ServiceContext } from '../services/context.js';
import { findKeysByFingerprint, findPrincipals } from '../store/keys.js';
import { KeyType } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import type { SignatureVerifier } from './context.js';
import { type SignatureKeyLookup, SignatureRejected, verifyDigest, verifyHttpSignature } from './httpsig.js';
import { parsePublicKeyLine } from './httpsig-certificate.js';

/** Parses `[server] ssh_trusted_user_ca_keys`; an unreadable key names its position in the list. */
export function parseTrustedUserCaKeys(lines: readonly string[]): sshpk.Key[] {
  return lines.map((line, index) => {
    try {
      return parsePublicKeyLine(line);
    } catch (error) {
      throw new Error(
        `config: key "server.ssh_trusted_user_ca_keys[${index}]": not an OpenSSH public key (${(error as Error).message})`,
      );
    }
  });
}

/** Digest headers of signature-authenticated requests, checked against the body once it arrives. */
const pendingDigests = new WeakMap<FastifyRequest, string>();

/**
 * The verifier the auth chain calls for requests with a `Signature` header. A signature that does not
 * verify answers 401 with the reason (Gitea would continue anonymously; a client that signs wants to
 * know why it was not recognised, and a silent downgrade turns that into puzzling 404s).
 */
export function createSignatureVerifier(ctx: ServiceContext): SignatureVerifier {
  const trustedUserCaKeys = parseTrustedUserCaKeys(ctx.config.server.sshTrustedUserCaKeys);
  const lookup: SignatureKeyLookup = {
    async keyByFingerprint(fingerprint) {
      if (!isCleanText(fingerprint)) return undefined;
      const [key] = await findKeysByFingerprint(ctx.db, fingerprint, KeyType.User);
      return key && { ownerId: key.owner_id, content: key.content };
    },
    async principalOwner(principal) {
      // Certificate principals are arbitrary bytes; text the database cannot hold names no one.
      if (!isCleanText(principal)) return undefined;
      const [row] = await findPrincipals(ctx.db, principal, KeyType.Principal);
      return row?.owner_id;
    },
  };
  return async (request) => {
    let verified: Awaited<ReturnType<typeof verifyHttpSignature>>;
    try {
      verified = await verifyHttpSignature(request.raw as Parameters<typeof verifyHttpSignature>[0], lookup, {
        trustedUserCaKeys,
      });
    } catch (error) {
      if (error instanceof SignatureRejected)
        throw new Unauthorized(`invalid HTTP signature: ${error.message}`);
      throw error;
    }
    if (!verified) return null;
    const user = await findUserById(ctx.db, verified.userId);
    if (!user) throw new Unauthorized('invalid HTTP signature: the key owner no longer exists');
    if (verified.digest !== undefined) pendingDigests.set(request, verified.digest);
    return user;
  };
}

/**
 * `preParsing` hook: the body of a signed request that carries a `Digest` must match it. The body is
 * read here (within the route's body limit) and handed on to the normal parsers unchanged.
 */
export async function checkSignedBodyDigest(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: NodeJS.ReadableStream,
): Promise<NodeJS.ReadableStream> {
  const digest = pendingDigests.get(request);
  if (digest === undefined) return payload;
  const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) throw Object.assign(new Error('Request body is too large'), { statusCode: 413 });
    chunks.push(buffer);
  }
  const body = Buffer.concat(chunks);
  try {
    verifyDigest(digest, body);
  } catch (error) {
    if (error instanceof SignatureRejected)
      throw new Unauthorized(`invalid HTTP signature: ${error.message}`);
    throw error;
  }
  return Readable.from([body]);
}
