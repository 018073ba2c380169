/**
 * Text that can be stored and passed on as it is: no NUL characters (PostgreSQL cannot store them, git
 * cannot take them in an argument) and no lone UTF-16 surrogates (no UTF-8 encoding exists). The input
 * guards of the API (api/input-guards.ts) and the credential parsers of auth/ both refuse other text.
 */

// A high surrogate not followed by a low one, or a low one not preceded by a high one (code units).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `text` can be stored and passed on as it is. */
export function isCleanText(text: string): boolean {
  return !text.includes('\0') && !LONE_SURROGATE.test(text);
}
