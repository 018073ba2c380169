/** The real browser for the OAuth2 sign-in and consent pages (see test-support/chromium.ts). */

import type { Browser } from 'playwright-core';
import { launchChromium as launch } from '../../../test-support/chromium.js';

export function launchChromium(): Promise<Browser> {
  return launch('the OAuth2 browser tests');
}
