/**
 * Idempotency keys (migration 010): a key scoped to (principal, route) names
 * one request; a retry of it with the same fingerprint replays the stored
 * outcome instead of running again.
 *
 * One claim wins by the table's primary key: `claim` inserts with
 * `on conflict do update ... where expired` (an expired row is taken over in
 * the same statement, so two claimers of an expired key cannot both win),
 * then reads what is there only when it did not win. Never a read before the
 * write. `complete` and `abandon` act only on the winning claim's row (its
 * `claimId`), so an owner that outlived its key's expiry cannot overwrite the
 * next owner's outcome.
 *
 * Timestamps are the caller's clock (`now`, default the present), like the
 * other repositories' expiries.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A bound for the index, not a route's rule: routes validate their own (shorter) limits first. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface IdempotencyRef {
  /** The principal the key belongs to, e.g. `key:<apiKeyId>`, `user:<userId>`, `agent:<agentId>`. */
  scope: string;
  /** The route the key is used on, e.g. `POST /workflows/runs`. */
  route: string;
  key: string;
  /** From a `new` claim: only that claim's row is completed or abandoned. Without it, whichever claim is in progress. */
  claimId?: string | undefined;
}

export interface IdempotencyOutcome {
  status: number;
  /** Any JSON value; replayed as it was stored (undefined for an answer without a body). */
  body: unknown;
}

export interface IdempotencyClaim extends Omit<IdempotencyRef, 'claimId'> {
  /** Of the request (requestFingerprint in src/api/kernel/idempotency.ts). */
  fingerprint: string;
  /** How long the key is kept from this claim; default 24 hours. */
  ttlMs?: number | undefined;
  now?: Date | undefined;
}

export type ClaimResult =
  /** The caller owns the key: it must `complete` or `abandon` it. */
  | { kind: 'new'; claimId: string }
  /** Completed earlier with the same fingerprint: answer this again. */
  | { kind: 'replay'; status: number; body: unknown }
  /** The key was used with another fingerprint (the route answers 409); `original` once that request completed. */
  | { kind: 'conflict'; original?: IdempotencyOutcome }
  /** Another request with this key and fingerprint has not completed yet. */
  | { kind: 'in_progress' };

export interface IdempotencyRecord {
  scope: string;
  route: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  claimId: string;
  outcome: IdempotencyOutcome | undefined;
  createdAt: Date;
  expiresAt: Date;
  completedAt: Date | null;
}

interface Row {
  scope: string;
  route: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  claim_id: string;
  status_code: number | null;
  body: string | null;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
}

const bodyText = (body: unknown): string | null => (body === undefined ? null : JSON.stringify(body));
const bodyOf = (text: string | null): unknown => (text === null ? undefined : JSON.parse(text));
const outcomeOf = (r: Row): IdempotencyOutcome | undefined =>
  r.state === 'completed' && r.status_code !== null ? { status: r.status_code, body: bodyOf(r.body) } : undefined;

/** A claim that keeps losing to a row that vanishes (abandoned, swept) before it is read: a fault, not a state. */
const CLAIM_ATTEMPTS = 5;

function checkRef(ref: { scope: string; route: string; key: string }): void {
  if (ref.key.length === 0 || ref.key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new RangeError(`an idempotency key is 1-${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  if (ref.scope.length === 0 || ref.route.length === 0) throw new RangeError('an idempotency key needs a scope and a route');
}

export function createIdempotencyRepo(sql: Sql) {
  return {
    async claim(c: IdempotencyClaim): Promise<ClaimResult> {
      checkRef(c);
      const ttlMs = c.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
      if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) throw new RangeError('ttlMs must be a positive number of milliseconds');
      const now = c.now ?? new Date();
      const expiresAt = new Date(now.getTime() + ttlMs);
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claimId = randomUUID();
        // The primary key decides: a fresh key is inserted; a live one is left alone (the row is
        // locked, so a concurrent claimer waits and then sees it); an expired one is taken over.
        const won = await sql.query(
          `insert into idempotency_keys (scope, route, key, fingerprint, state, claim_id, created_at, expires_at)
           values ($1, $2, $3, $4, 'in_progress', $5, $6, $7)
           on conflict (scope, route, key) do update
             set fingerprint = excluded.fingerprint, state = 'in_progress', claim_id = excluded.claim_id,
                 status_code = null, body = null, created_at = excluded.created_at,
                 expires_at = excluded.expires_at, completed_at = null
             where idempotency_keys.expires_at <= excluded.created_at
           returning claim_id`,
          [c.scope, c.route, c.key, c.fingerprint, claimId, now.toISOString(), expiresAt.toISOString()], { prepare: 'idempotency-claim' },
        );
        if (won.length > 0) return { kind: 'new', claimId };
        const rows = await sql.query<Row>(
          'select * from idempotency_keys where scope = $1 and route = $2 and key = $3 and expires_at > $4',
          [c.scope, c.route, c.key, now.toISOString()],
        );
        const row = rows[0];
        // Gone since (abandoned, swept): claim again.
        if (!row) continue;
        if (row.fingerprint !== c.fingerprint) {
          const original = outcomeOf(row);
          return original ? { kind: 'conflict', original } : { kind: 'conflict' };
        }
        if (row.state === 'in_progress') return { kind: 'in_progress' };
        return { kind: 'replay', status: row.status_code!, body: bodyOf(row.body) };
      }
      throw new Error(`idempotency key ${c.route} ${c.key}: claimed and released ${CLAIM_ATTEMPTS} times during one claim`);
    },

    /** Stores the outcome of an in-progress claim; false when there is none (abandoned, or taken over after expiry). */
    async complete(ref: IdempotencyRef, outcome: IdempotencyOutcome, now = new Date()): Promise<boolean> {
      checkRef(ref);
      if (!Number.isInteger(outcome.status) || outcome.status < 100 || outcome.status > 599) {
        throw new RangeError(`not an HTTP status: ${outcome.status}`);
      }
      const rows = await sql.query(
        `update idempotency_keys set state = 'completed', status_code = $4, body = $5, completed_at = $6
         where scope = $1 and route = $2 and key = $3 and state = 'in_progress' and ($7::text is null or claim_id = $7)
         returning 1`,
        [ref.scope, ref.route, ref.key, outcome.status, bodyText(outcome.body), now.toISOString(), ref.claimId ?? null], { prepare: 'idempotency-complete' },
      );
      return rows.length > 0;
    },

    /** Frees an in-progress claim whose owner failed before any effect; a completed key is never freed. */
    async abandon(ref: IdempotencyRef): Promise<boolean> {
      checkRef(ref);
      const rows = await sql.query(
        `delete from idempotency_keys
         where scope = $1 and route = $2 and key = $3 and state = 'in_progress' and ($4::text is null or claim_id = $4)
         returning 1`,
        [ref.scope, ref.route, ref.key, ref.claimId ?? null],
      );
      return rows.length > 0;
    },

    /** The stored row, expired or not (tests and diagnostics). */
    async find(ref: Omit<IdempotencyRef, 'claimId'>): Promise<IdempotencyRecord | undefined> {
      const rows = await sql.query<Row>(
        'select * from idempotency_keys where scope = $1 and route = $2 and key = $3',
        [ref.scope, ref.route, ref.key],
      );
      const r = rows[0];
      return r && {
        scope: r.scope, route: r.route, key: r.key, fingerprint: r.fingerprint, state: r.state, claimId: r.claim_id,
        outcome: outcomeOf(r), createdAt: r.created_at, expiresAt: r.expires_at, completedAt: r.completed_at,
      };
    },

    /** Deletes expired keys (completed or not); returns how many. */
    async sweepExpired(now = new Date()): Promise<number> {
      const rows = await sql.query('delete from idempotency_keys where expires_at <= $1 returning 1', [now.toISOString()]);
      return rows.length;
    },
  };
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
