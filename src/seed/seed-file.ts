/**
 * The seed file of CONTRACT part 4: orgs, users, agents, API keys and
 * sessions. Parsed and checked here so a bad file fails with every problem
 * listed, before anything is written.
 */
import { readFile } from 'node:fs/promises';
import { LONE_SURROGATE } from '../model/record.js';
import { invalidUtf8At } from '../model/utf8.js';
import type { Sql } from '../store/sql.js';
import type { SeedRows } from './apply.js';

/**
 * A top-level seed array a route family contributes (CONTRACT part 6: `phoneNumbers`, ...): the
 * family checks its entries when the file is read and writes them when it is applied, in the
 * seed's transaction, idempotently. Families declare theirs in `Family.seed`; the composition root
 * hands the list to readSeedFile.
 */
export interface SeedSection {
  /** The top-level key, e.g. `phoneNumbers`. */
  readonly key: string;
  /** Problems of the array (each naming `key[i].field`); `orgIds` are the file's organizations. */
  check(raw: unknown, orgIds: ReadonlySet<string>): string[];
  /** Upserts the checked entries on the seed's transaction. */
  apply(tx: Sql, items: readonly unknown[]): Promise<void>;
}

/** A seed file, read and checked: the rows the store writes (seed/apply.ts) and the families' sections. */
export interface SeedFile extends SeedRows {
  /** The families' arrays present in the file, checked, in section order. */
  sections?: { section: SeedSection; items: readonly unknown[] }[];
}

export class SeedError extends Error {
  readonly code = 'SEED_INVALID';
  constructor(readonly problems: string[]) {
    super(`invalid seed file:\n  ${problems.join('\n  ')}`);
  }
}

export async function readSeedFile(path: string, sections: readonly SeedSection[] = []): Promise<SeedFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new SeedError([`cannot read ${path}: ${(e as Error).message}`]);
  }
  // Decoded leniently, bytes that are not UTF-8 would become U+FFFD: a key or a name seeded other
  // than it was written, found out only when a credential does not match.
  const bad = invalidUtf8At(bytes);
  if (bad >= 0) throw new SeedError([`${path} is not valid UTF-8: byte offset ${bad}`]);
  const text = bytes.toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new SeedError([`${path} is not valid JSON: ${(e as Error).message}`]);
  }
  try {
    return parseSeed(data, sections);
  } catch (e) {
    // Each problem names the file too: `start` may read it far from where it was written.
    if (e instanceof SeedError) throw new SeedError(e.problems.map((p) => `${path}: ${p}`));
    throw e;
  }
}

/**
 * Paths (`orgs[0].name`) of the strings and keys Postgres text cannot hold: NUL, and half a
 * surrogate pair. Found here, each is named; found by the store, one failed insert named neither
 * the file nor the field. Iterative: a seed file may nest deeper than the stack.
 */
function unstorableFields(data: unknown): string[] {
  const found: string[] = [];
  const pending: [unknown, string][] = [[data, '']];
  while (pending.length > 0 && found.length < 20) {
    const [v, at] = pending.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) found.push(at || '(the seed)');
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        const path = Array.isArray(v) ? `${at}[${k}]` : at ? `${at}.${k}` : k;
        if (UNSTORABLE.test(k)) found.push(`${path} (its key)`);
        pending.push([child, path]);
      }
    }
  }
  return found.sort();
}
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

export function parseSeed(data: unknown, sections: readonly SeedSection[] = []): SeedFile {
  const problems: string[] = [];
  const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!obj(data)) throw new SeedError(['the seed must be a JSON object']);
  const unstorable = unstorableFields(data);
  if (unstorable.length > 0) throw new SeedError(unstorable.map((at) => `${at} holds a NUL character or half a surrogate pair, which the store cannot keep`));
  const arr = (name: string): Record<string, unknown>[] => {
    const v = data[name];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every(obj)) {
      problems.push(`${name} must be an array of objects`);
      return [];
    }
    return v as Record<string, unknown>[];
  };
  const str = (o: Record<string, unknown>, at: string, field: string): string => {
    const v = o[field];
    if (typeof v !== 'string' || v.length === 0) problems.push(`${at}.${field} must be a non-empty string`);
    return typeof v === 'string' ? v : '';
  };
  const oneOf = <T extends string>(o: Record<string, unknown>, at: string, field: string, values: readonly T[], fallback: T): T => {
    const v = o[field] ?? fallback;
    if (!values.includes(v as T)) problems.push(`${at}.${field} must be one of ${values.join(', ')}`);
    return v as T;
  };
  /** An optional boolean: absent is false. */
  const flag = (o: Record<string, unknown>, at: string, field: string): boolean => {
    const v = o[field] ?? false;
    if (typeof v !== 'boolean') problems.push(`${at}.${field} must be true or false`);
    return v === true;
  };
  const strings = (o: Record<string, unknown>, at: string, field: string): string[] => {
    const v = o[field] ?? [];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
      problems.push(`${at}.${field} must be an array of strings`);
      return [];
    }
    return v as string[];
  };

  const seed: SeedFile = {
    orgs: arr('orgs').map((o, i) => ({
      id: str(o, `orgs[${i}]`, 'id'),
      name: str(o, `orgs[${i}]`, 'name'),
      plan: oneOf(o, `orgs[${i}]`, 'plan', ['standard', 'enterprise'] as const, 'standard'),
      archived: o.archived === true,
    })),
    users: arr('users').map((u, i) => ({
      id: str(u, `users[${i}]`, 'id'),
      email: str(u, `users[${i}]`, 'email'),
      memberships: (Array.isArray(u.memberships) ? u.memberships : []).map((m: unknown, j: number) => {
        const mm = obj(m) ? m : {};
        // CONTRACT part 6: an admin holds every scope of the organization, a member all but org:manage and the sensitive ones.
        return { orgId: str(mm, `users[${i}].memberships[${j}]`, 'orgId'), role: oneOf(mm, `users[${i}].memberships[${j}]`, 'role', ['admin', 'member'], 'member') };
      }),
    })),
    agents: arr('agents').map((a, i) => ({
      id: str(a, `agents[${i}]`, 'id'),
      orgId: str(a, `agents[${i}]`, 'orgId'),
      name: str(a, `agents[${i}]`, 'name'),
      visibility: oneOf(a, `agents[${i}]`, 'visibility', ['org', 'private'] as const, 'org'),
      version: typeof a.version === 'string' ? a.version : null,
      baseAgent: flag(a, `agents[${i}]`, 'baseAgent'),
    })),
    apiKeys: arr('apiKeys').map((k, i) => ({
      key: str(k, `apiKeys[${i}]`, 'key'),
      ownerId: str(k, `apiKeys[${i}]`, 'ownerId'),
      orgId: str(k, `apiKeys[${i}]`, 'orgId'),
      scopes: k.scopes === null ? null : strings(k, `apiKeys[${i}]`, 'scopes'),
      agentGrants: strings(k, `apiKeys[${i}]`, 'agentGrants'),
      status: oneOf(k, `apiKeys[${i}]`, 'status', ['active', 'suspended', 'revoked', 'expired'] as const, 'active'),
    })),
    sessions: arr('sessions').map((s, i) => ({
      token: str(s, `sessions[${i}]`, 'token'),
      userId: str(s, `sessions[${i}]`, 'userId'),
      revoked: s.revoked === true,
    })),
    sections: [],
  };
  const orgIds = new Set(seed.orgs.map((o) => o.id));
  seed.agents.forEach((a, i) => {
    if (!orgIds.has(a.orgId)) problems.push(`agents[${i}].orgId names no org of this file`);
  });
  seed.users.forEach((u, i) =>
    u.memberships.forEach((m, j) => {
      if (!orgIds.has(m.orgId)) problems.push(`users[${i}].memberships[${j}].orgId names no org of this file`);
    }),
  );
  for (const section of sections) {
    const raw = data[section.key];
    if (raw === undefined) continue;
    const found = section.check(raw, orgIds);
    problems.push(...found);
    if (found.length === 0 && Array.isArray(raw)) seed.sections!.push({ section, items: raw });
  }
  if (problems.length > 0) throw new SeedError(problems);
  return seed;
}
