/**
 * The real browser of both packages' browser tests: Debian's chromium (/usr/bin/chromium) driven by
 * playwright-core, headless, with a fresh temporary profile per launch and no network of its own (no
 * downloads, no background requests). Never a browser downloaded by a test tool.
 */

import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Starts chromium; fails naming `purpose` and the install command when it is missing. */
export async function launchChromium(purpose: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${purpose} drive Debian's chromium at ${CHROMIUM}, which is not installed: ` +
        'apt-get install -y --no-install-recommends chromium',
    );
  }
  // launch() gives every browser a fresh temporary profile (user data dir) and removes it on close.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}
