import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import httpSignature, { type ParsedSignature } from 'http-signature';
import type sshpk from 'sshpk';
import {
  checkUserCertificate,
  keyFingerprint,
  parseCertificateHeader,
  parsePublicKeyLine,
  SignatureRejected,
} from './httpsig-certificate.js';

export { SignatureRejected } from './httpsig-certificate.js';

/**
 * HTTP-signature authentication (draft-cavage "Signing HTTP Messages"), as Gitea's `HTTPSign` method:
 * a request with a `Signature` header authenticates as the owner of the registered SSH key whose
 * SHA256 fingerprint is the `keyId`, or, with `X-Ssh-Certificate`, as the user who registered one of
 * the principals of an SSH certificate issued by a trusted user CA.
 *
 * Stricter than Gitea, on purpose: the signature must cover `(request-target)` and one of `(created)`,
 * `date` or `x-date` (so it cannot be replayed on another route or forever), a request with a body must
 * sign `digest`, and certificate mode must sign `x-ssh-certificate`. ECDSA keys are accepted too.
 * A request whose signature does not verify is answered 401 by the caller (see `SignatureRejected`),
 * where Gitea silently continues anonymously: a client that meant to sign gets the reason instead of a
 * confusing 404.
 */

/** Allowed difference between our clock and the signer's, for `Date`, `(created)` and `(expires)`. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 300;

/** The store lookups the verifier needs, injected so the verifier has no database of its own. */
export interface SignatureKeyLookup {
  /** The registered user key with this OpenSSH SHA256 fingerprint. */
  keyByFingerprint(fingerprint: string): Promise<{ ownerId: number; content: string } | undefined>;
  /** The id of the user who registered this principal (exact match), if any. */
  principalOwner(principal: string): Promise<number | undefined>;
}

export interface SignatureVerifierOptions {
  /** Certificate authorities trusted to issue user certificates; empty disables certificate mode. */
  trustedUserCaKeys: readonly sshpk.Key[];
  clockSkewSeconds?: number;
}

/** The parts of an incoming request that are signed. */
export interface SignableRequest {
  method: string;
  /** Path and query exactly as sent (the `(request-target)`). */
  url: string;
  httpVersion: string;
  headers: IncomingHttpHeaders;
}

export interface VerifiedSignature {
  userId: number;
  mode: 'key' | 'certificate';
  /** The `Digest` header to check against the body, when the request carries one. */
  digest: string | undefined;
}

// Placeholder handed to the http-signature parser in place of the declared algorithm: the parser only
// knows `<keytype>-<hash>` names, not `hs2019` or `ed25519`; the real algorithm is resolved here.
const PARSER_ALGORITHM = 'rsa-sha256';
const ALGORITHM_PARAM = /(^|,)\s*algorithm="([^"]*)"/i;

type Hash = 'sha1' | 'sha256' | 'sha384' | 'sha512';

/**
 * Verifies the signature of a request. Returns null when the request carries no `Signature` header,
 * the verified user otherwise; throws `SignatureRejected` with the reason when it does not verify.
 */
export async function verifyHttpSignature(
  request: SignableRequest,
  lookup: SignatureKeyLookup,
  options: SignatureVerifierOptions,
): Promise<VerifiedSignature | null> {
  const header = singleHeader(request.headers, 'signature');
  if (header === undefined) return null;
  const now = Date.now();
  const skew = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;

  const declared = ALGORITHM_PARAM.exec(header)?.[2]?.toLowerCase();
  const parsed = parseSignatureHeader(request, header, declared, skew);
  const signed = new Set<string>(parsed.params.headers);
  requireFreshness(parsed, signed, now, skew);
  if (!signed.has('(request-target)')) throw new SignatureRejected('signature must cover (request-target)');
  if (hasBody(request.headers) && !signed.has('digest')) {
    throw new SignatureRejected('signature of a request with a body must cover digest');
  }
  const digest = singleHeader(request.headers, 'digest');

  const certificateHeader = singleHeader(request.headers, 'x-ssh-certificate');
  if (certificateHeader !== undefined) {
    if (options.trustedUserCaKeys.length === 0) {
      throw new SignatureRejected('certificate authentication is not enabled on this server');
    }
    if (!signed.has('x-ssh-certificate')) {
      throw new SignatureRejected('signature must cover x-ssh-certificate');
    }
    const certificate = parseCertificateHeader(certificateHeader);
    const { key, principals } = checkUserCertificate(certificate, options.trustedUserCaKeys, new Date(now));
    verifyWithKey(parsed, key, declared);
    for (const principal of principals) {
      const userId = await lookup.principalOwner(principal);
      if (userId !== undefined) return { userId, mode: 'certificate', digest };
    }
    throw new SignatureRejected('no principal of the certificate is registered');
  }

  const registered = await lookup.keyByFingerprint(parsed.params.keyId);
  if (!registered) throw new SignatureRejected('keyId is not the fingerprint of a registered key');
  const key = parsePublicKeyLine(registered.content);
  // The stored fingerprint indexes the key; the key itself must agree, whatever the store holds.
  if (keyFingerprint(key) !== parsed.params.keyId) {
    throw new SignatureRejected('keyId is not the fingerprint of a registered key');
  }
  verifyWithKey(parsed, key, declared);
  return { userId: registered.ownerId, mode: 'key', digest };
}

/** Parses the `Signature` header with http-signature, standing in for algorithms its parser lacks. */
function parseSignatureHeader(
  request: SignableRequest,
  header: string,
  declared: string | undefined,
  skew: number,
): ParsedSignature {
  const substituted =
    declared === undefined
      ? `${header},algorithm="${PARSER_ALGORITHM}"`
      : header.replace(ALGORITHM_PARAM, `$1algorithm="${PARSER_ALGORITHM}"`);
  let parsed: ParsedSignature;
  try {
    parsed = httpSignature.parseRequest(
      {
        method: request.method,
        url: request.url,
        httpVersion: request.httpVersion,
        headers: { ...request.headers, signature: substituted },
      },
      { clockSkew: skew, headers: [], authorizationHeaderName: 'signature' },
    );
  } catch (error) {
    throw new SignatureRejected(
      `invalid Signature header: ${error instanceof Error ? error.message : error}`,
    );
  }
  // `(algorithm)` is signed as declared, not as the stand-in.
  if (parsed.params.headers.includes('(algorithm)')) {
    if (declared === undefined)
      throw new SignatureRejected('(algorithm) is signed but no algorithm is given');
    parsed.signingString = parsed.signingString
      .split('\n')
      .map((line) => (line === `(algorithm): ${PARSER_ALGORITHM}` ? `(algorithm): ${declared}` : line))
      .join('\n');
  }
  return parsed;
}

/**
 * Tolerance for the signer's clock in `created` and `expires`. Small on purpose: `expires` is the
 * signer's own statement of how long the signature is good for, so it is honoured almost exactly, and a
 * `created` in the future is only a clock difference up to this much.
 */
export const SIGNATURE_TIME_SKEW_SECONDS = 30;

/** A `created`/`expires` value: unquoted digits are numbers, quoted ones strings; nothing else counts. */
function timestampParam(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  throw new SignatureRejected(`the ${name} parameter is not a unix timestamp`);
}

/**
 * A signature must say when it was made and is valid only inside its window, whether `created` and
 * `expires` are signed as the `(created)`/`(expires)` pseudo-headers or only sent as parameters:
 * `expires` must not have passed, `created` must not lie in the future (each beyond
 * SIGNATURE_TIME_SKEW_SECONDS), and a signature without `expires` is refused once its creation is older
 * than the clock skew. (http-signature's own checks allow `skew` on both sides, i.e. an expired
 * signature for five more minutes.)
 */
function requireFreshness(parsed: ParsedSignature, signed: Set<string>, now: number, skew: number): void {
  const created = timestampParam(parsed.params.created, 'created');
  const expires = timestampParam(parsed.params.expires, 'expires');
  if (signed.has('(created)') && created === undefined) {
    throw new SignatureRejected('(created) is signed but the created parameter is missing');
  }
  if (signed.has('(expires)') && expires === undefined) {
    throw new SignatureRejected('(expires) is signed but the expires parameter is missing');
  }
  if (!signed.has('(created)') && !signed.has('date') && !signed.has('x-date')) {
    throw new SignatureRejected('signature must cover (created), date or x-date');
  }
  const nowSeconds = Math.floor(now / 1000);
  if (expires !== undefined && expires + SIGNATURE_TIME_SKEW_SECONDS < nowSeconds) {
    throw new SignatureRejected(`signature expired ${nowSeconds - expires}s ago`);
  }
  if (created !== undefined && created - SIGNATURE_TIME_SKEW_SECONDS > nowSeconds) {
    throw new SignatureRejected(`signature created ${created - nowSeconds}s in the future`);
  }
  if (expires !== undefined && created !== undefined && expires < created) {
    throw new SignatureRejected('signature expires before it was created');
  }
  if (expires !== undefined) return;
  if (created !== undefined && nowSeconds - created > skew) {
    throw new SignatureRejected(`signature was created more than ${skew}s ago and has no expiry`);
  }
}

/** Verifies the signing string with the key, trying the hashes the declared algorithm allows. */
function verifyWithKey(parsed: ParsedSignature, key: sshpk.Key, declared: string | undefined): void {
  const hashes = hashesFor(key, declared);
  const verified = hashes.some((hash) => {
    const verifier = key.createVerify(hash);
    verifier.update(parsed.signingString);
    try {
      return verifier.verify(parsed.params.signature, 'base64');
    } catch {
      return false; // A signature of the wrong shape for the key is simply not valid.
    }
  });
  if (!verified) throw new SignatureRejected('signature does not verify');
}

/**
 * The hashes to try for a key and a declared algorithm. `hs2019` (or no algorithm) derives them from
 * the key; for RSA it tries SHA-512, SHA-256 and SHA-1, since Gitea's SDK signs `hs2019` through an
 * SSH signer that produces `ssh-rsa` (SHA-1) signatures.
 */
function hashesFor(key: sshpk.Key, declared: string | undefined): Hash[] {
  if (declared === undefined || declared === 'hs2019') {
    if (key.type === 'ed25519') return ['sha512'];
    if (key.type === 'rsa') return ['sha512', 'sha256', 'sha1'];
    if (key.type === 'ecdsa') return [ecdsaHash(key)];
    throw new SignatureRejected(`keys of type ${key.type} are not supported`);
  }
  const [keyType, hash] = declared === 'ed25519' ? ['ed25519', 'sha512'] : declared.split('-');
  const allowed: Record<string, readonly string[]> = {
    ed25519: ['sha512'],
    rsa: ['sha1', 'sha256', 'sha512'],
    ecdsa: ['sha256', 'sha384', 'sha512'],
  };
  if (keyType === undefined || hash === undefined || !allowed[keyType]?.includes(hash)) {
    throw new SignatureRejected(`algorithm ${declared} is not supported`);
  }
  if (keyType !== key.type)
    throw new SignatureRejected(`algorithm ${declared} does not match the ${key.type} key`);
  return [hash as Hash];
}

function ecdsaHash(key: sshpk.Key): Hash {
  if (key.curve === 'nistp384') return 'sha384';
  if (key.curve === 'nistp521') return 'sha512';
  return 'sha256';
}

function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const DIGEST_HASHES: Record<string, 'sha256' | 'sha512'> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

/**
 * Checks a `Digest` header (RFC 3230: `SHA-256=<base64>, SHA-512=<base64>`) against the body. Every
 * SHA-256/SHA-512 entry must match and at least one must be present; other algorithms are ignored.
 */
export function verifyDigest(header: string, body: Buffer): void {
  let checked = 0;
  for (const entry of header.split(',')) {
    const separator = entry.indexOf('=');
    const hash = DIGEST_HASHES[entry.slice(0, separator).trim().toLowerCase()];
    if (separator < 0 || hash === undefined) continue;
    const expected = Buffer.from(entry.slice(separator + 1).trim(), 'base64');
    const actual = createHash(hash).update(body).digest();
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      throw new SignatureRejected('Digest does not match the request body');
    }
    checked += 1;
  }
  if (checked === 0) throw new SignatureRejected('Digest has no SHA-256 or SHA-512 value');
}
