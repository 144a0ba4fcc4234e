/**
 * The deploy rows and deploy sessions (deploy-migrations.ts). Status writes take the next state from
 * `deployTransition` (state.ts) and apply it only where the row is still in a status the move starts
 * from, and (for the job's moves) still held by the caller's lease: two movers never both win.
 */
import type { Sql } from '../../store/sql.js';
import { deploySourcesOf, mustDeployTransition, type DeployEvent, type DeployStage, type DeployStatus } from './state.js';

export interface DeployRow {
  id: string;
  org_id: string;
  template_id: string;
  version: number;
  requested_by: string;
  key_scope: string;
  idempotency_key: string;
  agent_id: string;
  status: DeployStatus;
  stage: DeployStage;
  request: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  error_status: number | null;
  answer_status: 201 | 202 | null;
  attempts: number;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

export interface NewDeploy {
  id: string;
  orgId: string;
  templateId: string;
  version: number;
  requestedBy: string;
  keyScope: string;
  idempotencyKey: string;
  agentId: string;
  request: Record<string, unknown>;
}

/** What a request with the deploy's key answers, once it is decided; `due`: the answer window has passed. */
export interface DeployAnswer {
  status: DeployStatus;
  answerStatus: 201 | 202 | null;
  due: boolean;
}

export interface DeploySession {
  answers: Record<string, unknown>;
  connectState: Record<string, unknown>;
  idempotencyKey: string | null;
  updatedAt: Date | null;
}

const ms = (n: number): string => `${Math.max(0, Math.round(n))} * interval '1 millisecond'`;

export function createDeployRepo(sql: Sql) {
  return {
    /** Inserts a deploy in `running` (the minting unit of work's statement: `sql` is its transaction). */
    async insert(d: NewDeploy): Promise<void> {
      const s = mustDeployTransition(null, { type: 'mint' });
      await sql.query(
        `insert into template_deploys (id, org_id, template_id, version, requested_by, key_scope, idempotency_key, agent_id, status, stage, request, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), now())`,
        [d.id, d.orgId, d.templateId, d.version, d.requestedBy, d.keyScope, d.idempotencyKey, d.agentId, s.status, s.stage, JSON.stringify(d.request)],
      );
    },

    async find(id: string): Promise<DeployRow | undefined> {
      const [r] = await sql.query<DeployRow>('select * from template_deploys where id = $1', [id]);
      return r;
    },

    /** The deploy an agent was minted by, if any. */
    async byAgent(agentId: string): Promise<DeployRow | undefined> {
      const [r] = await sql.query<DeployRow>('select * from template_deploys where agent_id = $1', [agentId]);
      return r;
    },

    /**
     * Claims the oldest deploy with work left whose lease is free or ran out (its process died),
     * for `leaseMs`; one claimer wins each row (FOR UPDATE SKIP LOCKED, then a conditional update).
     */
    async claim(owner: string, leaseMs: number): Promise<DeployRow | undefined> {
      const [r] = await sql.query<DeployRow>(
        `with next as (
           select id from template_deploys
            where status in ('running', 'rollback_pending') and (lease_until is null or lease_until < now())
            order by created_at, id limit 1 for update skip locked)
         update template_deploys d set lease_owner = $1, lease_until = now() + ${ms(leaseMs)}, attempts = attempts + 1, updated_at = now()
           from next where d.id = next.id and (d.lease_until is null or d.lease_until < now())
         returning d.*`,
        [owner],
      );
      return r;
    },

    /** Renews the lease; false once the deploy is not this owner's any more (or has ended). */
    async renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
      const rows = await sql.query(
        `update template_deploys set lease_until = now() + ${ms(leaseMs)} where id = $1 and lease_owner = $2 and status in ('running', 'rollback_pending') returning 1`,
        [id, owner],
      );
      return rows.length > 0;
    },

    /** Lets a deploy go (its process is stopping): the next claim, here or elsewhere, takes it at once. */
    async release(id: string, owner: string): Promise<void> {
      await sql.query('update template_deploys set lease_owner = null, lease_until = null where id = $1 and lease_owner = $2', [id, owner]);
    },

    /**
     * Moves a deploy the caller holds by `event`, with its result or error. A move that ends it
     * sets `answer_status` 201 when it ends within `answerWaitMs` of its creation and nobody
     * answered 202 first. False when the deploy is not the caller's or not in a status the move
     * starts from.
     */
    async move(id: string, owner: string, from: DeployStatus, event: DeployEvent, o: { result?: unknown; error?: { status: number; body: unknown }; answerWaitMs: number }): Promise<boolean> {
      const next = mustDeployTransition(from, event);
      const ends = next.stage === 'done';
      const rows = await sql.query(
        `update template_deploys set status = $3, stage = $4,
                result = coalesce($5::jsonb, result), error = coalesce($6::jsonb, error), error_status = coalesce($10::int, error_status),
                ended_at = case when $7 then now() else null end,
                lease_owner = case when $7 then null else lease_owner end,
                lease_until = case when $7 then null else lease_until end,
                answer_status = case when $7 and answer_status is null and now() < created_at + ${ms(o.answerWaitMs)} then 201 else answer_status end,
                updated_at = now()
          where id = $1 and lease_owner = $2 and status = $8 and status = any($9::text[])
          returning 1`,
        [id, owner, next.status, next.stage, o.result === undefined ? null : JSON.stringify(o.result), o.error === undefined ? null : JSON.stringify(o.error.body),
          ends, from, deploySourcesOf(event), o.error?.status ?? null],
      );
      return rows.length > 0;
    },

    /** Where the answer of the deploy's requests stands. */
    async answer(id: string, answerWaitMs: number): Promise<DeployAnswer | undefined> {
      const [r] = await sql.query<{ status: DeployStatus; answer_status: 201 | 202 | null; due: boolean }>(
        `select status, answer_status, now() >= created_at + ${ms(answerWaitMs)} as due from template_deploys where id = $1`,
        [id],
      );
      return r && { status: r.status, answerStatus: r.answer_status, due: r.due };
    },

    /** The answer window passed with the deploy still going: every request with its key answers 202 from now on. */
    async answerAccepted(id: string, answerWaitMs: number): Promise<void> {
      await sql.query(
        `update template_deploys set answer_status = 202 where id = $1 and answer_status is null and now() >= created_at + ${ms(answerWaitMs)}`,
        [id],
      );
    },

    /** The organization a person acts on by default: the first (by id) where it is admin, else its first. */
    async defaultOrgOf(userId: string): Promise<string | undefined> {
      const [m] = await sql.query<{ org_id: string }>(
        `select org_id from memberships where user_id = $1 order by (role <> 'admin'), org_id limit 1`, [userId],
      );
      return m?.org_id;
    },

    /** The organization's agents, oldest first. */
    async agentsOf(orgId: string): Promise<{ id: string; name: string; visibility: string }[]> {
      return sql.query<{ id: string; name: string; visibility: string }>('select id, name, visibility from agents where org_id = $1 order by created_at, id', [orgId]);
    },

    /** The person's role in the organization, if a member. */
    async roleIn(userId: string, orgId: string): Promise<string | undefined> {
      const roles = await sql.query<{ role: string }>('select role from memberships where user_id = $1 and org_id = $2', [userId, orgId]);
      return roles[0]?.role;
    },

    /** The agents of the organization a deploy of the template is applying to or rolling back from. */
    async agentsDeploying(orgId: string, templateId: string): Promise<{ agent_id: string }[]> {
      return sql.query<{ agent_id: string }>(
        `select agent_id from template_deploys where org_id = $1 and template_id = $2 and status in ('running', 'rollback_pending')`, [orgId, templateId],
      );
    },

    async session(userId: string, templateId: string, version: number): Promise<DeploySession> {
      const [r] = await sql.query<{ answers: Record<string, unknown>; connect_state: Record<string, unknown>; idempotency_key: string | null; updated_at: Date }>(
        'select answers, connect_state, idempotency_key, updated_at from template_deploy_sessions where user_id = $1 and template_id = $2 and version = $3',
        [userId, templateId, version],
      );
      return r
        ? { answers: r.answers, connectState: r.connect_state, idempotencyKey: r.idempotency_key, updatedAt: r.updated_at }
        : { answers: {}, connectState: {}, idempotencyKey: null, updatedAt: null };
    },

    /**
     * Merges `patch` into the caller's session under its row lock (`sql`: a transaction), so two
     * concurrent PUTs of one caller both land: the row is made first, then read for update, merged
     * and written.
     */
    async mergeSession(userId: string, templateId: string, version: number, patch: { answers?: unknown; connectState?: unknown; idempotencyKey?: string | null }): Promise<DeploySession> {
      await sql.query(
        `insert into template_deploy_sessions (user_id, template_id, version, updated_at) values ($1, $2, $3, now()) on conflict do nothing`,
        [userId, templateId, version],
      );
      const [r] = await sql.query<{ answers: Record<string, unknown>; connect_state: Record<string, unknown>; idempotency_key: string | null }>(
        'select answers, connect_state, idempotency_key from template_deploy_sessions where user_id = $1 and template_id = $2 and version = $3 for update',
        [userId, templateId, version],
      );
      const answers = patch.answers === undefined ? r!.answers : deepMerge(r!.answers, patch.answers) as Record<string, unknown>;
      const connectState = patch.connectState === undefined ? r!.connect_state : deepMerge(r!.connect_state, patch.connectState) as Record<string, unknown>;
      const idempotencyKey = patch.idempotencyKey === undefined ? r!.idempotency_key : patch.idempotencyKey;
      const [w] = await sql.query<{ updated_at: Date }>(
        `update template_deploy_sessions set answers = $4, connect_state = $5, idempotency_key = $6, updated_at = now()
          where user_id = $1 and template_id = $2 and version = $3 returning updated_at`,
        [userId, templateId, version, JSON.stringify(answers), JSON.stringify(connectState), idempotencyKey],
      );
      return { answers, connectState, idempotencyKey, updatedAt: w!.updated_at };
    },
  };
}

export type DeployRepo = ReturnType<typeof createDeployRepo>;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `patch` merged into `base`: objects member by member at every depth; anything else (arrays,
 * scalars, null) replaces what was there.
 */
export function deepMerge(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return patch;
  // A Map, then fromEntries: a `__proto__` member of a parsed body stays a member, never a prototype.
  const out = new Map(Object.entries(base));
  for (const [k, v] of Object.entries(patch)) out.set(k, out.has(k) ? deepMerge(out.get(k), v) : v);
  return Object.fromEntries(out);
}
