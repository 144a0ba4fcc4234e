/**
 * The graph step language (contract W2) and the JSON Schema subset of
 * `inputSchema` and a step's `outputSchema` (contract W1): checks that report
 * every problem as `{path, constraint, message}`, the entries of `details[]`.
 */

export interface Issue {
  path: string;
  constraint: string;
  message: string;
}

export type StepKind = 'noop' | 'output' | 'sleep' | 'fail' | 'costly';
export const STEP_KINDS: readonly StepKind[] = ['noop', 'output', 'sleep', 'fail', 'costly'];

export interface Step {
  id: string;
  kind: StepKind;
  value?: unknown;
  ms?: number;
  times?: number;
  retries?: number;
  code?: string;
  message?: string;
  credits?: number;
  outputSchema?: JsonSchema;
}

export interface Graph {
  steps: Step[];
}

export interface JsonSchema {
  type?: string;
  required?: string[];
  properties?: Record<string, JsonSchema>;
  enum?: unknown[];
}

const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const STEP_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Problems of a schema of the W1 subset, at `path`. */
export function checkSchema(s: unknown, path: string): Issue[] {
  if (!isObject(s)) return [{ path, constraint: 'type', message: `${path} must be an object (a JSON Schema)` }];
  const issues: Issue[] = [];
  if (s.type !== undefined && !TYPES.includes(s.type as string)) issues.push({ path: `${path}.type`, constraint: 'enum', message: `${path}.type must be one of ${TYPES.join(', ')}` });
  if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== 'string'))) {
    issues.push({ path: `${path}.required`, constraint: 'type', message: `${path}.required must be an array of strings` });
  }
  if (s.enum !== undefined && !Array.isArray(s.enum)) issues.push({ path: `${path}.enum`, constraint: 'type', message: `${path}.enum must be an array` });
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) issues.push({ path: `${path}.properties`, constraint: 'type', message: `${path}.properties must be an object` });
    else for (const [k, v] of Object.entries(s.properties)) issues.push(...checkSchema(v, `${path}.properties.${k}`));
  }
  return issues;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function matchesType(v: unknown, type: string): boolean {
  if (type === 'integer') return typeof v === 'number' && Number.isInteger(v);
  if (type === 'number') return typeof v === 'number' && Number.isFinite(v);
  return typeOf(v) === type;
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/** Problems of `value` against a schema of the W1 subset; paths start at `path` (`input`, `input.day`). */
export function validateValue(schema: JsonSchema, value: unknown, path: string): Issue[] {
  if (schema.type !== undefined && !matchesType(value, schema.type)) {
    return [{ path, constraint: 'type', message: `${path} must be ${article(schema.type)}` }];
  }
  const issues: Issue[] = [];
  if (schema.enum !== undefined && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    issues.push({ path, constraint: 'enum', message: `${path} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if (isObject(value)) {
    for (const r of schema.required ?? []) {
      if (!(r in value)) issues.push({ path: `${path}.${r}`, constraint: 'required', message: `${path}.${r} is required` });
    }
    for (const [k, sub] of Object.entries(schema.properties ?? {})) {
      if (k in value) issues.push(...validateValue(sub, value[k], `${path}.${k}`));
    }
  }
  return issues;
}

/** Problems of a graph (contract W2), at `path` (`graph`, `workflows[0].versions[1].graph`). */
export function checkGraph(g: unknown, path: string): Issue[] {
  if (!isObject(g)) return [{ path, constraint: 'type', message: `${path} must be an object with steps` }];
  if (!Array.isArray(g.steps) || g.steps.length === 0) return [{ path: `${path}.steps`, constraint: 'minItems', message: `${path}.steps must be a non-empty array` }];
  const issues: Issue[] = [];
  const seen = new Set<string>();
  g.steps.forEach((s: unknown, i) => {
    const at = `${path}.steps.${i}`;
    if (!isObject(s)) {
      issues.push({ path: at, constraint: 'type', message: `${at} must be an object` });
      return;
    }
    if (typeof s.id !== 'string' || !STEP_ID.test(s.id)) issues.push({ path: `${at}.id`, constraint: 'pattern', message: `${at}.id must be 1-64 letters, digits, _ or -` });
    else if (seen.has(s.id)) issues.push({ path: `${at}.id`, constraint: 'uniqueItems', message: `${at}.id repeats the step id ${s.id}` });
    else seen.add(s.id);
    if (!STEP_KINDS.includes(s.kind as StepKind)) {
      issues.push({ path: `${at}.kind`, constraint: 'enum', message: `${at}.kind must be one of ${STEP_KINDS.join(', ')}` });
      return;
    }
    const count = (field: string, min: number, max: number, required: boolean) => {
      const v = s[field];
      if (v === undefined) {
        if (required) issues.push({ path: `${at}.${field}`, constraint: 'required', message: `${at}.${field} is required for a ${String(s.kind)} step` });
        return;
      }
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) issues.push({ path: `${at}.${field}`, constraint: 'range', message: `${at}.${field} must be an integer from ${min} to ${max}` });
    };
    if (s.kind === 'sleep') count('ms', 0, 86_400_000, true);
    if (s.kind === 'fail') {
      count('times', 1, 1000, false);
      count('retries', 0, 19, false);
      if (s.code !== undefined && (typeof s.code !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(s.code))) issues.push({ path: `${at}.code`, constraint: 'pattern', message: `${at}.code must be 1-64 letters, digits or _` });
      if (s.message !== undefined && (typeof s.message !== 'string' || s.message.length > 2000)) issues.push({ path: `${at}.message`, constraint: 'maxLength', message: `${at}.message must be a string of at most 2000 characters` });
    }
    if (s.kind === 'costly' && (typeof s.credits !== 'number' || !Number.isFinite(s.credits) || s.credits < 0)) {
      issues.push({ path: `${at}.credits`, constraint: 'minimum', message: `${at}.credits must be a number of at least 0` });
    }
    if (s.kind === 'output' && !('value' in s)) issues.push({ path: `${at}.value`, constraint: 'required', message: `${at}.value is required for an output step` });
    if (s.outputSchema !== undefined) issues.push(...checkSchema(s.outputSchema, `${at}.outputSchema`));
  });
  return issues;
}

/** The steps a run executes: the graph's, or a script's one `main` step (contract W2). */
export const stepsOf = (form: 'graph' | 'script', graph: Graph | null): Step[] => (form === 'script' || graph === null ? [{ id: 'main', kind: 'noop' }] : graph.steps);
