/**
 * Request bodies made from a route's body schema as the OpenAPI document shows it: a sample that
 * its schema accepts (required fields only, each the simplest value its rules take), and the
 * slots where a hostile value can go: every string (NUL, half a surrogate pair), every date-time
 * (calendar extremes) and every free-form value (deep nesting, odd keys), optional fields among
 * them. `withValueAt` puts a value in one slot, creating the fields on the way. So a route added to
 * the document is fuzzed field by field without a test naming its fields.
 */
import fc from 'fast-check';

type Schema = Record<string, unknown>;
export type SlotKind = 'string' | 'instant' | 'free';
export interface Slot {
  /** Property names and array indexes from the body's root. */
  path: (string | number)[];
  kind: SlotKind;
  /** Whether the schema takes any text there (no pattern, format or list of values): NUL gets past it to the rules after. */
  open: boolean;
}

const asSchema = (v: unknown): Schema => (typeof v === 'object' && v !== null ? (v as Schema) : {});

/** The first branch of a choice (`anyOf`, `oneOf`), or the schema itself. */
function chosen(schema: Schema): Schema {
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  return branches && branches.length > 0 ? chosen(asSchema(branches[0])) : schema;
}

const typeOf = (schema: Schema): string | undefined => {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (schema.properties !== undefined) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
};

/** A free-form value: any JSON (no type, or an object whose fields the schema does not name). */
const isFree = (schema: Schema): boolean => {
  const t = typeOf(schema);
  if (t === undefined) return schema.enum === undefined && schema.const === undefined;
  return t === 'object' && Object.keys(asSchema(schema.properties)).length === 0 && schema.additionalProperties !== false;
};

function sampleString(schema: Schema): string {
  if (schema.format === 'date-time') return new Date().toISOString();
  if (schema.format === 'email') return 'fuzz@example.com';
  if (schema.format === 'uri') return 'https://example.com/fuzz';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 1;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(min, 8);
  if (typeof schema.pattern === 'string') {
    try {
      const re = new RegExp(schema.pattern, 'u');
      const found = fc.sample(fc.stringMatching(re), { numRuns: 20, seed: 7 }).find((s) => s.length >= min && s.length <= max && re.test(s));
      if (found !== undefined) return found;
    } catch {
      // A pattern fast-check cannot generate from: the plain sample below.
    }
  }
  return 'f'.repeat(Math.min(Math.max(min, 1), max));
}

function sampleNumber(schema: Schema, integer: boolean): number {
  let n = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
  if (typeof schema.maximum === 'number' && n > schema.maximum) n = schema.maximum;
  return integer ? Math.ceil(n) : n;
}

/** The simplest value `schema` accepts, with its required fields only. */
export function sampleOf(schemaIn: unknown): unknown {
  const schema = chosen(asSchema(schemaIn));
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s) => sampleOf(s) as object));
  switch (typeOf(schema)) {
    case 'string':
      return sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'array': {
      const n = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: n }, () => sampleOf(schema.items));
    }
    case 'object': {
      const properties = asSchema(schema.properties);
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.filter((k) => k in properties).map((k) => [k, sampleOf(properties[k])]));
    }
    default:
      return {};
  }
}

/** Every slot of `schema` (optional fields and the first entry of each list among them), in document order. */
export function slotsOf(schemaIn: unknown, path: (string | number)[] = [], depth = 0): Slot[] {
  const schema = chosen(asSchema(schemaIn));
  if (depth > 12) return [];
  if (isFree(schema)) return [{ path, kind: 'free', open: true }];
  if (Array.isArray(schema.allOf)) return schema.allOf.flatMap((s) => slotsOf(s, path, depth + 1));
  switch (typeOf(schema)) {
    case 'string': {
      const open = schema.pattern === undefined && schema.format === undefined && schema.enum === undefined && schema.const === undefined;
      return schema.format === 'date-time' ? [{ path, kind: 'string', open }, { path, kind: 'instant', open: false }] : [{ path, kind: 'string', open }];
    }
    case 'array':
      return slotsOf(schema.items, [...path, 0], depth + 1);
    case 'object':
      return Object.entries(asSchema(schema.properties)).flatMap(([k, s]) => slotsOf(s, [...path, k], depth + 1));
    default:
      return [];
  }
}

/** The schema of the value at `path` under `schema`. */
function schemaAt(schemaIn: unknown, path: (string | number)[]): Schema {
  let schema = chosen(asSchema(schemaIn));
  for (const step of path) schema = chosen(asSchema(typeof step === 'number' ? schema.items : asSchema(schema.properties)[step]));
  return schema;
}

/** `sample` (a copy) with `value` at `path`, the fields on the way made from the schema where missing. */
export function withValueAt(schema: unknown, sample: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const root = structuredClone(sample) as Record<string | number, unknown>;
  let at = root;
  path.forEach((step, i) => {
    if (i === path.length - 1) {
      at[step] = value;
      return;
    }
    const next = at[step];
    if (typeof next !== 'object' || next === null) {
      const made = sampleOf(schemaAt(schema, path.slice(0, i + 1)));
      at[step] = typeof path[i + 1] === 'number' && !Array.isArray(made) ? [] : made;
    }
    at = at[step] as Record<string | number, unknown>;
  });
  return root;
}
