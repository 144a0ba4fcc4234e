/**
 * The embedded store belongs to one process: PGlite has no lock of its own,
 * and two processes writing one directory lose data silently. The holder
 * keeps `<DATA_DIR>/logdrain.lock` (its pid, host and a nonce) and touches it
 * every few seconds; another process finding it refuses to open the store,
 * naming the directory and the holder. A lock is stale, and taken over,
 * when its holder on this host is gone or when it has not been touched for
 * STALE_MS (a holder on another host, a container that was replaced).
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

export const LOCK_FILE = 'logdrain.lock';
/** How often the holder touches its lock. */
const TOUCH_MS = 5000;
/** A lock untouched this long is stale whatever its host says (six missed touches). */
const STALE_MS = 30_000;

interface Holder {
  pid: number;
  host: string;
  nonce: string;
}

export interface DataDirLock {
  release(): void;
}

/** Directories this process holds: a second store on one of them is refused too. */
const heldHere = new Set<string>();

export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM') throw e;
    throw new AppError(500, 'DATA_DIR_NOT_WRITABLE', `DATA_DIR ${dataDir} cannot be created by this user (${code}): point DATA_DIR at a writable directory or volume, or set DATABASE_URL`, {}, { cause: e });
  }
  const path = join(dir, LOCK_FILE);
  if (heldHere.has(dir)) throw locked(dataDir, path, { pid: process.pid, host: hostname(), nonce: '' });
  const me: Holder = { pid: process.pid, host: hostname(), nonce: randomBytes(8).toString('hex') };
  for (let attempt = 0; ; attempt++) {
    if (create(path, me)) break;
    const found = read(path);
    if (found === undefined) continue; // released between our create and read: try again
    if (attempt > 0 || !isStale(path, found)) throw locked(dataDir, path, found);
    takeOver(path, found, dataDir);
  }
  heldHere.add(dir);
  const touch = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      /* the directory went away: nothing to keep */
    }
  }, TOUCH_MS);
  touch.unref();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(touch);
      heldHere.delete(dir);
      // Only our own lock: a takeover after a long freeze must not be undone by the old holder.
      if (read(path)?.nonce === me.nonce) unlinkSync(path);
    },
  };
}

function create(path: string, me: Holder): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, JSON.stringify(me) + '\n');
  } finally {
    closeSync(fd);
  }
  return true;
}

function read(path: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return { pid: Number(h.pid), host: String(h.host ?? ''), nonce: String(h.nonce ?? '') };
  } catch {
    // Half written by a holder that died at that instant: stale by the clock alone.
    return { pid: NaN, host: '', nonce: text };
  }
}

function isStale(path: string, h: Holder): boolean {
  let touchedAgo: number;
  try {
    touchedAgo = Date.now() - statSync(path).mtimeMs;
  } catch {
    return true;
  }
  if (touchedAgo > STALE_MS) return true;
  // On this host the holder can be asked directly. Our own pid is a holder that died before us
  // (a container restarted keeps pid 1): this process holds nothing yet.
  if (h.host === hostname() && Number.isInteger(h.pid)) return h.pid === process.pid || !alive(h.pid);
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves the stale lock aside, atomically: of two processes taking over at once, the second
 * moves the first one's fresh lock, sees another nonce, puts it back and refuses.
 */
function takeOver(path: string, stale: Holder, dataDir: string): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const moved = read(aside);
  if (moved?.nonce !== stale.nonce) {
    try {
      linkSync(aside, path);
    } catch {
      /* a third process holds it now: the next create fails and names it */
    }
    unlinkSync(aside);
    throw locked(dataDir, path, moved ?? stale);
  }
  unlinkSync(aside);
}

function locked(dataDir: string, path: string, h: Holder): AppError {
  const who = Number.isInteger(h.pid) ? `process ${h.pid}${h.host && h.host !== hostname() ? ` on host ${h.host}` : ''}` : 'another process';
  return new AppError(
    409,
    'DATA_DIR_LOCKED',
    `DATA_DIR ${dataDir} is in use by ${who} (lock file ${path}): the embedded store belongs to one process. ` +
      'Stop that process, or give this one another DATA_DIR (or DATABASE_URL for a shared Postgres).',
  );
}
