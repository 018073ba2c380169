import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'machine-api',
    include: ['test/**/*.test.ts'],
    // Several instances on one PostgreSQL database: only the machine-api-postgres project runs these.
    exclude: ['test/postgres/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
