import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/failure-logs.ts'],
    // Generous limits: these are not speed checks (bench/ measures speed), and integration files start
    // brokers, databases and processes that run slowly on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files start brokers, databases and child processes: two at a time fits 2 cores.
    maxWorkers: 2,
    pool: 'forks',
  },
});
