/**
 * A template version's digests (spec 03 parts 2.5, 9.3; contract templates,
 * `contentHash`): the lowercase hex SHA-256 of the UTF-8 bytes of a canonical
 * JSON serialization, so the same content always yields the same digest,
 * whatever order its keys were sent or stored in (Postgres' jsonb reorders
 * them) and whichever route reads it.
 *
 * The serialization is RFC 8785 (JSON Canonicalization Scheme), which a
 * client can reproduce with any JCS library or the few lines of
 * docs/api-templates.md ("The seal"):
 *
 *   - no whitespace anywhere;
 *   - object members sorted by key, comparing the keys as arrays of UTF-16
 *     code units (JavaScript's default string order); a member whose value
 *     is absent (`undefined`) is left out;
 *   - arrays in their own order;
 *   - strings as JSON.stringify writes them: `"` and `\` escaped, the control
 *     characters U+0000-U+001F as \b \t \n \f \r or \u00xx (lowercase hex),
 *     every other character as itself (no \u escapes for non-ASCII text);
 *   - numbers as ECMAScript's Number.prototype.toString writes them (`1`,
 *     `1.5`, `1e+21`, `-0` as `0`); NaN and the infinities cannot be
 *     serialized;
 *   - `true`, `false`, `null`.
 *
 * Two digests are taken of a version (seal.ts is pure: the service computes
 * them once, at publish, and stores them):
 *   - the version's `contentHash`: its `content` (the frozen agent snapshot)
 *     alone, "the publish-time digest";
 *   - the manifest's `contentHash`, the install seal: everything an install
 *     applies (`sealedPayload`), which install and deploy compare with the
 *     seal a client echoes.
 */
import { createHash } from 'node:crypto';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };

/** A value the canonical form cannot hold (a non-finite number, a function, a bigint...). */
export class NotCanonicalizable extends Error {
  constructor(readonly path: string, what: string) {
    super(`${path || 'value'} ${what}`);
  }
}

/** The RFC 8785 serialization of `value` (see the top of this file). */
export function canonicalJson(value: unknown): string {
  return write(value, '');
}

function write(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new NotCanonicalizable(path, 'is not a finite number');
      // JSON.stringify writes a number as Number.prototype.toString does (and -0 as 0): RFC 8785 part 3.2.2.3.
      return JSON.stringify(value);
    case 'string':
      // JSON.stringify's string escaping is RFC 8785's (part 3.2.2.2), lone surrogates aside, which
      // a stored value never holds (the kernel refuses them: kernel/storable-text.ts).
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v, i) => write(v === undefined ? null : v, `${path}[${i}]`)).join(',')}]`;
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new NotCanonicalizable(path, 'is not a plain object');
      const members = Object.keys(value)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        // Default sort: UTF-16 code units, RFC 8785 part 3.2.3.
        .sort()
        .map((k) => `${JSON.stringify(k)}:${write((value as Record<string, unknown>)[k], path ? `${path}.${k}` : k)}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new NotCanonicalizable(path, `is a ${typeof value}, which JSON cannot hold`);
  }
}

/** Lowercase hex SHA-256 (64 characters) of the canonical serialization of `value`. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/** What a version freezes and an install applies: the input of the install seal. */
export interface SealedPayload {
  content: Json;
  envContract: Json | null;
  connections: Json | null;
  personaTemplate: Json | null;
  triggerPresets: Json | null;
  paramsMeta: Json | null;
  onInstall: Json | null;
  onUninstall: Json | null;
  installPolicy: Json | null;
}

/**
 * The install seal of a version: the digest of `{content, envContract, connections, personaTemplate,
 * triggerPresets, paramsMeta, onInstall, onUninstall, installPolicy}`, a cleared (or never set)
 * section as `null`. Metadata (ids, number, changelog, author, times, approval, deprecation) is
 * not sealed: it changes nothing an install applies.
 */
export function installSeal(p: SealedPayload): string {
  return contentHash({
    content: p.content, envContract: p.envContract, connections: p.connections, personaTemplate: p.personaTemplate,
    triggerPresets: p.triggerPresets, paramsMeta: p.paramsMeta, onInstall: p.onInstall, onUninstall: p.onUninstall, installPolicy: p.installPolicy,
  });
}
