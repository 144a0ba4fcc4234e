import { defineConfig } from 'vitest/config';

/**
 * The suites run a second time in production mode: each app a `serve` and a `worker` on a fresh
 * Postgres database and a librdkafka broker (test/helpers/app.ts). Only the suites whose point
 * needs that are repeated: the record path (pipeline, engine), deliveries to a receiver, what the
 * real store does differently (text it cannot hold, rate budgets shared by two APIs, the
 * tenancy counter, executors and senders sharing one store), and one smoke suite per family.
 * The other route suites check HTTP answers only, which the store under them does not change:
 * they run in `embedded` alone. Files that choose their setup themselves are not repeated.
 */
const BOTH_MODES = [
  'test/integration/pipeline/**/*.test.ts', 'test/integration/engine/**/*.test.ts',
  ...['aborted-body', 'health-page', 'hostile-input', 'hostile-strings', 'injection', 'isolation', 'rate-limits', 'secrets', 'tenancy-cache']
    .map((f) => `test/integration/api/${f}.test.ts`),
  ...[
    'channels/email', 'drains/admin', 'drains/drains', 'drains/error-hints', 'ingest/aborted-body', 'ingest/isolation', 'logs/reads', 'persona/versions', 'skills/search',
    'telephony/voice', 'templates/deploy', 'workflows/executor', 'workflows/notifications',
  ].map((f) => `test/integration/modules/${f}.test.ts`),
];
const OWN_SETUP = ['test/integration/engine/drain-changes.test.ts'];

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
    // vitest's own report, then the time each project took (test/helpers/project-times.ts).
    reporters: ['default', './test/helpers/project-times.ts'],
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
