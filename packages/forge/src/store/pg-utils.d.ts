// Types for the one function of pg's lib/utils module (not in pg's type declarations) the store uses.
declare module 'pg/lib/utils.js' {
  /** pg's mapping of a JavaScript value to a text Bind parameter (null stays null). */
  export function prepareValue(value: unknown): unknown;
  const utils: { prepareValue: typeof prepareValue };
  export default utils;
}
