// Types for the part of http-signature (no published typings) the verifier uses.
declare module 'http-signature' {
  import type { IncomingHttpHeaders } from 'node:http';

  /** The request fields the parser reads. */
  export interface ParseableRequest {
    method: string;
    url: string;
    httpVersion: string;
    headers: IncomingHttpHeaders;
  }

  export interface ParseOptions {
    /** Allowed clock skew in seconds for Date/X-Date, (created) and (expires). */
    clockSkew?: number;
    /** Headers that must be signed. */
    headers?: string[];
    /** Header read for the signature parameters. */
    authorizationHeaderName?: string;
    strict?: boolean;
  }

  export interface ParsedSignature {
    scheme: string;
    params: {
      keyId: string;
      algorithm: string;
      headers: string[];
      signature: string;
      created?: number;
      expires?: number;
    };
    signingString: string;
    algorithm: string;
    keyId: string;
  }

  /** Parses and validates the signature parameters; throws an HttpSignatureError subclass on bad input. */
  export function parseRequest(request: ParseableRequest, options?: ParseOptions): ParsedSignature;

  const httpSignature: { parseRequest: typeof parseRequest };
  export default httpSignature;
}
