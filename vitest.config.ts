import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration files start brokers, databases and child processes: two at a time fits 2 cores.
    maxWorkers: 2,
    pool: 'forks',
  },
});
