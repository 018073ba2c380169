import { defineConfig } from 'vitest/config';

/** Settings shared with the `forge-postgres` project of the root config. */
export const forgeTestSettings = {
  include: ['test/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    name: 'forge',
    ...forgeTestSettings,
    // Two forge processes on one PostgreSQL database: only the forge-postgres project runs these.
    exclude: ['test/postgres/**', '**/node_modules/**'],
  },
});
