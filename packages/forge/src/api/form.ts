/**
 * Gitea's `ctx.Form*` readers for query strings: values stay strings and are parsed strictly (decimal
 * integers only, Go's ParseBool spellings only); what does not parse reads as Go's zero value, as in Gitea.
 */

type Value = unknown;

/** The first value of a parameter given once or repeated. */
function first(value: Value): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** `FormInt64`: a decimal integer, else 0. */
export function formInt64(value: Value): number {
  const text = first(value);
  return text !== undefined && /^[+-]?\d{1,18}$/.test(text) ? Number(text) : 0;
}

const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** `FormBool`: strconv.ParseBool, false when absent or unparsable. */
export function formBool(value: Value): boolean {
  const text = first(value);
  return text !== undefined && TRUE.includes(text);
}

/** `FormString(x) != "" → FormBool(x)`: undefined when absent or empty. */
export function formOptionalBool(value: Value): boolean | undefined {
  const text = first(value);
  if (text === undefined || text === '') return undefined;
  return TRUE.includes(text);
}

/** Go's ParseBool, undefined unless one of its spellings (Gitea's `FormOptionalBool`). */
export function formParsedBool(value: Value): boolean | undefined {
  const text = first(value);
  if (text !== undefined && TRUE.includes(text)) return true;
  if (text !== undefined && FALSE.includes(text)) return false;
  return undefined;
}

/** `FormString`: the value, '' when absent. */
export function formString(value: Value): string {
  return first(value) ?? '';
}

/** `FormTrim`: the value without surrounding white space. */
export function formTrim(value: Value): string {
  return formString(value).trim();
}
