/** Every command's flags as an operator types them: dist/cli.js as a real child process. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI, spawnLogdrain } from '../../helpers/processes.js';
import { freePort } from '../../helpers/poller.js';

const COMMANDS = ['start', 'serve', 'worker', 'seed', 'migrate', 'produce', 'receiver'];
// A store no command may reach: a command that ran instead of printing its help fails on it.
const UNREACHABLE = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', KAFKA_BROKERS: '127.0.0.1:1' };

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('logdrain command line', () => {
  it.each(COMMANDS)('%s --help prints its options and runs nothing', (command) => {
    const r = cli([command, '--help'], UNREACHABLE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`usage: logdrain ${command}`);
    expect(r.stdout).toContain('--help');
    expect(r.stderr).toBe('');
  });

  it('lists every command with --help, and help COMMAND prints that command\'s help', () => {
    const all = cli(['--help']);
    expect(all.code).toBe(0);
    for (const c of COMMANDS) expect(all.stdout).toContain(`  ${c} `);
    const one = cli(['help', 'receiver']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('--secret whsec_...');
  });

  it('refuses an unknown flag with the flags the command knows, exit 2', () => {
    for (const [command, known] of [['serve', '--port'], ['produce', '--count'], ['receiver', '--secret'], ['migrate', '--database-url']] as const) {
      const r = cli([command, '--bogus'], UNREACHABLE);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`logdrain ${command}: Unknown option '--bogus'`);
      expect(r.stderr).toContain(`known options: --help, `);
      expect(r.stderr).toContain(known);
    }
  });

  it('refuses an unknown command, a missing FILE and a stray argument, exit 2', () => {
    expect(cli(['launch']).code).toBe(2);
    expect(cli(['launch']).stderr).toContain('unknown command: launch');
    expect(cli([]).code).toBe(2);
    const seed = cli(['seed'], UNREACHABLE);
    expect(seed.code).toBe(2);
    expect(seed.stderr).toContain('FILE is required');
    const stray = cli(['migrate', 'now'], UNREACHABLE);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/unexpected argument '?"?now/i);
  });

  it('--version prints the package version and the commit it was built from', () => {
    const r = cli(['--version']);
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    const built = JSON.parse(readFileSync(new URL('../../../dist/build-info.json', import.meta.url), 'utf8')) as { commit: string };
    expect(r.stdout.trim()).toBe(`logdrain ${version} (commit ${built.commit})`);
    expect(built.commit).toMatch(/^([0-9a-f]{7,40}|unknown)$/);
  });

  it('serve --port listens on the flag\'s port, not on PORT (the flag wins)', async () => {
    const [flagPort, envPort] = [await freePort(), await freePort()];
    const p = spawnLogdrain(['serve', '--port', String(flagPort), '--host', '127.0.0.1'], { PORT: String(envPort), DATA_DIR: 'memory://' });
    try {
      const started = await p.waitForEvent('process.started', 60_000);
      expect(started.port).toBe(flagPort);
      expect(started.msg).toContain(`http://127.0.0.1:${flagPort}/readyz`);
      const res = await fetch(`http://127.0.0.1:${flagPort}/healthz`);
      expect(res.status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${envPort}/healthz`)).rejects.toThrow();
    } finally {
      p.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    }
  });
});
