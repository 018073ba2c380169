/**
 * The API key of this browser session. With `auth = "keys"` every call carries it as `X-Api-Key`; it is
 * kept in sessionStorage only (gone when the tab closes), never in localStorage or a cookie.
 */

import { signal } from '@preact/signals';

const STORAGE_KEY = 'machine-api.api-key';

function stored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The key in use, or null when none was given (the service may not need one). */
export const apiKey = signal<string | null>(stored());
/** True once the service answered 401: the page shows the key form instead of its content. */
export const keyNeeded = signal(false);

/** Uses `key` for every call from now on, for this tab only. */
export function rememberKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
  apiKey.value = key;
  keyNeeded.value = false;
}

/** Forgets the key (sign out). */
export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  apiKey.value = null;
}

/** Called on a 401: the key is missing or no longer valid. */
export function keyRefused(): void {
  keyNeeded.value = true;
}
