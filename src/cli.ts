#!/usr/bin/env node
/**
 * logdrain: the command line (CONTRACT part 1). Wiring only: read the
 * configuration once, pick the command, start or run it.
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/config.js';
import { applyHeapGrowing } from './config/heap-growth.js';
import { createLogger } from './telemetry/logger.js';
import { run, stopOnSignals, type Role } from './commands/run.js';
import { familyMigrations, familySeeds } from './modules/index.js';
import { openStore } from './store/store.js';
import { readSeedFile, SeedError } from './seed/seed-file.js';
import { applySeed } from './store/seed-repo.js';
import { produce } from './commands/produce.js';
import { startHttpsReceiver } from './devtools/https-receiver.js';
import { verifySignature, whsecProblem } from './sign/standard-webhooks.js';

const USAGE = `usage: logdrain <command>

  start              REST API, metrics and the delivery worker in one process (embedded defaults)
  serve              REST API only
  worker             delivery worker only (needs KAFKA_BROKERS and DATABASE_URL)
  seed FILE          upsert orgs, users, agents, API keys and sessions from FILE
  produce [options]  write synthetic records to Kafka or to a server's ingest route
      --count N (1000)  --rate N per second (0: as fast as possible)  --batch N (500)
      --org ID (org_acme)  --agent ID (repeatable; agt_support)
      --url URL --key KEY  send to URL's POST /internal/records instead of Kafka
  migrate            apply database migrations
  receiver [options] a development HTTPS destination with a self-signed certificate:
                     prints each batch it receives (README, Quick start)
      --port N (8443; 0: any free port)  --host ADDR (127.0.0.1)  --dir DIR (./data/receiver)
      --name HOST  an extra name for its certificate (repeatable), e.g. a compose service name
      --secret whsec_...  check each batch's Standard Webhooks signature: prints
                     "signature ok" or "signature INVALID (reason)"

Configuration comes from the environment (README, Configuration).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  switch (command) {
    case 'start':
    case 'serve':
    case 'worker': {
      // Signals are handled from the first instant: one arriving during start stops the
      // process as soon as it is running, rather than killing it half-started.
      const stop = stopOnSignals(config, logger);
      applyHeapGrowing(config.heapGrowingPercent);
      logger.info({ event: 'process.starting', role: command }, `logdrain ${command} starting`);
      stop.started(await run(command as Role, config, logger));
      return -1;
    }
    case 'seed': {
      const file = rest[0];
      if (!file) throw new SeedError(['usage: logdrain seed FILE']);
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
      const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, encryptionKey: config.encryptionKey, migrations: familyMigrations });
      await store.close();
      process.stdout.write('migrations applied\n');
      return 0;
    }
    case 'produce': {
      const { values } = parseArgs({
        args: rest,
        options: {
          count: { type: 'string', default: '1000' },
          rate: { type: 'string', default: '0' },
          batch: { type: 'string', default: '500' },
          org: { type: 'string', default: 'org_acme' },
          agent: { type: 'string', multiple: true, default: ['agt_support'] },
          url: { type: 'string' },
          key: { type: 'string' },
        },
      });
      const int = (name: string, v: string | undefined, min: number) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer of at least ${min}`);
        return n;
      };
      await produce(config, {
        count: int('count', values.count, 1),
        rate: int('rate', values.rate, 0),
        batch: int('batch', values.batch, 1),
        org: values.org!,
        agents: values.agent!,
        url: values.url,
        key: values.key,
      });
      return 0;
    }
    case 'receiver': {
      const { values } = parseArgs({
        args: rest,
        options: {
          port: { type: 'string', default: '8443' },
          dir: { type: 'string', default: './data/receiver' },
          host: { type: 'string', default: '127.0.0.1' },
          name: { type: 'string', multiple: true, default: [] },
          secret: { type: 'string' },
        },
      });
      const port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be an integer from 0 to 65535 (0: any free port)');
      const secret = values.secret;
      if (secret !== undefined) {
        const problem = secret.length === 0 ? 'the secret is empty' : whsecProblem(secret);
        if (problem) throw new Error(`--secret: ${problem}`);
      }
      const receiver = await startHttpsReceiver({
        certDir: values.dir!,
        port,
        host: values.host!,
        names: values.name!,
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
      process.stderr.write(`unknown command: ${command}\n\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    const message = e instanceof ConfigError || e instanceof SeedError ? e.message : `logdrain: ${(e as Error).message}`;
    process.stderr.write(message + '\n');
    process.exit(1);
  },
);
