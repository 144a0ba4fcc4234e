/**
 * `logdrain produce`: writes synthetic records to Kafka (KAFKA_BROKERS) or to
 * a running server's ingest route (--url and --key), at a rate, with a
 * progress line.
 */
import type { Config } from '../config/config.js';
import { syntheticRecords } from '../devtools/synthetic.js';
import { createKafkaSink } from '../source/kafka-sink.js';
import { readSeedFile } from '../seed/seed-file.js';

export interface ProduceArgs {
  count: number;
  rate: number;
  org: string;
  /** `--agent` values: `ID` or `ID=NAME` (agentsOf). */
  agents: string[];
  url?: string | undefined;
  key?: string | undefined;
  batch: number;
}

export interface ProducedAgent {
  id: string;
  name: string;
  version?: string;
}

/**
 * The records' agents from `--agent` values. `ID=NAME` names the agent; a bare `ID` takes its name
 * (and version) from the seed file (`SEED_FILE`) when that file has the agent, else the id itself:
 * every record carries an `agentName`, and a drain's batches are grouped by it.
 */
export async function agentsOf(values: readonly string[], seedFile: string | undefined): Promise<ProducedAgent[]> {
  const given = values.map((v) => {
    const at = v.indexOf('=');
    const id = at < 0 ? v : v.slice(0, at);
    const name = at < 0 ? undefined : v.slice(at + 1);
    if (id === '' || name === '') throw new Error(`--agent ${v}: expected ID or ID=NAME`);
    return { id, name };
  });
  const unnamed = given.some((a) => a.name === undefined);
  const seeded = new Map((unnamed && seedFile ? (await readSeedFile(seedFile)).agents : []).map((a) => [a.id, a]));
  return given.map(({ id, name }) => {
    const known = seeded.get(id);
    if (name !== undefined) return { id, name };
    return known ? { id, name: known.name, ...(known.version !== null ? { version: known.version } : {}) } : { id, name: id };
  });
}

export async function produce(config: Config, args: ProduceArgs, out: NodeJS.WritableStream = process.stderr): Promise<number> {
  const records = syntheticRecords(args.count, {
    orgs: [{ orgId: args.org, agents: await agentsOf(args.agents, config.seedFile) }],
    seed: Date.now() & 0xffff,
  });
  let write: (batch: { orgId: string; payload: string }[]) => Promise<void>;
  let close = async () => {};
  if (args.url) {
    const url = new URL('/internal/records', args.url).toString();
    write = async (batch) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${args.key ?? ''}`, 'content-type': 'application/x-ndjson' },
        body: batch.map((b) => b.payload).join('\n'),
      });
      const body = (await res.json()) as { accepted?: number; rejected?: unknown[]; message?: string };
      if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${body.message ?? JSON.stringify(body)}`);
      if (body.rejected && body.rejected.length > 0) throw new Error(`ingest rejected records: ${JSON.stringify(body.rejected.slice(0, 3))}`);
    };
  } else if (config.kafka) {
    const sink = await createKafkaSink({ brokers: config.kafka.brokers, topic: config.kafka.topic });
    write = (batch) => sink.write(batch);
    close = () => sink.close();
  } else {
    throw new Error('logdrain produce needs KAFKA_BROKERS or --url');
  }
  const started = Date.now();
  let sent = 0;
  let batch: { orgId: string; payload: string }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await write(batch);
    sent += batch.length;
    batch = [];
    out.write(`\rproduced ${sent}/${args.count} records (${Math.round(sent / Math.max(0.001, (Date.now() - started) / 1000))}/s)`);
    if (args.rate > 0) {
      const due = started + (sent / args.rate) * 1000;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    }
  };
  try {
    for (const r of records) {
      batch.push({ orgId: r.orgId, payload: JSON.stringify(r) });
      if (batch.length >= args.batch) await flush();
    }
    await flush();
  } finally {
    await close();
  }
  out.write('\n');
  return sent;
}
