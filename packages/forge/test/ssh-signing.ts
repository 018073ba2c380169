// Test-side client of HTTP signatures: keys and certificates made by the real `ssh-keygen`, requests
// signed with node:crypto (independently of the sshpk code path the server verifies with).
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sshpk from 'sshpk';

const run = promisify(execFile);

export type KeyKind = 'ed25519' | 'rsa' | 'ecdsa' | 'ecdsa384';

export interface TestKey {
  path: string;
  /** The `.pub` line, as a user pastes it into `POST /user/keys`. */
  publicLine: string;
  /** `SHA256:…` as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  privateKey: KeyObject;
  kind: KeyKind;
}

async function sshKeygen(args: string[]): Promise<void> {
  try {
    await run('ssh-keygen', args);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('ssh-keygen is missing: apt-get install -y openssh-client');
    }
    throw error;
  }
}

let counter = 0;

/** Generates a key pair with `ssh-keygen` in `dir`. */
export async function generateKey(dir: string, kind: KeyKind): Promise<TestKey> {
  counter += 1;
  const path = join(dir, `key-${kind}-${counter}`);
  const typeArgs = {
    ed25519: ['-t', 'ed25519'],
    rsa: ['-t', 'rsa', '-b', '2048'],
    ecdsa: ['-t', 'ecdsa', '-b', '256'],
    ecdsa384: ['-t', 'ecdsa', '-b', '384'],
  }[kind];
  await sshKeygen([...typeArgs, '-q', '-N', '', '-C', `test-${counter}`, '-f', path]);
  const publicLine = (await readFile(`${path}.pub`, 'utf8')).trim();
  const { stdout } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${path}.pub`]);
  const fingerprint = stdout.split(' ')[1]!;
  return { path, publicLine, fingerprint, privateKey: toKeyObject(await readFile(path)), kind };
}

/** Loads an OpenSSH private key into node:crypto (ed25519 through JWK: OpenSSL refuses sshpk's PKCS#8). */
function toKeyObject(openssh: Buffer): KeyObject {
  const key = sshpk.parsePrivateKey(openssh, 'ssh');
  if (key.type !== 'ed25519') return createPrivateKey(key.toBuffer('pkcs8'));
  const part = (name: string) =>
    key.parts.find((candidate) => candidate.name === name)!.data.toString('base64url');
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: part('k'), x: part('A') }, format: 'jwk' });
}

export interface CertificateOptions {
  principals: string[];
  /** `ssh-keygen -V` validity interval. */
  validity?: string;
  /** Extra `ssh-keygen` arguments, e.g. `['-h']` for a host certificate or `['-O', 'force-command=ls']`. */
  extraArgs?: string[];
}

/** Signs `key` with the CA key via `ssh-keygen -s`; returns the base64 blob for `X-Ssh-Certificate`. */
export async function issueCertificate(
  ca: TestKey,
  key: TestKey,
  options: CertificateOptions,
): Promise<string> {
  const principalArgs = options.principals.length > 0 ? ['-n', options.principals.join(',')] : [];
  await sshKeygen([
    '-q',
    '-s',
    ca.path,
    '-I',
    `cert-${counter}`,
    ...principalArgs,
    '-V',
    options.validity ?? '-5m:+1h',
    ...(options.extraArgs ?? []),
    `${key.path}.pub`,
  ]);
  const line = await readFile(`${key.path}-cert.pub`, 'utf8');
  return line.split(' ')[1]!;
}

export interface SignOptions {
  method: string;
  /** Path and query, exactly as sent. */
  target: string;
  /** Lower-case header names → values sent with the request. */
  headers: Record<string, string>;
  key: TestKey;
  keyId: string;
  /** Value of the algorithm parameter; omitted when null. */
  algorithm: string | null;
  /** Hash to sign with (ignored for ed25519). */
  hash?: 'sha1' | 'sha256' | 'sha384' | 'sha512';
  signed: string[];
  created?: number;
  expires?: number;
}

/** Builds the `Signature` header value for a request. */
export function signatureHeader(options: SignOptions): string {
  const lines = options.signed.map((name) => {
    if (name === '(request-target)') return `${name}: ${options.method.toLowerCase()} ${options.target}`;
    if (name === '(created)') return `${name}: ${options.created}`;
    if (name === '(expires)') return `${name}: ${options.expires}`;
    if (name === '(algorithm)') return `${name}: ${options.algorithm}`;
    const value = options.headers[name];
    if (value === undefined) throw new Error(`test bug: header ${name} is signed but not sent`);
    return `${name}: ${value}`;
  });
  const data = Buffer.from(lines.join('\n'));
  const hash = options.key.kind === 'ed25519' ? null : (options.hash ?? defaultHash(options.key.kind));
  const signature = sign(hash, data, options.key.privateKey).toString('base64');
  const params = [`keyId="${options.keyId}"`];
  if (options.algorithm !== null) params.push(`algorithm="${options.algorithm}"`);
  if (options.created !== undefined) params.push(`created=${options.created}`);
  if (options.expires !== undefined) params.push(`expires=${options.expires}`);
  params.push(`headers="${options.signed.join(' ')}"`, `signature="${signature}"`);
  return params.join(',');
}

function defaultHash(kind: KeyKind): 'sha256' | 'sha384' | 'sha512' {
  if (kind === 'ecdsa') return 'sha256';
  if (kind === 'ecdsa384') return 'sha384';
  return 'sha512';
}

/** `Digest` header value for a body. */
export function digestHeader(body: string | Buffer, algorithm: 'SHA-256' | 'SHA-512' = 'SHA-512'): string {
  const hash = algorithm === 'SHA-256' ? 'sha256' : 'sha512';
  return `${algorithm}=${createHash(hash).update(body).digest('base64')}`;
}

/** Current time in unix seconds. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
