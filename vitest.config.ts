import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// The forge suite runs a second time against PostgreSQL when a server is given (CI sets it): each forge
// under test then gets a database of its own there (packages/forge/test/test-database.ts).
const forgeOnPostgres: TestProjectInlineConfiguration = {
  extends: './packages/forge/vitest.config.ts',
  root: './packages/forge',
  test: { name: 'forge-postgres', env: { FORGE_TEST_STORE: 'postgres' } },
};

// One run over both services; each package keeps its own settings in its vitest.config.ts.
export default defineConfig({
  test: {
    projects: ['packages/*', ...(process.env.FORGE_TEST_DATABASE_URL ? [forgeOnPostgres] : [])],
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
