/**
 * The compose deployment an operator runs (docker-compose.yml, deploy/): the
 * services and settings docs/operations.md promises, configuration every logdrain
 * service would accept, Prometheus scraping every process and loading the
 * alert rules, Grafana provisioned with the datasource and the dashboard, and
 * every metric an alert or a panel reads present in the registry. No network,
 * no Docker: the files are parsed and held to the code and to each other.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { DRAIN_TYPES } from '../../../src/model/drain.js';
import { whsecProblem } from '../../../src/sign/standard-webhooks.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { promqlNames, registrySeriesNames, unknownNames } from './promql-names.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** The operator's documentation: deployment, configuration, metrics, dashboard and alerts. */
const OPERATIONS = 'docs/operations.md';
const operations = read(OPERATIONS);
/** A section of docs/operations.md: from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = operations.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${OPERATIONS} has no "${heading}"`);
  const level = heading.indexOf(' ');
  const next = operations.slice(start + heading.length + 2).search(new RegExp(`^#{1,${level}} `, 'm'));
  return next < 0 ? operations.slice(start) : operations.slice(start, start + heading.length + 2 + next);
}

// --- docker compose -----------------------------------------------------------------------------

interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number | boolean>;
  volumes?: string[];
  ports?: string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
}
const composeText = read('docker-compose.yml');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const LOGDRAIN_SERVICES = ['migrate', 'api', 'worker'];
/** The one logdrain image: built once by the service that has `build`, run by every logdrain service. */
const builders = Object.entries(services).filter(([, s]) => s.build !== undefined);
const LOGDRAIN_IMAGE = builders[0]?.[1].image;
/** The demo receiver's command line, flag by flag (`--name` may repeat). */
const receiverArgs = (() => {
  const args = services.receiver?.command ?? [];
  const flags: Record<string, string[]> = {};
  for (let i = 1; i < args.length; i += 2) (flags[args[i]!] ??= []).push(args[i + 1]!);
  return flags;
})();
/** Where the receiver writes its certificate, and the named volume and mount that hold it. */
function receiverCertificate(): { volume: string; file: string } {
  const dir = receiverArgs['--dir']![0]!;
  for (const v of services.receiver!.volumes ?? []) {
    const [volume, target] = v.split(':') as [string, string];
    if (dir === target || dir.startsWith(`${target}/`)) return { volume, file: `${dir.slice(target.length)}/localhost.crt` };
  }
  throw new Error(`the receiver's --dir ${dir} is on no volume`);
}
/** A stand-in for the receiver's certificate, so that a service trusting it can be configured here. */
let standInCa: string | undefined;
function standInCertificate(): string {
  if (!standInCa) {
    const dir = mkdtempSync(join(tmpdir(), 'logdrain-compose-ca-'));
    standInCa = join(dir, 'localhost.crt');
    writeFileSync(standInCa, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
  }
  return standInCa;
}

/**
 * Compose's variable interpolation (`${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`,
 * `${VAR?error}`, `$$`), enough to resolve this file the way `docker compose` would.
 */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g, (whole, name: string | undefined, colon: string, op: string, arg: string) => {
    if (whole === '$$') return '$';
    const v = env[name!];
    const unset = v === undefined || (colon === ':' && v === '');
    if (op === '-') return unset ? arg : v!;
    if (op === '?' && unset) throw new Error(`${name}: ${arg}`);
    if (v === undefined) throw new Error(`${name} is not set and has no default`);
    return v;
  });
}

/** Every `${VAR}` the compose file reads, in values and keys alike. */
const composeVariables = [...new Set([...composeText.replace(/^\s*#.*$/gm, '').matchAll(/\$\{(\w+)/g)].map((m) => m[1]!))];

const ENV = { LOGDRAIN_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
function environmentOf(service: string, env: Record<string, string> = ENV): Record<string, string> {
  const raw = services[service]!.environment ?? {};
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, interpolate(String(v), env)]));
}
/**
 * The configuration a service starts with. A NODE_EXTRA_CA_CERTS on the receiver's volume (a file the
 * receiver writes when it runs) is read from a stand-in file here, once the path is shown to be it.
 */
function configOf(service: string): Config {
  const env = environmentOf(service);
  if (env.NODE_EXTRA_CA_CERTS) {
    const { volume, file } = receiverCertificate();
    const mount = (services[service]!.volumes ?? []).map((v) => v.split(':')).find(([source]) => source === volume);
    expect(mount, `${service} mounts ${volume}`).toBeDefined();
    expect(env.NODE_EXTRA_CA_CERTS, service).toBe(`${mount![1]}${file}`);
    env.NODE_EXTRA_CA_CERTS = standInCertificate();
  }
  return loadConfig(env);
}

/** Where a file a container sees at `containerPath` lives in the repository, through the service's mounts. */
function hostPathOf(service: string, containerPath: string): string | undefined {
  for (const v of services[service]!.volumes ?? []) {
    const [host, target] = v.split(':') as [string, string];
    if (!host.startsWith('./')) continue;
    if (containerPath === target) return join(ROOT, host);
    if (containerPath.startsWith(`${target}/`)) return join(ROOT, host, containerPath.slice(target.length + 1));
  }
  return undefined;
}

const dependsOn = (service: string): Record<string, { condition: string }> => {
  const d = services[service]!.depends_on ?? {};
  return Array.isArray(d) ? Object.fromEntries(d.map((s) => [s, { condition: 'service_started' }])) : d;
};
const seconds = (duration: string): number => {
  const m = /^(\d+)(ms|s|m|h)$/.exec(duration);
  if (!m) throw new Error(`not a duration: ${duration}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'm' | 'h'];
};
/** The container port a service publishes for `host:container` port mappings. */
const publishedPorts = (service: string): number[] => (services[service]!.ports ?? []).map((p) => Number(String(p).split(':').at(-1)));

describe('docker-compose.yml', () => {
  it('runs Kafka in KRaft mode: one node as broker and controller, its own quorum, no ZooKeeper', () => {
    const kafka = services.kafka!;
    expect(kafka.image).toMatch(/^apache\/kafka:\d+\.\d+\.\d+$/);
    const env = kafka.environment!;
    expect(String(env.KAFKA_PROCESS_ROLES).split(',').sort()).toEqual(['broker', 'controller']);
    const controllerName = String(env.KAFKA_CONTROLLER_LISTENER_NAMES);
    const controllerPort = new RegExp(`${controllerName}://[^,]*:(\\d+)`).exec(String(env.KAFKA_LISTENERS))?.[1];
    expect(controllerPort).toBeDefined();
    expect(String(env.KAFKA_CONTROLLER_QUORUM_VOTERS).split(',')).toContain(`${env.KAFKA_NODE_ID}@kafka:${controllerPort}`);
    const everything = JSON.stringify(services).toLowerCase();
    expect(everything).not.toContain('zookeeper');
  });

  it('creates the topic the workers read, with more partitions than workers, before any logdrain process starts', () => {
    const init = services['kafka-init']!;
    const args = init.entrypoint!;
    const arg = (flag: string) => args[args.indexOf(flag) + 1];
    const worker = configOf('worker');
    expect(args).toContain('--create');
    expect(arg('--topic')).toBe(worker.kafka!.topic);
    expect(Number(arg('--partitions'))).toBeGreaterThan(services.worker!.deploy!.replicas!);
    expect(dependsOn('kafka-init').kafka!.condition).toBe('service_healthy');
    for (const s of ['api', 'worker']) expect(dependsOn(s)['kafka-init']!.condition).toBe('service_completed_successfully');
  });

  it('gives every logdrain service a configuration it accepts, pointing at the compose Kafka and Postgres', () => {
    const kafkaAdvertised = /PLAINTEXT:\/\/([^,]+)/.exec(String(services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS))![1];
    const pg = services.postgres!.environment!;
    expect(services.postgres!.image).toMatch(/^postgres:\d+$/);
    const encryptionKeys = new Set<string>();
    for (const s of LOGDRAIN_SERVICES) {
      expect(services[s]!.image, s).toBe(LOGDRAIN_IMAGE);
      const config = configOf(s); // throws ConfigError listing every problem
      expect(config.kafka?.brokers, s).toEqual([kafkaAdvertised]);
      const db = new URL(config.databaseUrl!);
      expect([db.hostname, db.port, db.username, db.password, db.pathname], s).toEqual(['postgres', '5432', pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, `/${pg.POSTGRES_DB}`]);
      expect(config.encryptionKey?.length, s).toBe(32);
      encryptionKeys.add(config.encryptionKey!.toString('base64'));
    }
    expect(encryptionKeys.size).toBe(1); // one key seals and opens secrets everywhere
  });

  it('builds the logdrain image once, from this folder, and runs every logdrain service on it', () => {
    expect(builders.map(([name]) => name)).toEqual(['migrate']);
    expect(services.migrate!.build).toBe('.');
    expect(LOGDRAIN_IMAGE).toBe('logdrain:local');
    for (const s of [...LOGDRAIN_SERVICES, 'receiver']) expect(services[s]!.image, s).toBe(LOGDRAIN_IMAGE);
    // Compose tolerates a failed pull of an image another service builds, and builds before it starts
    // anything; every service that runs the image starts after migrate has run (or is waited for by those that do).
    for (const s of ['api', 'worker']) expect(dependsOn(s).migrate!.condition).toBe('service_completed_successfully');
    expect(read('Dockerfile')).toMatch(/^FROM node:\S+$/m);
  });

  it('checks every worker\'s readiness on its METRICS_PORT, as the API\'s on its PORT', () => {
    const worker = configOf('worker');
    const test = services.worker!.healthcheck?.test ?? [];
    expect(test.slice(0, 2)).toEqual(['CMD', 'node']);
    expect(test.join(' ')).toContain(`fetch('http://127.0.0.1:${worker.metricsPort}/readyz')`);
    expect(worker.metricsPort).not.toBe(0);
    // The worker's own listener serves /readyz there (src/telemetry/worker-listener.ts).
    expect(read('src/telemetry/worker-listener.ts')).toContain("req.url === '/readyz'");
  });

  it('runs a demo receiver with a command the CLI knows, that the API and the workers trust and may reach', () => {
    const receiver = services.receiver!;
    expect(receiver.command![0]).toBe('receiver');
    const cli = read('src/cli.ts');
    expect(cli).toContain("case 'receiver':");
    const options = cli.slice(cli.indexOf("name: 'receiver'"), cli.indexOf('\n  },', cli.indexOf("name: 'receiver'")));
    for (const flag of Object.keys(receiverArgs)) expect(options, `the CLI's receiver takes ${flag}`).toMatch(new RegExp(`\\b${flag.slice(2)}: \\{ type: 'string'`));
    // Reachable by the other containers, on a fixed port, under a name its certificate carries.
    expect(receiverArgs['--host']).toEqual(['0.0.0.0']);
    const port = Number(receiverArgs['--port']![0]);
    expect(port).toBeGreaterThan(0);
    expect(receiverArgs['--name']).toContain('receiver');
    // A secret a drain can be created with (validate.ts refuses others), so its signatures check out.
    const secret = receiverArgs['--secret']![0]!;
    expect(whsecProblem(secret)).toBeUndefined();
    expect(secret).toMatch(/^whsec_/);
    // Healthy once its certificate answers for `receiver` on that port; the API and workers wait for that.
    const health = receiver.healthcheck!.test.join(' ');
    expect(health).toContain(`port:${port}`);
    expect(health).toContain("servername:'receiver'");
    expect(health).toContain(`${receiverArgs['--dir']![0]}/localhost.crt`);
    for (const s of ['api', 'worker']) {
      expect(dependsOn(s).receiver!.condition, s).toBe('service_healthy');
      const config = configOf(s); // checks NODE_EXTRA_CA_CERTS is the receiver's certificate
      expect(config.endpointAllowHosts, s).toContain('receiver');
      expect(config.extraCaCerts, s).toBeDefined();
    }
    // The receiver makes its certificate with the openssl CLI, which the runtime image must carry.
    const dockerfile = read('Dockerfile');
    expect(dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))).toMatch(/apt-get install[^\n]*\bopenssl\b/);
    // The receiver itself starts on the configuration it gets.
    expect(() => loadConfig(environmentOf('receiver'))).not.toThrow();
  });

  it('names every variable it reads in .env.example, with the encryption key left to fill in', () => {
    const example = read('.env.example');
    const named = [...example.matchAll(/^(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(named.map(([n]) => n).sort()).toEqual([...composeVariables].sort());
    expect(Object.fromEntries(named).LOGDRAIN_ENCRYPTION_KEY).toBe('');
    // Copied as it is, compose refuses to start until a key is put in (an empty value is unset to `:?`).
    expect(() => environmentOf('worker', Object.fromEntries(named))).toThrow(/LOGDRAIN_ENCRYPTION_KEY/);
    expect(read('.gitignore').split('\n')).toContain('.env');
  });

  it('marks the demo keys, the demo secret and the default Grafana credentials as local-only', () => {
    const comments = composeText.split('\n').filter((l) => l.trim().startsWith('#')).join('\n');
    expect(comments).toMatch(/LOCAL USE ONLY/);
    expect(comments).toMatch(/examples\/seed\.json/);
    expect(comments).toMatch(/Grafana/);
    /** The line starting with `needle` (indentation included) and the six before it. */
    const near = (needle: string) => {
      const lines = composeText.split('\n');
      const at = lines.findIndex((l) => l.startsWith(needle));
      expect(at, needle).toBeGreaterThanOrEqual(0);
      return lines.slice(Math.max(0, at - 6), at + 1).join('\n');
    };
    expect(near('      SEED_FILE:')).toMatch(/LOCAL USE ONLY/);
    expect(near('      GF_SECURITY_ADMIN_PASSWORD:')).toMatch(/LOCAL USE ONLY/);
    expect(near('  receiver:')).toMatch(/LOCAL USE ONLY/);
  });

  it('refuses to start without an encryption key', () => {
    expect(() => environmentOf('worker', {})).toThrow(/LOGDRAIN_ENCRYPTION_KEY/);
  });

  it('migrates once, then starts the API and three workers with the commands the CLI knows', () => {
    expect(services.migrate!.command).toEqual(['migrate']);
    expect(dependsOn('migrate').postgres!.condition).toBe('service_healthy');
    expect(services.api!.command).toEqual(['serve']);
    expect(services.worker!.command).toEqual(['worker']);
    for (const s of ['api', 'worker']) expect(dependsOn(s).migrate!.condition).toBe('service_completed_successfully');
    expect(services.worker!.deploy!.replicas).toBe(3);
    const cli = read('src/cli.ts');
    for (const command of ['migrate', 'serve', 'worker']) expect(cli).toContain(`case '${command}':`);
    expect(read('Dockerfile')).toMatch(/ENTRYPOINT \["node", "dist\/cli\.js"\]/);
  });

  it('publishes the API port and checks its readiness there', () => {
    const api = configOf('api');
    expect(publishedPorts('api')).toContain(api.port);
    expect(services.api!.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${api.port}/readyz`);
    expect(hostPathOf('api', interpolate(String(services.api!.environment!.SEED_FILE), ENV))).toSatisfy(existsSync);
  });

  it("starts Node with the image's memory settings: NODE_OPTIONS is one Node accepts there, and sets V8's semi-space", () => {
    const env = Object.fromEntries(
      [...read('Dockerfile').matchAll(/^ENV (.+)$/gm)].flatMap((m) => [...m[1]!.matchAll(/(\w+)=(\S+)/g)].map((kv) => [kv[1]!, kv[2]!])),
    );
    expect(env.NODE_OPTIONS).toMatch(/--max-semi-space-size=\d+/);
    // Node refuses a flag NODE_OPTIONS may not carry, or a misspelt one, before running anything (the container
    // would not start): execFileSync throws then. Young objects enough to grow the new space to its limit.
    const grown = "const a = []; for (let i = 0; i < 1e6; i++) a.push({ i }); process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size))";
    const newSpace = (extra: Record<string, string>) => Number(execFileSync(process.execPath, ['-e', grown], { env: { ...process.env, NODE_OPTIONS: '', ...extra }, encoding: 'utf8' }));
    // V8 11's new space is two semi-spaces: at most 8 MB under the image's 4, 32 MB with Node's defaults.
    const semiMb = Number(/--max-semi-space-size=(\d+)/.exec(env.NODE_OPTIONS!)![1]);
    const image = newSpace(env);
    expect(image).toBeGreaterThan(0);
    expect(image).toBeLessThanOrEqual(2 * semiMb * 2 ** 20);
    expect(image).toBeLessThan(newSpace({}));
  });

  it('lets a stopping worker finish its deliveries: the grace period exceeds SHUTDOWN_TIMEOUT_MS', () => {
    expect(seconds(services.worker!.stop_grace_period!)).toBeGreaterThan(configOf('worker').shutdownTimeoutMs / 1000);
  });

  it('pins every image and mounts only files that exist', () => {
    for (const [name, s] of Object.entries(services)) {
      // Pulled images are pinned; the logdrain image is the one built here.
      if (s.image && s.image !== LOGDRAIN_IMAGE) expect(s.image, name).toMatch(/:v?\d+(\.\d+)*$/);
      for (const v of s.volumes ?? []) {
        const host = v.split(':')[0]!;
        if (host.startsWith('./')) expect(existsSync(join(ROOT, host)), `${name} mounts ${host}`).toBe(true);
      }
    }
  });

  it('documents every variable it reads in the deployment section, and sets only documented configuration', () => {
    expect(composeVariables.sort()).toEqual(['GRAFANA_ADMIN_PASSWORD', 'LOGDRAIN_ENCRYPTION_KEY']);
    const operating = section('## Deployment');
    for (const v of composeVariables) expect(operating, v).toContain(`\`${v}\``);
    const configuration = section('## Configuration');
    for (const s of LOGDRAIN_SERVICES) {
      for (const key of Object.keys(services[s]!.environment!)) expect(configuration, `${s} sets ${key}`).toContain(`\`${key}\``);
    }
  });
});

// --- Prometheus ---------------------------------------------------------------------------------

interface AlertRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const PROMETHEUS_CONFIG = '/etc/prometheus/prometheus.yml';
const prometheusConfigPath = hostPathOf('prometheus', PROMETHEUS_CONFIG);
const prometheus = parse(readFileSync(prometheusConfigPath ?? join(ROOT, 'missing'), 'utf8')) as {
  rule_files?: string[];
  scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
};
const ruleFiles = (prometheus.rule_files ?? []).map((f) => hostPathOf('prometheus', posix.resolve(posix.dirname(PROMETHEUS_CONFIG), f)));
const alerts: AlertRule[] = ruleFiles.flatMap((f) =>
  f && existsSync(f) ? (parse(readFileSync(f, 'utf8')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap((g) => g.rules) : [],
);

let series: Set<string>;
beforeAll(async () => {
  series = await registrySeriesNames();
});

describe('Prometheus', () => {
  it('is configured from a mounted file that exists', () => {
    expect(services.prometheus!.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(prometheusConfigPath).toSatisfy((p: string | undefined) => p !== undefined && existsSync(p));
  });

  it('scrapes the API on its PORT and every worker replica on its METRICS_PORT', () => {
    const job = (name: string) => prometheus.scrape_configs.find((j) => j.job_name === name)!;
    expect(job('logdrain-api').static_configs!.flatMap((c) => c.targets)).toEqual([`api:${configOf('api').port}`]);
    const workers = job('logdrain-workers').dns_sd_configs!;
    expect(workers).toHaveLength(1);
    // Docker's DNS answers a service name with one address per replica: every worker is a target.
    expect(workers[0]).toMatchObject({ names: ['worker'], type: 'A', port: configOf('worker').metricsPort });
  });

  it('loads alert rule files that are mounted, exist and parse', () => {
    expect(ruleFiles.length).toBeGreaterThan(0);
    for (const f of ruleFiles) expect(f !== undefined && existsSync(f), `rule file ${f}`).toBe(true);
    expect(alerts.length).toBeGreaterThan(0);
  });

  it('gives every alert a unique name, an expression, a duration, a severity and both annotations', () => {
    const names = alerts.map((a) => a.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const a of alerts) {
      expect(a.alert, JSON.stringify(a)).toMatch(/^Logdrain[A-Z]\w+$/);
      expect(a.expr.trim(), a.alert).not.toBe('');
      expect(a.for, a.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary?.trim(), a.alert).toBeTruthy();
      expect(a.annotations?.description?.trim(), a.alert).toBeTruthy();
    }
  });

  it('alerts on the conditions the operator must act on', () => {
    const reading = (metric: string) => alerts.filter((a) => promqlNames(a.expr).metrics.includes(metric)).map((a) => a.alert);
    // Lag growing, drains failing, the backlog near the horizon, dead letters, a process down, quota, event loop.
    for (const metric of [
      'logdrain_consumer_lag', 'logdrain_batches_total', 'logdrain_drains', 'logdrain_records_dropped_total',
      'logdrain_backlog_oldest_age_seconds', 'logdrain_buffer_horizon_seconds', 'logdrain_records_dead_lettered_total',
      'up', 'logdrain_quota_used_ratio', 'logdrain_nodejs_eventloop_lag_p99_seconds',
      // Workflow runs stuck in the queue, voice dispatches failing, run-end notifications failing.
      'logdrain_workflow_queue_depth', 'logdrain_workflow_queue_oldest_age_seconds', 'logdrain_telephony_dispatches_total', 'logdrain_workflow_notifications_total',
    ]) expect(reading(metric), metric).not.toEqual([]);
  });

  it('reads only metrics the registry exposes, through known functions', () => {
    expect(unknownNames(alerts.map((a) => a.expr), series)).toEqual({ metrics: [], functions: [] });
  });

  it('sees the first event: every counter an alert reads through increase() is exposed at 0 before it happens', async () => {
    // Prometheus finds no increase in a series whose first sample is already 1.
    const fresh = await createMetrics('worker').scrape();
    const watched = new Set(alerts.flatMap((a) => [...a.expr.matchAll(/increase\((\w+)/g)].map((m) => m[1]!)));
    expect([...watched].sort()).toEqual([
      'logdrain_records_dead_lettered_total', 'logdrain_records_dropped_total', 'logdrain_workflow_claim_latency_seconds_count', 'logdrain_workflow_notifications_total',
    ]);
    const zeros = (metric: string) => [...fresh.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} 0$`, 'gm'))].map((m) => m[1]!);
    for (const reason of ['not_json', 'too_large', 'empty', 'invalid']) expect(zeros('logdrain_records_dead_lettered_total')).toContain(`reason="${reason}",role="worker"`);
    for (const type of DRAIN_TYPES) {
      for (const reason of ['horizon', 'quota', 'http_4xx', 'ssrf']) {
        expect(zeros('logdrain_records_dropped_total')).toContain(`drain_type="${type}",reason="${reason}",role="worker"`);
      }
    }
    expect(zeros('logdrain_workflow_claim_latency_seconds_count')).toEqual(['role="worker"']);
    for (const kind of ['email', 'target', 'callback']) {
      for (const outcome of ['sent', 'failed']) expect(zeros('logdrain_workflow_notifications_total')).toContain(`kind="${kind}",outcome="${outcome}",role="worker"`);
    }
  });

  it('never sums the store gauges across instances, in alerts and panels alike: each sum has a max by inside', () => {
    // Every worker and the API report the same store figure; a bare sum would count it once per process.
    for (const a of [...alerts, ...dashboards.flatMap(dashboardExprs).map((expr) => ({ alert: expr, expr }))]) {
      const ungrouped = a.expr.replace(/\b(?:by|without)\s*\([^)]*\)/g, ' ');
      for (const g of [
        'logdrain_backlog_records', 'logdrain_backlog_bytes', 'logdrain_drains', 'logdrain_quota_used_ratio', 'logdrain_backlog_oldest_age_seconds',
        'logdrain_workflow_runs', 'logdrain_workflow_queue_depth', 'logdrain_workflow_queue_oldest_age_seconds',
      ]) {
        expect(ungrouped, a.alert).not.toMatch(new RegExp(`\\b(sum|avg)\\s*\\(\\s*${g}\\b`));
      }
    }
  });

  it('is the alert table of docs/operations.md, alert for alert, with the same severities', () => {
    const rows = [...section('## Alerts').matchAll(/^\| `(Logdrain\w+)` \| (\w+) \|/gm)].map((m) => [m[1], m[2]]);
    expect(rows.sort()).toEqual(alerts.map((a) => [a.alert, a.labels!.severity]).sort());
  });
});

// --- Grafana ------------------------------------------------------------------------------------

interface Target {
  expr?: string;
  refId: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
const provisioning = (service: string, kind: string) => {
  const dir = hostPathOf(service, `/etc/grafana/provisioning/${kind}`);
  if (!dir || !existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => parse(readFileSync(join(dir, f), 'utf8')));
};
const datasources = provisioning('grafana', 'datasources').flatMap((d) => d.datasources as { uid: string; type: string; url: string }[]);
const providers = provisioning('grafana', 'dashboards').flatMap((d) => d.providers as { type: string; options: { path: string } }[]);
const dashboardFiles = providers.flatMap((p) => {
  const dir = hostPathOf('grafana', p.options.path);
  return dir && existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => join(dir, f)) : [];
});
const dashboards = dashboardFiles.map((f) => JSON.parse(readFileSync(f, 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; query: string | { query: string }; datasource?: { uid: string } }[] };
});
/** Every PromQL expression of a dashboard: panel queries and the query of each variable. */
function dashboardExprs(d: (typeof dashboards)[number]): string[] {
  const panels = d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  const variables = d.templating.list.map((v) => (typeof v.query === 'string' ? v.query : v.query.query)).map((q) => {
    const m = /^label_values\((?:(.+),)?\s*\w+\s*\)$/.exec(q.trim());
    return m ? m[1] ?? '' : q;
  });
  return [...panels, ...variables];
}

describe('Grafana', () => {
  it('is provisioned with the compose Prometheus as its datasource', () => {
    expect(services.grafana!.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    expect(datasources).toHaveLength(1);
    expect(datasources[0]).toMatchObject({ type: 'prometheus', url: `http://prometheus:${publishedPorts('prometheus')[0]}` });
    expect(publishedPorts('grafana')).toContain(3000);
  });

  it('loads the logdrain dashboard from a mounted directory, and opens it as the home dashboard', () => {
    expect(providers.map((p) => p.type)).toEqual(['file']);
    expect(dashboardFiles.map((f) => f.slice(f.lastIndexOf('/') + 1))).toEqual(['logdrain.json']);
    const home = String(services.grafana!.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH);
    expect(hostPathOf('grafana', home)).toBe(dashboardFiles[0]);
  });

  it('lays out panels with unique ids, inside 24 columns, none overlapping', () => {
    for (const d of dashboards) {
      const ids = d.panels.map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      const boxes = d.panels.map((p) => p.gridPos);
      for (const [i, a] of boxes.entries()) {
        expect(a.x + a.w, d.panels[i]!.title).toBeLessThanOrEqual(24);
        for (const b of boxes.slice(i + 1)) {
          const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
          expect(overlap, `${d.panels[i]!.title} overlaps another panel`).toBe(false);
        }
      }
    }
  });

  it('queries the provisioned datasource in every panel and variable', () => {
    const uid = datasources[0]!.uid;
    for (const d of dashboards) {
      for (const p of d.panels.filter((p) => p.type !== 'row')) {
        expect(p.targets?.length, p.title).toBeGreaterThan(0);
        expect(p.datasource?.uid, p.title).toBe(uid);
        const refIds = p.targets!.map((t) => t.refId);
        expect(new Set(refIds).size, p.title).toBe(refIds.length);
        for (const t of p.targets!) {
          expect(t.datasource?.uid ?? uid, p.title).toBe(uid);
          expect(t.expr?.trim(), p.title).toBeTruthy();
        }
      }
      for (const v of d.templating.list) expect(v.datasource?.uid, v.name).toBe(uid);
    }
  });

  it('reads only metrics the registry exposes, through known functions', () => {
    for (const d of dashboards) expect(unknownNames(dashboardExprs(d), series)).toEqual({ metrics: [], functions: [] });
  });

  it('would fail on a panel querying a metric that does not exist', () => {
    const broken = structuredClone(dashboards[0]!);
    const panel = broken.panels.find((p) => p.targets?.some((t) => t.expr?.includes('logdrain_consumer_lag')))!;
    for (const t of panel.targets!) t.expr = t.expr!.replaceAll('logdrain_consumer_lag', 'logdrain_consumer_lagg');
    expect(unknownNames(dashboardExprs(broken), series).metrics).toEqual(['logdrain_consumer_lagg']);
  });

  it('shows every metric of the catalogue, the process metrics and event-loop delay', async () => {
    const shown = new Set(dashboards.flatMap((d) => dashboardExprs(d).flatMap((e) => promqlNames(e).metrics)));
    const catalogue = [...section('## Metrics').matchAll(/^\| `(logdrain_\w+)`/gm)].map((m) => m[1]!);
    expect(catalogue.length).toBeGreaterThan(20);
    const histogram = (n: string) => series.has(`${n}_bucket`);
    const missing = catalogue.filter((n) => (histogram(n) ? !shown.has(`${n}_bucket`) : !shown.has(n)));
    expect(missing).toEqual([]);
    for (const n of ['logdrain_process_cpu_seconds_total', 'logdrain_process_resident_memory_bytes', 'logdrain_nodejs_eventloop_lag_p99_seconds', 'up', 'ALERTS']) {
      expect(shown.has(n), n).toBe(true);
    }
  });
});

describe('PromQL names', () => {
  it('finds metrics, not functions, labels, durations, numbers or Grafana variables', () => {
    expect(promqlNames('sum by (drain_type) (rate(logdrain_a_total{reason!~"quota|horizon",x="$v"}[$__rate_interval])) / on () group_left () max(up) > 5e9')).toEqual({
      metrics: ['logdrain_a_total', 'up'],
      functions: ['sum', 'rate', 'max'],
    });
    expect(promqlNames('histogram_quantile(0.99, sum(rate(b_bucket[5m])) without (le)) and deriv(c[15m:1m]) offset 5m unless d').metrics).toEqual(['b_bucket', 'c', 'd']);
  });
});

// promtool (Debian's prometheus package) checks the real PromQL grammar when it is installed;
// CI does not install it (about 100 MB), so there the checks above are what hold the files.
const promtool = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!promtool)('promtool', () => {
  it('accepts the Prometheus configuration and its rule files', () => {
    const out = execFileSync('promtool', ['check', 'config', prometheusConfigPath!], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${alerts.length} rules found`);
  });

  it('parses every dashboard query', () => {
    const dir = mkdtempSync(join(tmpdir(), 'logdrain-dashboard-'));
    try {
      const exprs = dashboards.flatMap(dashboardExprs).map((e) => e.replaceAll('$__rate_interval', '1m').replaceAll('$drain_type', '.*'));
      const rules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query:${i}`, expr })) }] };
      writeFileSync(join(dir, 'rules.yml'), JSON.stringify(rules));
      const out = execFileSync('promtool', ['check', 'rules', join(dir, 'rules.yml')], { encoding: 'utf8' });
      expect(out).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
