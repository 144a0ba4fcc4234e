/**
 * Import boundaries, checked by `npm test` (test/unit/architecture/boundaries.test.ts):
 * the delivery engine never imports the REST layer, nor the REST layer the engine (it enqueues
 * probes for a worker instead of sending); route families (src/modules/<family>/) never import
 * each other; the kernel imports no family.
 */
const ENGINE = '^src/(source|pipeline|select|shape|batch|encode|sign|deliver|account)/|^src/worker\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'engine-not-to-api',
      comment: 'The delivery engine runs without the REST layer (logdrain worker): it never imports it.',
      severity: 'error',
      from: { path: ENGINE },
      to: { path: '^src/(api|modules|commands)/' },
    },
    {
      name: 'modules-not-to-engine',
      comment: 'The API builds no engine objects: what it needs sent (verify, test) it enqueues as a probe for a worker (src/deliver/probes.ts).',
      severity: 'error',
      from: { path: '^src/(modules|api)/' },
      to: { path: ENGINE },
    },
    {
      name: 'store-not-to-api',
      comment: 'The store kernel serves every tier: it imports no route, family or engine stage.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: `^src/(api|modules|commands)/|${ENGINE}` },
    },
    {
      name: 'families-apart',
      comment: 'A route family imports the kernel, the store and vendor ports, never another family.',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/$1/' },
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
