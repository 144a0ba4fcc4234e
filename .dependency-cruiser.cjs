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
 * tenancy, units of work) that every family is handed; no family imports the whole store
 * (src/store/store.ts).
 *
 * Two families own tables the delivery engine writes: the drains family its tables
 * (src/modules/drains/tables/) and their migrations (src/modules/drains/migrations/), the logs
 * family the platform log copy (src/modules/logs/repository.ts and its pages, pages.ts). These persistence files are the
 * one exception to "the engine imports no family": they are the only part of any family that the
 * engine, the drain domain (src/drains/), the worker and the whole store (store.ts, and the
 * migration list for the drain migrations) may import. That holds because they stand below every
 * one of those: they import only the store kernel, the model, errors, the event loop's turns and
 * each other, never a route, a service, a schema or the API kernel, so importing them brings no
 * REST code along. No other family imports them, and the store kernel knows them not.
 */
const ENGINE = '^src/(source|pipeline|plan|select|shape|batch|encode|sign|deliver|account|backlog)/|^src/worker\\.ts$';

/** The families' persistence the engine writes: the drain tables and migrations, the log copy's repository and pages. */
const DRAIN_TABLES = '^src/modules/drains/tables/';
const DRAIN_MIGRATIONS = '^src/modules/drains/migrations/';
const LOG_COPY = '^src/modules/logs/(repository|pages)\\.ts$';
const PERSISTENCE = `${DRAIN_TABLES}|${DRAIN_MIGRATIONS}|${LOG_COPY}`;

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
      comment: 'The drain domain imports the model, the destination table, the drain audit entry, the store and the drain tables (their types only: next rule), errors and the logger type: no engine stage, no other part of a family, no kernel, no composition root.',
      severity: 'error',
      from: { path: '^src/drains/' },
      to: { path: '^src/', pathNot: `^src/(drains|model|destinations|audit|store)/|^src/errors\\.ts$|^src/telemetry/logger\\.ts$|${DRAIN_TABLES}` },
    },
    {
      name: 'drains-domain-store-types-only',
      comment: 'The drain domain is handed its store (a unit of work, the store, the drain tables) by its caller: it imports their types, never a repository or a connection.',
      severity: 'error',
      from: { path: '^src/drains/' },
      to: { path: `^src/(store/|telemetry/logger\\.ts$)|${DRAIN_TABLES}`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'drains-domain-not-below',
      comment: 'What the drain domain stands on (the model, the destinations, the audit entry, the store, the drain tables) never imports it.',
      severity: 'error',
      from: { path: `^src/(model|destinations|audit|store)/|${PERSISTENCE}` },
      to: { path: '^src/drains/' },
    },
    {
      name: 'telemetry-not-to-engine',
      comment: 'Telemetry is told of what the stages do (events.ts); it imports no stage and no store (nor the families\' tables the engine writes).',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: `${ENGINE}|^src/store/|${PERSISTENCE}` },
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
      comment: 'The delivery engine runs without the REST layer (logdrain worker): it never imports it. Of the families it imports only the persistence it writes (the drain tables and migrations, the log copy), which imports no REST code (family-persistence-below-the-engine).',
      severity: 'error',
      from: { path: ENGINE },
      to: { path: '^src/(api|modules|commands)/|^src/server\\.ts$', pathNot: PERSISTENCE },
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
      comment: 'The drain tables and migrations (src/modules/drains/tables/, migrations/) are the engine\'s and the drains family\'s: no other family, nor the API kernel, imports them (the families-apart rule says it of families; this one names the tables, and the API kernel).',
      severity: 'error',
      from: { path: '^src/(modules|api)/', pathNot: '^src/modules/(drains/|platform-deps\\.ts$)' },
      to: { path: `${DRAIN_TABLES}|${DRAIN_MIGRATIONS}` },
    },
    {
      name: 'log-copy-logs-family-only',
      comment: 'The platform log copy (src/modules/logs/repository.ts, pages.ts) is written by the engine and read by the logs family alone.',
      severity: 'error',
      from: { path: '^src/(modules|api)/', pathNot: '^src/modules/(logs/|platform-deps\\.ts$)' },
      to: { path: LOG_COPY },
    },
    {
      name: 'family-persistence-below-the-engine',
      comment: 'The families\' persistence the engine imports (the drain tables and migrations, the log copy) stands below the engine, the drain domain and the store: it imports the store kernel (never the whole store), the model, errors, the event loop\'s turns and its own files, never a route, service, schema, the API kernel, an engine stage or the drain domain.',
      severity: 'error',
      from: { path: PERSISTENCE },
      to: { path: '^src/', pathNot: `^src/store/(?!store\\.ts$)|^src/model/|^src/errors\\.ts$|^src/event-loop\\.ts$|${PERSISTENCE}` },
    },
    {
      name: 'store-kernel-knows-no-engine-table',
      comment: 'The store kernel (everything in src/store/ but the whole store\'s composition, store.ts, and the migration list) imports neither the drain tables nor the log copy; the migration list imports only the drain migrations, to keep their ids in the order every database applied them.',
      severity: 'error',
      from: { path: '^src/store/', pathNot: '^src/store/(store\\.ts|migrations/index\\.ts)$' },
      to: { path: PERSISTENCE },
    },
    {
      name: 'store-migrations-only-drain-migrations',
      comment: 'The store kernel\'s migration list names the drain migrations (ids 003, 005-008, 012, 020-022, applied among the kernel\'s) and no other part of the drains family.',
      severity: 'error',
      from: { path: '^src/store/migrations/' },
      to: { path: `${DRAIN_TABLES}|${LOG_COPY}` },
    },
    {
      name: 'store-not-to-api',
      comment: 'The store kernel serves every tier: it imports no route, family or engine stage. The whole store and the migration list may import the families\' persistence the engine writes (store-kernel-knows-no-engine-table says which).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: `^src/(api|modules|commands)/|^src/server\\.ts$|${ENGINE}`, pathNot: PERSISTENCE },
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
