import { defineConfig } from 'vitest/config';

/**
 * The black-box suites of the routes and the record path, run a second time in production mode:
 * each app a `serve` and a `worker` on a fresh Postgres database and a librdkafka broker
 * (test/helpers/app.ts). Files that choose their setup themselves are not repeated.
 */
const BOTH_MODES = ['test/integration/api/**/*.test.ts', 'test/integration/pipeline/**/*.test.ts', 'test/integration/engine/**/*.test.ts'];
const OWN_SETUP = ['test/integration/api/fuzz.test.ts', 'test/integration/api/drain-audit-atomicity.test.ts', 'test/integration/engine/drain-changes.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/failure-logs.ts'],
    // Generous limits: these are not speed checks (bench/ measures speed), and integration files start
    // brokers, databases and processes that run slowly on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files start brokers, databases and child processes: two at a time fits 2 cores.
    maxWorkers: 2,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'embedded', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'kafka-postgres', include: BOTH_MODES, exclude: OWN_SETUP, env: { LOGDRAIN_TEST_MODE: 'kafka-postgres' } },
      },
    ],
  },
});
