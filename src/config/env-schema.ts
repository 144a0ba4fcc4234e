/**
 * The vocabulary of the configuration schema: one TypeBox schema per environment variable, carrying
 * the variable's name (`env`), its default, its bounds and its description, and the one reader that
 * turns an environment into the value the schema describes. The families declare their slices with
 * these builders (src/modules/<family>/config.ts); src/config/config.ts composes them.
 *
 * An environment holds strings: the reader converts each variable by its schema's kind (integer,
 * boolean, string, one of a set, comma-separated list), applies the default where the variable is
 * unset, and records an issue naming the variable where the value does not fit.
 */
import {
  Kind, Type,
  type TArray, type TBoolean, type TInteger, type TLiteral, type TObject, type TOptional, type TProperties, type TSchema, type TString, type TUnion,
} from '@sinclair/typebox';

export type Env = Readonly<Record<string, string | undefined>>;

/** What is wrong with one variable; `kind` says which rule of its schema the value broke. */
export interface ConfigIssue {
  /** The environment variable (or, for a relation between several, the first one named). */
  readonly variable: string;
  /**
   * `type`: not of the variable's kind (not an integer, not a boolean); `bound`: outside its minimum
   * and maximum; `enum`: not one of its values; `format`: not of its form (a URL, an address);
   * `relation`: at odds with another variable; `unreadable`: names a file that cannot be read.
   */
  readonly kind: 'type' | 'bound' | 'enum' | 'format' | 'relation' | 'unreadable';
  readonly message: string;
}

/** What every variable's schema carries besides its kind. */
interface EnvMeta {
  /** The environment variable. */
  env: string;
  description: string;
}

interface Bounds { min: number; max?: number }

/** An integer variable; unset or empty: the default. */
export function int(env: string, dflt: number, bounds: Bounds, description: string): TInteger {
  return Type.Integer({ env, default: dflt, minimum: bounds.min, maximum: bounds.max ?? Number.MAX_SAFE_INTEGER, description });
}

/** A boolean variable: true, 1, yes, on or false, 0, no, off (any case); unset or empty: the default. */
export function bool(env: string, dflt: boolean, description: string): TBoolean {
  return Type.Boolean({ env, default: dflt, description });
}

interface StringForm {
  /** The form the value must have (a regular expression), and the problem told when it does not. */
  pattern?: string;
  formMessage?: string;
}

/** A string variable with a default (unset or empty: the default). */
export function str(env: string, dflt: string, description: string, form: StringForm = {}): TString {
  return Type.String({ env, default: dflt, description, ...form });
}

/** A string variable without a default (unset or empty: undefined). */
export function optionalStr(env: string, description: string, form: StringForm = {}): TOptional<TString> {
  return Type.Optional(Type.String({ env, description, ...form }));
}

/** A member of an `allOrNone` group that the group needs: set whenever the group is. */
export function requiredStr(env: string, description: string, form: StringForm = {}): TString {
  return Type.String({ env, description, ...form });
}

/** A variable whose value is one of `values`; unset or empty: the default. */
export function oneOf<const T extends readonly string[]>(env: string, values: T, dflt: T[number], description: string): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)), { env, default: dflt, description });
}

interface ListOptions {
  /** Unset (not empty: an empty value is the empty list): this list. */
  default?: readonly string[];
  /** Host names compare without case: kept in lower case. */
  lowercase?: boolean;
  /** The values an item may take. */
  items?: readonly string[];
}

/** A comma-separated list (items trimmed, empty items dropped). */
export function list(env: string, description: string, o: ListOptions = {}): TArray<TString> {
  const items = o.items === undefined ? Type.String() : Type.String({ enum: [...o.items] });
  return Type.Array(items, { env, default: [...(o.default ?? [])], description, ...(o.lowercase ? { lowercase: true } : {}) });
}

/**
 * A group of variables that configure one external service: all of its required members (those
 * without a default) set, or none (undefined: the in-process sandbox serves). Some but not all is a
 * problem naming the missing ones; a member with a default is read only when the group is set.
 */
export function allOrNone<P extends TProperties>(properties: P, why: string): TOptional<TObject<P>> {
  return Type.Optional(Type.Object(properties, { allOrNone: why }));
}

/** Every variable of a schema, in declaration order, with what the operator's documentation states about it. */
export interface EnvVariable {
  env: string;
  /** The default as the documentation writes it: undefined when unset means off or the sandbox. */
  default: string | number | boolean | readonly string[] | undefined;
  description: string;
  /** Where the value lands in the configuration (`workflows.notify.leaseMs`). */
  path: string;
}

export function envVariables(schema: TObject, prefix = ''): EnvVariable[] {
  const out: EnvVariable[] = [];
  for (const [key, s] of Object.entries(schema.properties) as [string, TSchema][]) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isEnv(s)) out.push({ env: s.env, default: s.default as EnvVariable['default'], description: s.description, path });
    else if (s[Kind] === 'Object') out.push(...envVariables(s as TObject, path));
  }
  return out;
}

type EnvSchema = TSchema & EnvMeta;
const isEnv = (s: TSchema): s is EnvSchema => typeof (s as Partial<EnvMeta>).env === 'string';

/**
 * Reads the variables of `schema` from `env` into the object the schema describes, defaults
 * applied. A value that does not fit adds an issue and reads as the default, so that one pass
 * reports every problem.
 */
export function readEnv(schema: TObject, env: Env, issues: ConfigIssue[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(schema.properties) as [string, TSchema][]) {
    if (isEnv(s)) out[key] = readVariable(s, env, issues);
    else if (s[Kind] === 'Object') {
      const group = s as TObject & { allOrNone?: string };
      if (group.allOrNone === undefined || groupIsSet(group, env, issues)) out[key] = readEnv(group, env, issues);
      else out[key] = undefined;
    } else {
      // A property that is neither a variable nor a group of them is a mistake in the schema itself.
      throw new TypeError(`configuration schema: ${key} names no environment variable`);
    }
  }
  return out;
}

const present = (v: string | undefined): v is string => v !== undefined && v !== '';

function groupIsSet(group: TObject & { allOrNone?: string }, env: Env, issues: ConfigIssue[]): boolean {
  const required = Object.values(group.properties).filter((s): s is EnvSchema => isEnv(s) && s.default === undefined);
  const set = required.filter((s) => present(env[s.env]));
  if (set.length === 0) return false;
  if (set.length < required.length) {
    const missing = required.filter((s) => !set.includes(s)).map((s) => s.env);
    issues.push({ variable: missing[0]!, kind: 'relation', message: `${missing.join(', ')} must be set with ${set.map((s) => s.env).join(', ')} (${group.allOrNone})` });
    // The members given are still checked, so that one pass reports every problem.
    for (const s of set) readVariable(s, env, issues);
    return false;
  }
  return true;
}

function readVariable(s: EnvSchema, env: Env, issues: ConfigIssue[]): unknown {
  const name = s.env;
  const raw = env[name];
  const problem = (kind: ConfigIssue['kind'], message: string) => {
    issues.push({ variable: name, kind, message });
    return s.default;
  };
  switch (s[Kind]) {
    case 'Array': {
      if (raw === undefined) return [...(s.default as string[])];
      const o = s as unknown as TArray<TString> & { lowercase?: boolean };
      const values = raw.split(',').map((v) => v.trim()).filter((v) => v.length > 0).map((v) => (o.lowercase ? v.toLowerCase() : v));
      const allowed = o.items.enum as string[] | undefined;
      for (const v of values) {
        if (allowed !== undefined && !allowed.includes(v)) issues.push({ variable: name, kind: 'enum', message: `${name}: unknown value ${v} (one of ${allowed.join(', ')})` });
      }
      return values;
    }
    case 'Integer': {
      if (!present(raw)) return s.default;
      const { minimum: min, maximum: max } = s as unknown as TInteger & { minimum: number; maximum: number };
      const n = Number(raw);
      if (!Number.isInteger(n)) return problem('type', `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      if (n < min || n > max) return problem('bound', `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'Boolean': {
      if (!present(raw)) return s.default;
      if (/^(true|1|yes|on)$/i.test(raw)) return true;
      if (/^(false|0|no|off)$/i.test(raw)) return false;
      return problem('type', `${name} must be true or false, got ${JSON.stringify(raw)}`);
    }
    // A set of one value is a literal (TypeBox folds a union of one into its member).
    case 'Literal':
    case 'Union': {
      if (!present(raw)) return s.default;
      const values = s[Kind] === 'Literal' ? [(s as unknown as TLiteral<string>).const] : (s as unknown as TUnion<TLiteral<string>[]>).anyOf.map((l) => l.const);
      if (!values.includes(raw)) return problem('enum', `${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
      return raw;
    }
    case 'String': {
      if (!present(raw)) return s.default;
      const form = s as unknown as StringForm;
      if (form.pattern !== undefined && !new RegExp(form.pattern).test(raw)) return problem('format', form.formMessage ?? `${name} must match ${form.pattern}`);
      return raw;
    }
    default:
      throw new TypeError(`configuration schema: ${name} has a kind the reader does not know (${String(s[Kind])})`);
  }
}

/** The configuration as handed out: frozen all the way down (a Buffer or a Date is a value, not a tree). */
export type DeepReadonly<T> = T extends Buffer | Date | ((...args: never[]) => unknown)
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value as object)) deepFreeze(v);
    Object.freeze(value);
  }
  return value as DeepReadonly<T>;
}
