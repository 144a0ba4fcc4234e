/**
 * A real Kafka-protocol broker for tests: librdkafka's mock cluster behind a
 * tiny C launcher (test/broker/mock-broker.c), driven over stdin/stdout.
 *
 * The binary is compiled once by test/helpers/global-setup.ts; each test file
 * starts its own cluster with startMockBroker() and stops it afterwards.
 */
import { spawn, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCE = join(REPO_ROOT, 'test', 'broker', 'mock-broker.c');
const BUILD_DIR = join(REPO_ROOT, 'build');
const BINARY = join(BUILD_DIR, 'mock-broker');

const START_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

export interface MockTopic {
  name: string;
  partitions: number;
}

export interface MockBrokerOptions {
  /** Number of brokers in the cluster; ids are 1..brokers. Default 1. */
  brokers?: number;
  /** Topics created before the bootstrap line is printed. Replication factor = brokers. */
  topics?: MockTopic[];
}

export interface MockBroker {
  /** Comma-separated host:port list for bootstrap.servers. */
  bootstrap: string;
  /** The same list split, index i is broker id i + 1. */
  brokers: string[];
  createTopic(name: string, partitions: number): Promise<void>;
  /** Disconnects the broker and refuses new connections. Partition leadership does not move. */
  setBrokerDown(id: number): Promise<void>;
  setBrokerUp(id: number): Promise<void>;
  /** The next `count` requests with `apiKey` (cluster-wide) fail with Kafka error `errCode`. */
  pushRequestErrors(apiKey: number, errCode: number, count: number): Promise<void>;
  /** Ends the cluster; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Rejection of a broker command: `code` is the librdkafka error name (e.g. TOPIC_ALREADY_EXISTS), or BAD_ARGS / BAD_COMMAND / BROKER_EXITED / TIMEOUT. */
export class MockBrokerError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MockBrokerError';
  }
}

/**
 * Compiles the launcher into build/mock-broker unless the binary is newer than
 * its source. Returns the binary's absolute path. Safe to call repeatedly; the
 * compile writes to a temporary name and renames, so a concurrent caller never
 * sees a half-written binary.
 */
export function ensureMockBrokerBuilt(): string {
  const src = statSync(SOURCE);
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= src.mtimeMs) return BINARY;
  mkdirSync(BUILD_DIR, { recursive: true });
  const tmp = `${BINARY}.${process.pid}.tmp`;
  try {
    execFileSync('cc', ['-O2', '-o', tmp, SOURCE, '-lrdkafka'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(
      `failed to compile ${SOURCE} (needs cc and librdkafka-dev): ${e.stderr?.toString().trim() || e.message}`,
    );
  }
  renameSync(tmp, BINARY);
  return BINARY;
}

export async function startMockBroker(options: MockBrokerOptions = {}): Promise<MockBroker> {
  const binary = ensureMockBrokerBuilt();
  const args: string[] = ['--brokers', String(options.brokers ?? 1)];
  for (const t of options.topics ?? []) args.push('--topic', `${t.name}:${t.partitions}`);

  const child: ChildProcessWithoutNullStreams = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    // Keep only the tail; the launcher logs librdkafka warnings here.
    stderr = (stderr + chunk).slice(-8192);
  });
  // Writing to a dead child's stdin raises EPIPE; the pending command rejects instead.
  child.stdin.on('error', () => {});

  let exited = false;
  let exitInfo = '';
  let spawnError: Error | undefined;
  const exitPromise = new Promise<void>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exited = true;
      exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      resolveExit();
    });
    child.once('error', (err) => {
      spawnError = err;
      // A process that never started emits no 'exit'.
      if (child.pid === undefined) {
        exited = true;
        resolveExit();
      }
    });
  });

  const lines = createInterface({ input: child.stdout });
  const waiters: Array<(line: string | null) => void> = [];
  const buffered: string[] = [];
  let closed = false;
  lines.on('line', (line) => {
    const w = waiters.shift();
    if (w) w(line);
    else buffered.push(line);
  });
  lines.once('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w(null);
  });

  /** Next stdout line, or null when stdout closed. */
  function nextLine(timeoutMs: number, what: string): Promise<string | null> {
    const ready = buffered.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (closed) return Promise.resolve(null);
    return new Promise((resolveLine, reject) => {
      const waiter = (line: string | null) => {
        clearTimeout(timer);
        resolveLine(line);
      };
      const timer = setTimeout(() => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        reject(
          new MockBrokerError(`mock broker: timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${stderr.trim() || '(empty)'}`, 'TIMEOUT'),
        );
      }, timeoutMs);
      waiters.push(waiter);
    });
  }

  const describeDeath = async () => {
    // Give 'exit' a moment so the message says how the process ended.
    await Promise.race([exitPromise, new Promise((r) => setTimeout(r, 200))]);
    const how = spawnError ? `failed to spawn: ${spawnError.message}` : exited ? `exited with ${exitInfo}` : 'closed stdout';
    return `mock broker ${how}; stderr: ${stderr.trim() || '(empty)'}`;
  };

  let first: string | null;
  try {
    first = await nextLine(START_TIMEOUT_MS, 'the BOOTSTRAP line');
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  if (first === null || !first.startsWith('BOOTSTRAP ')) {
    child.kill('SIGKILL');
    const msg = first === null ? await describeDeath() : `mock broker printed ${JSON.stringify(first)} instead of BOOTSTRAP; stderr: ${stderr.trim()}`;
    throw new Error(msg);
  }
  const bootstrap = first.slice('BOOTSTRAP '.length).trim();

  // Commands are answered strictly in order, so serialise them.
  let queue: Promise<unknown> = Promise.resolve();
  let stopping: Promise<void> | undefined;

  function command(line: string): Promise<void> {
    const run = async () => {
      if (stopping || exited || closed) throw new MockBrokerError(`mock broker is stopped (command: ${line})`, 'BROKER_EXITED');
      child.stdin.write(`${line}\n`);
      const reply = await nextLine(COMMAND_TIMEOUT_MS, `the reply to "${line}"`);
      if (reply === null) throw new MockBrokerError(`${await describeDeath()} (command: ${line})`, 'BROKER_EXITED');
      if (reply === 'OK') return;
      const m = /^ERR (\S+)\s*(.*)$/.exec(reply);
      if (m) throw new MockBrokerError(`mock broker: "${line}" failed: ${m[1]}: ${m[2]}`, m[1]!);
      throw new MockBrokerError(`mock broker: unexpected reply to "${line}": ${JSON.stringify(reply)}`, 'BAD_REPLY');
    };
    const p = queue.then(run, run);
    queue = p.catch(() => {});
    return p;
  }

  const checkName = (name: string) => {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new MockBrokerError(`invalid topic name ${JSON.stringify(name)}`, 'BAD_ARGS');
  };
  const checkInt = (what: string, n: number) => {
    if (!Number.isInteger(n)) throw new MockBrokerError(`${what} must be an integer, got ${n}`, 'BAD_ARGS');
  };

  return {
    bootstrap,
    brokers: bootstrap.split(',').filter(Boolean),
    async createTopic(name, partitions) {
      checkName(name);
      checkInt('partitions', partitions);
      await command(`topic ${name} ${partitions}`);
    },
    async setBrokerDown(id) {
      checkInt('broker id', id);
      await command(`down ${id}`);
    },
    async setBrokerUp(id) {
      checkInt('broker id', id);
      await command(`up ${id}`);
    },
    async pushRequestErrors(apiKey, errCode, count) {
      checkInt('apiKey', apiKey);
      checkInt('errCode', errCode);
      checkInt('count', count);
      await command(`errors ${apiKey} ${errCode} ${count}`);
    },
    stop() {
      stopping ??= (async () => {
        if (!exited) {
          // EOF on stdin makes the launcher exit at once.
          child.stdin.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exitPromise;
          clearTimeout(timer);
        }
        lines.close();
      })();
      return stopping;
    },
  };
}
