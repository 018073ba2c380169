import { availableParallelism } from 'node:os';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { forgeTestSettings } from './packages/forge/vitest.config.js';

// The forge suite runs a second time against PostgreSQL when a server is given (CI sets it): each forge
// under test then gets a database of its own there (packages/forge/test/test-database.ts), and the
// scale-out tests in packages/forge/test/postgres run too.
const forgeOnPostgres: TestProjectInlineConfiguration = {
  root: './packages/forge',
  test: { name: 'forge-postgres', ...forgeTestSettings, env: { FORGE_TEST_STORE: 'postgres' } },
};

// The machine-api suites that exercise storage (jobs, the queue and bed clearance, keys, events,
// notifications and their outbox, Spoolman assignments and use reports) run a second time on PostgreSQL when a server is given (CI sets it): each
// service under test gets a database of its own (packages/machine-api/test/test-database.ts). Only these
// suites, not the whole package: the rest never reads the database, and a full second run costs CI minutes.
const machineApiOnPostgres: TestProjectInlineConfiguration = {
  root: './packages/machine-api',
  test: {
    name: 'machine-api-postgres',
    include: [
      'test/print.test.ts',
      'test/farm.test.ts',
      'test/access.test.ts',
      'test/events.test.ts',
      'test/notifications.test.ts',
      'test/key-stamp.test.ts',
      'test/spoolman.test.ts',
      'test/postgres/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { MACHINE_API_TEST_STORE: 'postgres' },
  },
};

// The docs' examples and generated endpoint references (test/), checked against the built services.
const docs: TestProjectInlineConfiguration = {
  test: { name: 'docs', root: '.', include: ['test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 },
};

// The forge suites whose answers forge may keep run once more with every response cache switched off
// (FORGE_CACHE=off, config.ts), so the cached and uncached paths cannot drift apart. SQLite only: the
// uncached path is the same code on both stores.
const forgeWithoutCaches: TestProjectInlineConfiguration = {
  root: './packages/forge',
  test: {
    name: 'forge-nocache',
    ...forgeTestSettings,
    include: [
      'test/read-cache.test.ts',
      'test/auth.test.ts',
      'test/users.test.ts',
      'test/releases.test.ts',
      'test/activity-cache.test.ts',
      'test/avatars.test.ts',
      'test/repository-tokens.test.ts',
      'test/repository-token-listings.test.ts',
    ],
    env: { FORGE_CACHE: 'off' },
  },
};

// One run over both services; each package keeps its own settings in its vitest.config.ts.
export default defineConfig({
  test: {
    projects: [
      'packages/*',
      docs,
      forgeWithoutCaches,
      ...(process.env.FORGE_TEST_DATABASE_URL ? [forgeOnPostgres] : []),
      ...(process.env.MACHINE_API_TEST_DATABASE_URL ? [machineApiOnPostgres] : []),
    ],
    reporters: ['default', './scripts/summary-reporter.ts'],
    // Two test files at a time at least: most of a file's time is spent waiting on child processes (the
    // services, slicers, socat, git, chromium) and on the network, so on a 2-core machine two files at once
    // take ~10 min where one at a time (Vitest's default there, cores - 1) took ~25. Every file keeps its
    // own ports, directories and databases, so files never share state.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
