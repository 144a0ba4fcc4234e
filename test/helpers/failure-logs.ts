/**
 * When a test fails, print the last event lines of the in-process apps of its
 * file (test/helpers/app.ts keeps them): a timing failure on a loaded CI
 * machine is then diagnosable from the CI output alone.
 */
import { afterEach } from 'vitest';
import { recentAppLogs } from './app.js';

afterEach((ctx) => {
  if (ctx.task.result?.state !== 'fail') return;
  const lines = recentAppLogs().slice(-120);
  if (lines.length === 0) return;
  console.log(`--- last ${lines.length} app event lines before "${ctx.task.name}" failed ---\n${lines.join('\n')}\n--- end ---`);
});
