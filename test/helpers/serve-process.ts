/**
 * An API process of its own (`run('serve')` from the sources, through tsx): for suites whose point
 * is a second process on the same Postgres database, whose in-process counters are not the test's.
 * argv[2] is the JSON of its environment; it prints `{"port":N}` once serving and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export interface ServeProcess {
  base: string;
  stop(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);

/** Starts the process and resolves once it serves. */
export function startServeProcess(env: Record<string, string>): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF, JSON.stringify(env)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the API process exited ${code} before serving: ${stderr.slice(-2000)}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const port = (JSON.parse(line) as { port?: number }).port;
      if (port === undefined) return;
      resolve({
        base: `http://127.0.0.1:${port}`,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

if (process.argv[1] === SELF) {
  const { run } = await import('../../src/commands/run.js');
  const { loadConfig } = await import('../../src/config/config.js');
  const { silentLogger } = await import('../../src/telemetry/logger.js');
  const running = await run('serve', loadConfig(JSON.parse(process.argv[2]!) as Record<string, string>), silentLogger());
  process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);
  process.once('SIGTERM', () => {
    void running.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
