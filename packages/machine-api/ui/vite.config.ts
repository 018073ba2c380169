/**
 * Builds the dashboard into ../dist/ui, which the service serves at /ui/ (src/server/ui.ts). Preact's JSX
 * is compiled by Vite's own transformer; no plugin is needed for hooks and signals.
 */

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  // Everything the page needs is in the bundle: no CDN, no fonts from elsewhere, nothing at run time.
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The service sends index.html with a policy that allows only its own scripts; no inline module preload.
    modulePreload: { polyfill: false },
  },
});
