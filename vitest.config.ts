import { defineConfig } from 'vitest/config';

/**
 * The black-box suites of the routes and the record path, run a second time in production mode:
 * each app a `serve` and a `worker` on a fresh Postgres database and a librdkafka broker
 * (test/helpers/app.ts). Files that choose their setup themselves are not repeated.
 */
const BOTH_MODES = [
  'test/integration/api/**/*.test.ts', 'test/integration/modules/**/*.test.ts', 'test/integration/pipeline/**/*.test.ts', 'test/integration/engine/**/*.test.ts',
];
const OWN_SETUP = [
  'test/integration/api/fuzz.test.ts', 'test/integration/modules/drains/audit-atomicity.test.ts', 'test/integration/engine/drain-changes.test.ts',
  // The family store suites: they open the stores they test themselves, whatever the mode.
  'test/integration/modules/channels/receipt-events-upgrade.test.ts', 'test/integration/modules/skills/search-plan.test.ts',
  'test/integration/modules/telephony/dispatch-ledger.test.ts', 'test/integration/modules/telephony/voice-dispatch.test.ts',
  'test/integration/modules/templates/deploy-repository.test.ts', 'test/integration/modules/templates/install-service.test.ts',
  'test/integration/modules/templates/ports.test.ts', 'test/integration/modules/templates/service.test.ts',
  'test/integration/modules/workflows/event-log-upgrade.test.ts',
];

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
    // The gate of `npm test` (`vitest run --coverage`); a targeted run leaves coverage off unless asked.
    // Only src/ is measured: tests, benchmarks and the built dist/ that child processes run are not the
    // code under test (a spawned `dist/cli.js` is not instrumented, so what it runs counts for nothing).
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text', 'json-summary'],
      reportsDirectory: 'coverage',
      // The table is printed when a test fails too: what the failure cost in coverage is worth seeing.
      reportOnFailure: true,
      // What the whole suite reaches, each total rounded down to a whole percent less one (a run's
      // timing-dependent paths move the totals by a fraction), so that a change which drops coverage
      // below it fails `npm test`. After a full `npm test`, `node scripts/coverage-thresholds.mjs`
      // prints these from coverage/coverage-summary.json.
      thresholds: { statements: 91, branches: 85, functions: 93, lines: 94 },
    },
    projects: [
      { extends: true, test: { name: 'embedded', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'kafka-postgres', include: BOTH_MODES, exclude: OWN_SETUP, env: { LOGDRAIN_TEST_MODE: 'kafka-postgres' } },
      },
    ],
  },
});
