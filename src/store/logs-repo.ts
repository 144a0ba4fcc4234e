/**
 * The platform copy of agent records: batched inserts into day partitions,
 * partition upkeep (create ahead, drop past retention), and the keyset and
 * page queries of the log read routes.
 */
import type { Sql } from './sql.js';
import type { AgentRecord } from '../source/record.js';

const DAY_MS = 86_400_000;
/** Partitions are kept ready this many days ahead (clock skew of producers). */
export const DAYS_AHEAD = 2;

const partitionName = (day: number): string => `agent_logs_${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;

export interface LogQuery {
  orgId: string;
  agentId?: string | undefined;
  /** Agents whose logs this credential may not see. */
  hiddenAgents?: readonly string[] | undefined;
  source?: string | undefined;
  environment?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface LogRow {
  ts: Date;
  id: string;
  orgId: string;
  agentId: string;
  agentName: string;
  agentVersion: string | null;
  environment: string;
  source: string;
  event: string;
  severity: string;
  executionId: string;
  message: string | null;
  traceId: string | null;
  spanId: string | null;
  attributes: Record<string, unknown> | null;
}

function where(q: LogQuery, params: unknown[]): string {
  params.push(q.orgId);
  const parts = [`org_id = $${params.length}`];
  const add = (sqlPart: string, v: unknown) => {
    params.push(v);
    parts.push(sqlPart.replace('?', `$${params.length}`));
  };
  if (q.agentId !== undefined) add('agent_id = ?', q.agentId);
  if (q.hiddenAgents && q.hiddenAgents.length > 0) add('agent_id <> all(?::text[])', q.hiddenAgents);
  if (q.source !== undefined) add('source = ?', q.source);
  if (q.environment !== undefined) add('environment = ?', q.environment);
  if (q.since !== undefined) add('ts >= ?', q.since.toISOString());
  if (q.until !== undefined) add('ts <= ?', q.until.toISOString());
  return parts.join(' and ');
}

const fromRow = (r: Record<string, unknown>): LogRow => ({
  ts: r.ts as Date,
  id: r.id as string,
  orgId: r.org_id as string,
  agentId: r.agent_id as string,
  agentName: r.agent_name as string,
  agentVersion: r.agent_version as string | null,
  environment: r.environment as string,
  source: r.source as string,
  event: r.event as string,
  severity: r.severity as string,
  executionId: r.execution_id as string,
  message: r.message as string | null,
  traceId: r.trace_id as string | null,
  spanId: r.span_id as string | null,
  attributes: r.attributes as Record<string, unknown> | null,
});

export function createLogsRepo(sql: Sql) {
  const ready = new Set<number>();

  async function ensurePartition(day: number): Promise<void> {
    if (ready.has(day)) return;
    const from = new Date(day * DAY_MS).toISOString();
    const to = new Date((day + 1) * DAY_MS).toISOString();
    try {
      await sql.exec(`create table if not exists ${partitionName(day)} partition of agent_logs for values from ('${from}') to ('${to}')`);
    } catch (e) {
      // Another worker created it at the same moment: fine.
      if (!/already exists/.test((e as Error).message)) throw e;
    }
    ready.add(day);
  }

  return {
    /**
     * Stores records in their day partitions; duplicates (re-reads) are ignored. Records outside
     * the kept window (older than `retentionDays`, or beyond the partitions made ahead) are not
     * kept; the count of those is returned.
     */
    async insert(records: readonly AgentRecord[], retentionDays: number, nowMs = Date.now()): Promise<number> {
      const today = Math.floor(nowMs / DAY_MS);
      const kept: AgentRecord[] = [];
      const days = new Set<number>();
      for (const r of records) {
        const day = Math.floor(Date.parse(r.timestamp) / DAY_MS);
        if (day < today - retentionDays + 1 || day > today + DAYS_AHEAD) continue;
        days.add(day);
        kept.push(r);
      }
      for (const day of days) await ensurePartition(day);
      if (kept.length === 0) return records.length;
      const col = <T>(f: (r: AgentRecord) => T) => kept.map(f);
      await sql.query(
        // Times are kept to the millisecond, the precision of the keyset cursors (a finer stored
        // time would let rows slip between a cursor's millisecond and the row it was taken from).
        `insert into agent_logs (ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity,
           execution_id, message, trace_id, span_id, attributes)
         select date_trunc('milliseconds', u.ts), u.id, u.org_id, u.agent_id, u.agent_name, u.agent_version, u.environment,
           u.source, u.event, u.severity, u.execution_id, u.message, u.trace_id, u.span_id, u.attributes
         from unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
           $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::jsonb[])
           as u(ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity,
                execution_id, message, trace_id, span_id, attributes)
         on conflict do nothing`,
        [
          col((r) => r.timestamp), col((r) => r.id), col((r) => r.orgId), col((r) => r.agentId), col((r) => r.agentName),
          col((r) => r.agentVersion ?? null), col((r) => r.environment), col((r) => r.source), col((r) => r.event),
          col((r) => r.severity), col((r) => r.executionId), col((r) => r.message ?? null), col((r) => r.traceId ?? null),
          col((r) => r.spanId ?? null), col((r) => (r.attributes ? JSON.stringify(r.attributes) : null)),
        ],
      );
      return records.length - kept.length;
    },

    /** Creates the partitions of the kept window and drops those past it. */
    async maintain(retentionDays: number, nowMs = Date.now()): Promise<{ dropped: string[] }> {
      const today = Math.floor(nowMs / DAY_MS);
      for (let d = today; d <= today + DAYS_AHEAD; d++) await ensurePartition(d);
      const rows = await sql.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         join pg_class p on p.oid = i.inhparent where p.relname = 'agent_logs'`,
      );
      const oldest = partitionName(today - retentionDays + 1);
      const dropped: string[] = [];
      for (const { name } of rows) {
        if (/^agent_logs_\d{8}$/.test(name) && name < oldest) {
          await sql.exec(`drop table if exists ${name}`);
          dropped.push(name);
        }
      }
      for (const day of [...ready]) if (day < today - retentionDays + 1) ready.delete(day);
      return { dropped };
    },

    /** Newest first; `after` continues a keyset page. */
    async page(q: LogQuery, limit: number, opts: { after?: { at: Date; id: string } | undefined; offset?: number } = {}): Promise<LogRow[]> {
      const params: unknown[] = [];
      let w = where(q, params);
      if (opts.after) {
        params.push(opts.after.at.toISOString(), opts.after.id);
        w += ` and (ts, id) < ($${params.length - 1}::timestamptz, $${params.length})`;
      }
      params.push(limit, opts.offset ?? 0);
      const rows = await sql.query<Record<string, unknown>>(
        `select * from agent_logs where ${w} order by ts desc, id desc limit $${params.length - 1} offset $${params.length}`,
        params,
      );
      return rows.map(fromRow);
    },

    /** Matches counted up to `cap` + 1, so a caller can tell "more than cap" without counting everything. */
    async countUpTo(q: LogQuery, cap: number): Promise<number> {
      const params: unknown[] = [];
      const w = where(q, params);
      params.push(cap + 1);
      const rows = await sql.query<{ n: number }>(
        `select count(*)::int as n from (select 1 from agent_logs where ${w} limit $${params.length}) t`,
        params,
      );
      return rows[0]?.n ?? 0;
    },
  };
}

export type LogsRepo = ReturnType<typeof createLogsRepo>;
