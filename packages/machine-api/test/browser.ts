/**
 * The dashboard tests' browser helpers: chromium (test-support/chromium.ts) once the dashboard is built,
 * screenshots under test-results/<file>/ in this package, and axe-core's accessibility checks.
 */

import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium as launch } from '../../../test-support/chromium.js';
import { DASHBOARD_DIR } from '../src/server/dashboard.js';

/** Chromium (test-support/chromium.ts); fails naming the build when the dashboard is not built. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(join(DASHBOARD_DIR, 'index.html'))) {
    throw new Error(
      `the dashboard is not built (no ${DASHBOARD_DIR}index.html): run \`npm run build\` first`,
    );
  }
  return launch('the dashboard tests');
}

const require = createRequire(import.meta.url);

/** The output folder of one test file: test-results/<file name without .test.ts>/. */
export function outputFolder(testFileUrl: string): string {
  const name = basename(fileURLToPath(testFileUrl)).replace(/\.test\.ts$/, '');
  return fileURLToPath(new URL(`../test-results/${name}/`, import.meta.url));
}

/** Saves a full-page screenshot as <folder>/<name>.png and returns its path. */
export async function screenshot(page: Page, folder: string, name: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const path = join(folder, `${name.replace(/[^a-z0-9-]+/gi, '-').toLowerCase()}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core's WCAG 2.1 A/AA rules (labels, names, contrast, landmarks, …) on the page as it is and
 * returns the violations as one line each. axe is evaluated through the DevTools protocol, which the page's
 * script policy does not govern, so the page under test stays exactly as served.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const source = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const violations = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
       .then((result) => result.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  return violations.map(
    (violation) =>
      `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
  );
}
