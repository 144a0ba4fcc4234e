/**
 * A new user's first steps with real processes: the embedded store belongs to
 * one process (a second `start` on the same DATA_DIR exits at once, naming
 * the holder, and changes nothing; a second on the same port fails before it
 * opens any store), a stale lock is taken over, and the container image's
 * default command starts as its non-root user, following the Dockerfile's
 * own instructions.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { SEED_FIXTURE, waitFor } from '../../helpers/app.js';
import { LOCK_FILE, lockDataDir } from '../../../src/store/data-dir-lock.js';

const REPO = resolve(new URL('../../..', import.meta.url).pathname);
const scratch = mkdtempSync(join(tmpdir(), 'logdrain-lock-'));
const started: LogdrainProcess[] = [];

afterEach(async () => {
  for (const p of started.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function startOn(dataDir: string, env: Record<string, string> = {}): Promise<{ proc: LogdrainProcess; port: number }> {
  const proc = spawnLogdrain(['start'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SEED_FILE: SEED_FIXTURE, ...env });
  started.push(proc);
  const line = await proc.waitForEvent('process.started', 60_000);
  return { proc, port: Number(line.port) };
}

describe('one process per embedded store', () => {
  it('refuses a second process on the same DATA_DIR at once, naming the directory and the holder, and changes nothing', async () => {
    const dir = join(scratch, 'shared');
    const first = await startOn(dir);
    // A seed with a key the first process does not know: applied, it would let that key in.
    const seed = JSON.parse(readFileSync(SEED_FIXTURE, 'utf8'));
    seed.apiKeys.push({ key: 'lk_second_process', ownerId: seed.users[0].id, orgId: seed.orgs[0].id, scopes: ['logs:manage'], agentGrants: [], status: 'active' });
    const seedFile = join(scratch, 'second-seed.json');
    writeFileSync(seedFile, JSON.stringify(seed));
    const second = spawnLogdrain(['start'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, SEED_FILE: seedFile });
    started.push(second);
    const { code } = await second.exited;
    expect(code).toBe(1);
    const said = second.stderr.join('\n');
    expect(said).toContain(`DATA_DIR ${dir} is in use by process ${first.proc.child.pid}`);
    expect(said).toContain(join(dir, LOCK_FILE));
    expect(second.lines.some((l) => l.event === 'seed.applied' || l.event === 'worker.started')).toBe(false);
    const res = await fetch(`http://127.0.0.1:${first.port}/admin/orgs/${seed.orgs[0].id}/log-drains`, { headers: { authorization: 'Bearer lk_second_process' } });
    expect(res.status).toBe(401);
    // The first process still owns the store and answers.
    expect((await fetch(`http://127.0.0.1:${first.port}/readyz`)).status).toBe(200);
  });

  it('fails on a taken port before opening any store', async () => {
    const first = await startOn('memory://');
    const untouched = join(scratch, 'never-opened');
    const second = spawnLogdrain(['start'], { PORT: String(first.port), HOST: '127.0.0.1', DATA_DIR: untouched, SEED_FILE: SEED_FIXTURE });
    started.push(second);
    expect((await second.exited).code).toBe(1);
    expect(second.stderr.join('\n')).toContain('EADDRINUSE');
    expect(existsSync(untouched)).toBe(false);
  });

  it('takes over the lock of a process that is gone, and releases its own at a graceful stop', async () => {
    const dir = join(scratch, 'stale');
    const crashed = await startOn(dir);
    crashed.proc.kill('SIGKILL');
    await crashed.proc.exited;
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    const next = await startOn(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(next.proc.child.pid);
    next.proc.kill('SIGTERM');
    expect((await next.proc.exited).code).toBe(0);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});

describe('the lock file', () => {
  it('refuses a lock another host touched lately, takes one over that nobody touched for a minute, and refuses a second open in one process', () => {
    const dir = join(scratch, 'other-host');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, JSON.stringify({ pid: 4242, host: 'elsewhere', nonce: 'n1' }));
    expect(() => lockDataDir(dir)).toThrow(/in use by process 4242 on host elsewhere/);
    const aMinuteAgo = new Date(Date.now() - 60_000);
    utimesSync(path, aMinuteAgo, aMinuteAgo);
    const lock = lockDataDir(dir);
    try {
      expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
      expect(() => lockDataDir(dir)).toThrow(/in use by process/);
    } finally {
      lock.release();
    }
    expect(existsSync(path)).toBe(false);
  });
});

/** The final stage of the Dockerfile, instruction by instruction (no line continuations are used there). */
function finalStage(): { instr: string; args: string }[] {
  const lines = readFileSync(join(REPO, 'Dockerfile'), 'utf8').split('\n').filter((l) => /^[A-Z]+ /.test(l));
  const last = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
  return lines.slice(last + 1).map((l) => ({ instr: l.slice(0, l.indexOf(' ')), args: l.slice(l.indexOf(' ') + 1) }));
}

describe('the container image', () => {
  it("starts its default command as its non-root user, on a fresh volume, following the Dockerfile's instructions", async () => {
    const stage = finalStage();
    const one = (instr: string) => stage.filter((s) => s.instr === instr).map((s) => s.args);
    const workdir = one('WORKDIR').at(-1)!;
    const user = one('USER').at(-1)!;
    expect(user).not.toBe('root');
    const env: Record<string, string> = {};
    for (const e of one('ENV')) for (const m of e.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
    const entrypoint = JSON.parse(one('ENTRYPOINT').at(-1)!) as string[];
    const cmd = JSON.parse(one('CMD').at(-1)!) as string[];
    expect(cmd).toEqual(['start']);

    // The image's file system in a scratch root: the app directory as COPY leaves it (root's), the
    // project's build inside it, and what the RUN instructions make, run as written with the
    // image's paths under the scratch root and the image's user mapped to this machine's nobody.
    const root = mkdtempSync(join(tmpdir(), 'logdrain-image-'));
    try {
      const inRoot = (p: string) => join(root, p);
      mkdirSync(inRoot(workdir), { recursive: true });
      chmodSync(root, 0o755);
      for (const item of ['dist', 'node_modules', 'package.json', 'schemas']) symlinkSync(join(REPO, item), join(inRoot(workdir), item));
      const rebase = (text: string) => text.replace(/(^|[\s=:])\/(?=[a-z])/g, `$1${root}/`);
      for (const run of one('RUN')) {
        execFileSync('sh', ['-c', rebase(run).replaceAll(`${user}:${user}`, 'nobody:nogroup')]);
      }
      const imageEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, k === 'NODE_OPTIONS' ? v : rebase(v)]));
      const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', process.execPath, ...entrypoint.slice(1), ...cmd], {
        cwd: inRoot(workdir),
        env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', ...imageEnv, PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        expect(entrypoint[0]).toBe('node');
        const port = await waitFor(() => /"event":"process.started"[^\n]*"port":(\d+)/.exec(out)?.[1] ?? (child.exitCode !== null ? 'exited' : undefined), { timeoutMs: 60_000, what: 'the image command started' });
        expect(port, out).not.toBe('exited');
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
        expect(existsSync(join(rebase(env.DATA_DIR!), LOCK_FILE))).toBe(true);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
