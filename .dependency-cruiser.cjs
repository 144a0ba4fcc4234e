/**
 * Import boundaries, checked by `npm test` (test/unit/architecture/boundaries.test.ts):
 * the delivery engine never imports the REST layer, nor the REST layer the engine (it enqueues
 * probes for a worker instead of sending); route families (src/modules/<family>/) never import
 * each other; the kernel imports no family; the store imports no seed file reader.
 *
 * The engine's stages are layered in the order a record goes through them, each layer importing
 * only the layers below it (docs/architecture.md, "Engine layers"):
 *
 *   model, destinations <- select, shape, sign, encode <- plan <- batch <- account <- deliver <- backlog <- pipeline <- source, worker
 *
 * The drain domain (src/drains/: the lifecycle, moveDrain, the quota moves, health) is shared by
 * the REST family and the engine: it stands on the model, the destination table, the drain audit
 * entry and the store's types, and nothing it stands on imports it.
 *
 * Telemetry is told of the stages' events and imports no stage and no store.
 *
 * The store has a kernel (src/store/kernel.ts: credentials, audit, idempotency, rate limits,
 * tenancy, units of work) that every family is handed, and the tables the engine writes: the drain
 * tables (src/store/drains/) and the platform log copy (src/store/logs-repo.ts). Those stay in the
 * store because the engine may import no family; of the families only drains and logs may import
 * them, and none the whole store (src/store/store.ts).
 */
const ENGINE = '^src/(source|pipeline|plan|select|shape|batch|encode|sign|deliver|account|backlog)/|^src/worker\\.ts$';

/** The engine's layers, lowest first: a layer may import its own and those before it. */
const LAYERS = [
  ['model', '^src/(model|destinations)/'],
  ['stages', '^src/(select|shape|sign|encode)/'],
  ['plan', '^src/plan/'],
  ['batch', '^src/batch/'],
  ['account', '^src/account/'],
  ['deliver', '^src/deliver/'],
  ['backlog', '^src/backlog/'],
  ['pipeline', '^src/pipeline/'],
  ['source and worker', '^src/source/|^src/worker\\.ts$'],
];

const layerRules = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `layer-${name}-not-upward`,
  comment: `The ${name} layer imports only itself and the layers below it, never ${LAYERS.slice(i + 1).map(([n]) => n).join(', ')}.`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, p]) => p).join('|') },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'drains-domain-below-its-users',
      comment: 'The drain domain imports the model, the destination table, the drain audit entry, the store (its types only: next rule), errors and the logger type: no engine stage, no family, no kernel, no composition root.',
      severity: 'error',
      from: { path: '^src/drains/' },
      to: { path: '^src/', pathNot: '^src/(drains|model|destinations|audit|store)/|^src/errors\\.ts$|^src/telemetry/logger\\.ts$' },
    },
    {
      name: 'drains-domain-store-types-only',
      comment: 'The drain domain is handed its store (a unit of work, the store) by its caller: it imports the store\'s types, never a repository or a connection.',
      severity: 'error',
      from: { path: '^src/drains/' },
      to: { path: '^src/(store/|telemetry/logger\\.ts$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'drains-domain-not-below',
      comment: 'What the drain domain stands on (the model, the destinations, the audit entry, the store) never imports it.',
      severity: 'error',
      from: { path: '^src/(model|destinations|audit|store)/' },
      to: { path: '^src/drains/' },
    },
    {
      name: 'telemetry-not-to-engine',
      comment: 'Telemetry is told of what the stages do (events.ts); it imports no stage and no store.',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: `${ENGINE}|^src/store/` },
    },
    {
      name: 'store-not-to-seed',
      comment: 'The store kernel knows no seed file: src/seed/ reads one and writes its rows through the store (seed/apply.ts).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/seed/' },
    },
    {
      name: 'engine-not-to-api',
      comment: 'The delivery engine runs without the REST layer (logdrain worker): it never imports it.',
      severity: 'error',
      from: { path: ENGINE },
      to: { path: '^src/(api|modules|commands)/|^src/server\\.ts$' },
    },
    {
      name: 'modules-not-to-engine',
      comment: 'The API builds no engine objects: what it needs sent (verify, test) it enqueues as a probe for a worker (src/deliver/probes.ts). The record sink port (src/source/sink.ts) imports nothing and is the API\'s to name.',
      severity: 'error',
      from: { path: '^src/(modules|api)/|^src/server\\.ts$' },
      to: { path: ENGINE, pathNot: '^src/source/sink\\.ts$' },
    },
    {
      name: 'record-sink-port-alone',
      comment: 'The record sink port is shared by the API and the source side: it imports nothing of either.',
      severity: 'error',
      from: { path: '^src/source/sink\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'families-kernel-store-only',
      comment: 'A family is handed the kernel store (src/store/kernel.ts), never the whole store with the tables the engine writes.',
      severity: 'error',
      from: { path: '^src/(modules|api)/' },
      to: { path: '^src/store/store\\.ts$' },
    },
    {
      name: 'drain-tables-drains-family-only',
      comment: 'The drain tables (src/store/drains/) are the engine\'s and the drains family\'s: no other family, nor the API kernel, imports them.',
      severity: 'error',
      from: { path: '^src/(modules|api)/', pathNot: '^src/modules/(drains/|platform-deps\\.ts$)' },
      to: { path: '^src/store/drains/' },
    },
    {
      name: 'log-copy-logs-family-only',
      comment: 'The platform log copy (src/store/logs-repo.ts) is written by the engine and read by the logs family alone.',
      severity: 'error',
      from: { path: '^src/(modules|api)/', pathNot: '^src/modules/(logs/|platform-deps\\.ts$)' },
      to: { path: '^src/store/logs-repo\\.ts$' },
    },
    {
      name: 'store-kernel-knows-no-engine-table',
      comment: 'The store kernel (everything in src/store/ but the whole store\'s composition, store.ts, and the engine\'s tables) imports neither the drain tables nor the log copy.',
      severity: 'error',
      from: { path: '^src/store/[^/]+\\.ts$', pathNot: '^src/store/(store|logs-repo)\\.ts$' },
      to: { path: '^src/store/(drains/|logs-repo\\.ts$)' },
    },
    {
      name: 'store-not-to-api',
      comment: 'The store kernel serves every tier: it imports no route, family or engine stage.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: `^src/(api|modules|commands)/|^src/server\\.ts$|${ENGINE}` },
    },
    {
      name: 'families-apart',
      comment: 'A route family imports the kernel, the store and vendor ports, never another family.',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/|^src/server\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'kernel-not-to-families',
      comment: 'The API kernel knows no family: families register themselves on it.',
      severity: 'error',
      from: { path: '^src/api/kernel/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-circular',
      comment: 'Modules that import each other cannot be read, tested or moved alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
