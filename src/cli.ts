#!/usr/bin/env node
/**
 * logdrain: the command line (CONTRACT part 1). Wiring only: read the
 * configuration once, pick the command, start or run it.
 */
// Only what every command needs is imported here: each command loads its own modules when it runs,
// so --help, --version and a refused flag answer at once.
import { loadConfig, ConfigError } from './config/config.js';
import { buildInfo } from './config/build-info.js';
import { createLogger } from './telemetry/logger.js';
import { SeedError } from './seed/seed-file.js';
import { parseCommandLine, UsageError, type CommandSpec, type OptionSpec } from './commands/command-line.js';

const STORE_OPTIONS: Record<string, OptionSpec> = {
  'database-url': { type: 'string', value: 'URL', env: 'DATABASE_URL', description: 'Postgres connection string (unset: the embedded store in --data-dir)' },
  'data-dir': { type: 'string', value: 'DIR', env: 'DATA_DIR', description: 'the embedded store\'s folder, or memory:// to keep nothing' },
};
const LOG_LEVEL: Record<string, OptionSpec> = {
  'log-level': { type: 'string', value: 'LEVEL', env: 'LOG_LEVEL', description: 'fatal, error, warn, info, debug or trace' },
};
const API_OPTIONS: Record<string, OptionSpec> = {
  port: { type: 'string', value: 'N', env: 'PORT', description: 'the REST API\'s port (0: any free port)' },
  host: { type: 'string', value: 'ADDR', env: 'HOST', description: 'the address the REST API listens on' },
  'seed-file': { type: 'string', value: 'FILE', env: 'SEED_FILE', description: 'a seed file applied at start (orgs, keys, agents, family data)' },
};
const KAFKA: Record<string, OptionSpec> = {
  'kafka-brokers': { type: 'string', value: 'LIST', env: 'KAFKA_BROKERS', description: 'comma-separated Kafka brokers (unset: the embedded queue)' },
};

const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'start',
    summary: 'REST API, /metrics, the delivery worker and a workflow executor in one process (embedded defaults)',
    options: { ...API_OPTIONS, ...STORE_OPTIONS, ...KAFKA, ...LOG_LEVEL },
  },
  {
    name: 'serve',
    summary: 'REST API only (and a workflow executor unless WORKFLOW_EXECUTOR=false)',
    options: { ...API_OPTIONS, ...STORE_OPTIONS, ...KAFKA, ...LOG_LEVEL },
  },
  {
    name: 'worker',
    summary: 'a delivery worker and a workflow executor, no API (needs KAFKA_BROKERS and DATABASE_URL)',
    options: {
      'metrics-port': { type: 'string', value: 'N', env: 'METRICS_PORT', description: '/metrics, /healthz and /readyz' },
      'database-url': STORE_OPTIONS['database-url']!,
      ...KAFKA,
      ...LOG_LEVEL,
    },
  },
  {
    name: 'seed',
    summary: 'upsert orgs, users, agents, API keys, sessions and family data from FILE (idempotent)',
    positionals: [{ name: 'FILE', description: 'the seed file (JSON, CONTRACT part 4)' }],
    options: { ...STORE_OPTIONS },
    notes: ['With the embedded store, use SEED_FILE with start or serve instead: one process owns the store.'],
  },
  {
    name: 'migrate',
    summary: 'apply database migrations (start, serve and worker apply them too)',
    options: { ...STORE_OPTIONS },
  },
  {
    name: 'produce',
    summary: 'write synthetic records to Kafka or to a server\'s ingest route',
    options: {
      count: { type: 'string', value: 'N', default: '1000', description: 'records to write' },
      rate: { type: 'string', value: 'N', default: '0', description: 'records per second (0: as fast as possible)' },
      batch: { type: 'string', value: 'N', default: '500', description: 'records per request or Kafka send' },
      org: { type: 'string', value: 'ID', default: 'org_acme', description: 'the records\' organization' },
      agent: { type: 'string', value: 'ID', multiple: true, default: ['agt_support'], description: 'an agent of the records' },
      url: { type: 'string', value: 'URL', description: 'send to URL\'s POST /internal/records instead of Kafka' },
      key: { type: 'string', value: 'KEY', description: 'the ingest key for --url' },
      ...KAFKA,
    },
  },
  {
    name: 'receiver',
    summary: 'a development HTTPS destination with a self-signed certificate: prints each batch it receives',
    options: {
      port: { type: 'string', value: 'N', default: '8443', description: 'its port (0: any free port)' },
      host: { type: 'string', value: 'ADDR', default: '127.0.0.1', description: 'the address it listens on' },
      dir: { type: 'string', value: 'DIR', default: './data/receiver', description: 'where its certificate is kept' },
      name: { type: 'string', value: 'HOST', multiple: true, default: [], description: 'an extra name for its certificate, e.g. a compose service name' },
      secret: { type: 'string', value: 'whsec_...', description: 'check each batch\'s Standard Webhooks signature: prints "signature ok" or "signature INVALID (reason)"' },
    },
  },
];

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv, COMMANDS);
  if (line.kind === 'help') {
    process.stdout.write(line.text + '\n');
    return 0;
  }
  if (line.kind === 'version') {
    const { version, commit } = buildInfo();
    process.stdout.write(`logdrain ${version} (commit ${commit})\n`);
    return 0;
  }
  const { command: { name: command }, values, positionals } = line;
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const texts = (name: string): string[] => (Array.isArray(values[name]) ? values[name] : []);
  const config = loadConfig({ ...process.env, ...line.env });
  const logger = createLogger(config.logLevel);
  switch (command) {
    case 'start':
    case 'serve':
    case 'worker': {
      // Signals are handled from the first instant: one arriving during start stops the
      // process as soon as it is running, rather than killing it half-started.
      const [{ run, stopOnSignals }, { applyHeapGrowing }] = await Promise.all([import('./commands/run.js'), import('./config/heap-growth.js')]);
      const stop = stopOnSignals(config, logger);
      applyHeapGrowing(config.heapGrowingPercent);
      logger.info({ event: 'process.starting', role: command }, `logdrain ${command} starting`);
      stop.started(await run(command, config, logger));
      return -1;
    }
    case 'seed': {
      const file = positionals[0]!;
      const [{ readSeedFile }, { familyMigrations, familySeeds }, { openStore }, { applySeed }] = await Promise.all([
        import('./seed/seed-file.js'), import('./modules/index.js'), import('./store/store.js'), import('./seed/apply.js'),
      ]);
      const seed = await readSeedFile(file, familySeeds);
      const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, encryptionKey: config.encryptionKey, migrations: familyMigrations });
      try {
        await applySeed(store.sql, seed);
      } finally {
        await store.close();
      }
      process.stdout.write(
        `seeded ${seed.orgs.length} orgs, ${seed.users.length} users, ${seed.agents.length} agents, ${seed.apiKeys.length} API keys, ${seed.sessions.length} sessions\n`,
      );
      return 0;
    }
    case 'migrate': {
      const [{ familyMigrations }, { openStore }] = await Promise.all([import('./modules/background.js'), import('./store/store.js')]);
      const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, encryptionKey: config.encryptionKey, migrations: familyMigrations });
      await store.close();
      process.stdout.write('migrations applied\n');
      return 0;
    }
    case 'produce': {
      const int = (name: string, v: string | undefined, min: number) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer of at least ${min}`);
        return n;
      };
      const { produce } = await import('./commands/produce.js');
      await produce(config, {
        count: int('count', text('count'), 1),
        rate: int('rate', text('rate'), 0),
        batch: int('batch', text('batch'), 1),
        org: text('org')!,
        agents: texts('agent'),
        url: text('url'),
        key: text('key'),
      });
      return 0;
    }
    case 'receiver': {
      const port = Number(text('port'));
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be an integer from 0 to 65535 (0: any free port)');
      const [{ startHttpsReceiver }, { verifySignature, whsecProblem }] = await Promise.all([import('./devtools/https-receiver.js'), import('./sign/standard-webhooks.js')]);
      const secret = text('secret');
      if (secret !== undefined) {
        const problem = secret.length === 0 ? 'the secret is empty' : whsecProblem(secret);
        if (problem) throw new Error(`--secret: ${problem}`);
      }
      const receiver = await startHttpsReceiver({
        certDir: text('dir')!,
        port,
        host: text('host')!,
        names: texts('name'),
        onRequest: (r) => {
          const verify = r.headers['x-svc-verify'];
          if (verify !== undefined) return void process.stdout.write(`verification challenge answered\n`);
          const encoding = r.headers['content-encoding'] ?? 'identity';
          let out = `batch ${String(r.headers['x-svc-batch-id'])} ${r.headers['content-type']} ${r.rawBody.length} bytes ${encoding}\n${r.body.toString('utf8')}\n`;
          if (secret !== undefined) {
            // Over the body as received once Content-Encoding is undone, as CONTRACT part 5 says.
            const check = verifySignature(secret, r.headers, r.body);
            out += check.ok ? 'signature ok\n' : `signature INVALID (${check.reason})\n`;
          }
          process.stdout.write(out);
        },
      });
      process.stdout.write(
        `receiver listening on ${receiver.url}\ntrust its certificate with NODE_EXTRA_CA_CERTS=${receiver.caPath}\n` +
          (secret === undefined ? 'signatures are not checked (pass --secret whsec_... to check them)\n' : 'checking every batch\'s signature with the given secret\n'),
      );
      return -1;
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(e.message + '\n');
      process.exit(2);
    }
    const message = e instanceof ConfigError || e instanceof SeedError ? e.message : `logdrain: ${(e as Error).message}`;
    process.stderr.write(message + '\n');
    process.exit(1);
  },
);
