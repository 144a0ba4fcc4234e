/** logdrain as a real child process (dist/cli.js), with its JSON log lines readable by event. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface LogdrainProcess {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string[];
  /** The first line of `event` (that `match` accepts, when given), already logged or still to come. */
  waitForEvent(event: string, timeoutMs?: number, match?: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnLogdrain(args: string[], env: Record<string, string>, nodeArgs: string[] = []): LogdrainProcess {
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const listeners = new Set<(l: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      const l = JSON.parse(text) as Record<string, unknown>;
      lines.push(l);
      for (const fn of listeners) fn(l);
    } catch {
      stderr.push(text);
    }
  });
  createInterface({ input: child.stderr! }).on('line', (text) => stderr.push(text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    stderr,
    exited,
    kill: (signal) => void child.kill(signal),
    waitForEvent(event, timeoutMs = 30_000, match = () => true) {
      const seen = lines.find((l) => l.event === event && match(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(fn);
          reject(new Error(`no ${event} within ${timeoutMs} ms; stderr: ${stderr.slice(-5).join(' | ')}`));
        }, timeoutMs);
        const fn = (l: Record<string, unknown>) => {
          if (l.event !== event || !match(l)) return;
          clearTimeout(timer);
          listeners.delete(fn);
          resolve(l);
        };
        listeners.add(fn);
        void exited.then(({ code }) => {
          if (!listeners.has(fn)) return;
          clearTimeout(timer);
          listeners.delete(fn);
          reject(new Error(`process exited (${code}) before ${event}; stderr: ${stderr.slice(-5).join(' | ')}`));
        });
      });
    },
  };
}
