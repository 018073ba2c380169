import sshpk from 'sshpk';

/** Why a key, certificate or signature was not accepted; the message is safe to show the caller. */
export class SignatureRejected extends Error {
  override name = 'SignatureRejected';
}

// OpenSSH certificate types sshpk can read. The header carries the bare blob, while sshpk reads the
// `<type> <base64>` line form and checks the type against the blob, so the type is found by trying these.
const CERTIFICATE_TYPES = [
  'ssh-ed25519-cert-v01@openssh.com',
  'ssh-rsa-cert-v01@openssh.com',
  'ecdsa-sha2-nistp256-cert-v01@openssh.com',
  'ecdsa-sha2-nistp384-cert-v01@openssh.com',
  'ecdsa-sha2-nistp521-cert-v01@openssh.com',
];

const ED25519_KEY_LENGTH = 32;

/**
 * Returns the key with a 32-byte ed25519 point. sshpk reads the ed25519 point of a certificate as an
 * SSH mpint, so it gains a 0x00 byte when the first byte has its high bit set and loses leading zero
 * bytes; verifying with such a key fails for about half of all certificates.
 */
export function normalizeKey(key: sshpk.Key): sshpk.Key {
  if (key.type !== 'ed25519') return key;
  let point = key.parts.find((part) => part.name === 'A')?.data;
  if (point === undefined) throw new SignatureRejected('malformed ed25519 key');
  if (point.length === ED25519_KEY_LENGTH) return key;
  while (point.length > ED25519_KEY_LENGTH && point[0] === 0) point = point.subarray(1);
  if (point.length > ED25519_KEY_LENGTH) throw new SignatureRejected('malformed ed25519 key');
  const padded = Buffer.alloc(ED25519_KEY_LENGTH);
  point.copy(padded, ED25519_KEY_LENGTH - point.length);
  return new sshpk.Key({ type: 'ed25519', parts: [{ name: 'A', data: padded }] });
}

/** Parses an `authorized_keys` style public key line (`type base64 [comment]`). */
export function parsePublicKeyLine(line: string): sshpk.Key {
  return normalizeKey(sshpk.parseKey(line.trim(), 'ssh'));
}

/** OpenSSH SHA256 fingerprint (`SHA256:` + unpadded base64), as `ssh-keygen -lf` prints it. */
export function keyFingerprint(key: sshpk.Key): string {
  return key.fingerprint('sha256').toString();
}

/** Parses the `X-Ssh-Certificate` header: base64 (padded or not) of an OpenSSH certificate blob. */
export function parseCertificateHeader(value: string): sshpk.Certificate {
  const blob = Buffer.from(value.trim(), 'base64');
  if (blob.length === 0) throw new SignatureRejected('X-Ssh-Certificate is not a base64 certificate');
  const text = blob.toString('base64');
  for (const type of CERTIFICATE_TYPES) {
    try {
      return sshpk.parseCertificate(`${type} ${text}`, 'openssh');
    } catch {
      // Not this type (or not a certificate at all): try the next one.
    }
  }
  throw new SignatureRejected('X-Ssh-Certificate is not a supported OpenSSH certificate');
}

/**
 * Checks that a certificate is a user certificate signed by one of the trusted CAs and valid at `now`,
 * and returns its normalized public key and principals. Certificates with critical options are refused,
 * because none of them (force-command, source-address, …) can be honoured by an HTTP API.
 */
export function checkUserCertificate(
  certificate: sshpk.Certificate,
  trustedCas: readonly sshpk.Key[],
  now: Date,
): { key: sshpk.Key; principals: string[] } {
  if (!trustedCas.some((ca) => certificate.isSignedByKey(ca))) {
    throw new SignatureRejected('certificate is not signed by a trusted user CA');
  }
  if (certificate.subjects.some((subject) => subject.type !== 'user')) {
    throw new SignatureRejected('certificate is not a user certificate');
  }
  if (now < certificate.validFrom) throw new SignatureRejected('certificate is not yet valid');
  if (now > certificate.validUntil) throw new SignatureRejected('certificate has expired');
  const options = certificate.signatures.openssh?.exts ?? [];
  const critical = options.filter((option) => option.critical).map((option) => option.name);
  if (critical.length > 0) {
    throw new SignatureRejected(`certificate has unsupported critical options: ${critical.join(', ')}`);
  }
  // sshpk reports a certificate without principals as the wildcard `*`; OpenSSH would accept it for
  // any account, which is never right for an HTTP user, so `*` matches no one.
  const principals = certificate.subjects
    .map((subject) => subject.uid)
    .filter((name): name is string => typeof name === 'string' && name !== '*');
  return { key: normalizeKey(certificate.subjectKey), principals };
}
