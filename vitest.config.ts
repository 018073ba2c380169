import { defineConfig } from 'vitest/config';

// One run over both services; each package keeps its own settings in its vitest.config.ts.
export default defineConfig({
  test: {
    projects: ['packages/*'],
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
