// Prints the coverage gate a full `npm test` run reached: each total of coverage/coverage-summary.json
// (written by the json-summary reporter) rounded down to a whole percent, in the form the
// `coverage.thresholds` entry of vitest.config.ts takes. Run after a whole-suite run, never after a
// targeted one (a subset covers less, and the gate would be set too low).
import { readFileSync } from 'node:fs';

const summary = JSON.parse(readFileSync(new URL('../coverage/coverage-summary.json', import.meta.url), 'utf8'));
const gate = Object.fromEntries(['statements', 'branches', 'functions', 'lines'].map((k) => [k, Math.floor(summary.total[k].pct)]));
console.log(`thresholds: { ${Object.entries(gate).map(([k, v]) => `${k}: ${v}`).join(', ')} },`);
