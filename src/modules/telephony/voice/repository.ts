/**
 * Voices and their versions over `Sql`. A name is one active voice's per
 * agent (a partial unique index); a version string is one version's per
 * voice (a unique constraint).
 */
import type { Sql } from '../../../store/sql.js';
import { AUDIT_COLUMNS, type AuditEntry } from '../../../store/audit-repo.js';

export interface VoiceRow {
  id: string;
  agentId: string;
  orgId: string;
  name: string;
  description: string | null;
  active: boolean;
  source: string;
  activeVersion: string | null;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

export interface VersionRow {
  id: string;
  voiceId: string;
  version: string;
  description: string | null;
  /** Every configuration field sent but `bundle`, as sent. */
  config: Record<string, unknown>;
  bundle: string | null;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

interface VRow {
  id: string; agent_id: string; org_id: string; name: string; description: string | null; active: boolean; source: string;
  active_version: string | null; created_by: string; created_at: number | string; updated_at: number | string;
}
interface VerRow {
  id: string; voice_id: string; version: string; description: string | null; config: Record<string, unknown>; bundle: string | null;
  created_by: string; created_at: number | string; updated_at: number | string;
}

const voiceOf = (r: VRow): VoiceRow => ({
  id: r.id, agentId: r.agent_id, orgId: r.org_id, name: r.name, description: r.description, active: r.active, source: r.source,
  activeVersion: r.active_version, createdBy: r.created_by, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});
const versionOf = (r: VerRow): VersionRow => ({
  id: r.id, voiceId: r.voice_id, version: r.version, description: r.description, config: r.config, bundle: r.bundle,
  createdBy: r.created_by, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});

const violated = (e: unknown, name: string): boolean => {
  const err = e as { code?: string; constraint?: string; message?: string };
  return err.code === '23505' && (err.constraint === name || (err.message ?? '').includes(name));
};
/** Another active voice of the agent has the name. */
export const isNameTaken = (e: unknown): boolean => violated(e, 'telephony_voices_active_name');
/** The voice has the version string already. */
export const isVersionTaken = (e: unknown): boolean => violated(e, 'telephony_voice_versions_voice_id_version_key');

export type VoiceChanges = Partial<Pick<VoiceRow, 'name' | 'description' | 'active' | 'activeVersion'>>;
const COLUMNS: Record<keyof VoiceChanges, string> = { name: 'name', description: 'description', active: 'active', activeVersion: 'active_version' };

export function voiceRepo(sql: Sql) {
  return {
    /** Throws the unique violation (isNameTaken) when an active voice of the agent has the name. */
    async insert(v: VoiceRow): Promise<void> {
      await sql.query(
        `insert into telephony_voices (id, agent_id, org_id, name, description, active, source, active_version, created_by, created_at, updated_at)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
        [v.id, v.agentId, v.orgId, v.name, v.description, v.active, v.source, v.activeVersion, v.createdBy, v.createdAt, v.updatedAt],
      );
    },

    /** The agent's voice `id`; `lock`: held until the transaction ends. */
    async get(agentId: string, id: string, lock = false): Promise<VoiceRow | undefined> {
      const rows = await sql.query<VRow>(`select * from telephony_voices where agent_id = $1 and id = $2${lock ? ' for update' : ''}`, [agentId, id]);
      return rows[0] ? voiceOf(rows[0]) : undefined;
    },

    /** The agent's active voice named `name`. */
    async activeNamed(agentId: string, name: string): Promise<VoiceRow | undefined> {
      const rows = await sql.query<VRow>('select * from telephony_voices where agent_id = $1 and name = $2 and active', [agentId, name]);
      return rows[0] ? voiceOf(rows[0]) : undefined;
    },

    /** The agent's voices in creation order. */
    async list(agentId: string): Promise<VoiceRow[]> {
      return (await sql.query<VRow>('select * from telephony_voices where agent_id = $1 order by seq', [agentId])).map(voiceOf);
    },

    /**
     * `list` with each voice's versions as `versions(ids, true)` gives them (newest first, bundles
     * included): the voice list route reads them on every request its cache does not answer. Two
     * statements, the versions of all the voices read at once: one statement reading each voice's
     * versions in a correlated subquery ran it once a voice, and while the table's statistics were
     * from before a burst of pushes to another agent's voice (a tool pushing a version a build;
     * until the next analysis, seconds to a minute) each run was a scan of the whole table: five
     * scans of 45,000 versions for a list of five voices, 20 to 57 ms a statement. Now at most one
     * scan, and an index scan once the statistics are current.
     */
    async listWithVersions(agentId: string): Promise<{ voice: VoiceRow; versions: VersionRow[] }[]> {
      const voices = (await sql.query<VRow>('select * from telephony_voices where agent_id = $1 order by seq', [agentId], { prepare: 'telephony_voices_of_agent' })).map(voiceOf);
      if (voices.length === 0) return [];
      const versions = await sql.query<VerRow>('select * from telephony_voice_versions where voice_id = any($1::text[]) order by seq desc', [voices.map((v) => v.id)]);
      const byVoice = new Map<string, VersionRow[]>(voices.map((v) => [v.id, []]));
      for (const version of versions) byVoice.get(version.voice_id)?.push(versionOf(version));
      return voices.map((voice) => ({ voice, versions: byVoice.get(voice.id)! }));
    },

    /** Throws the unique violation (isNameTaken) when enabling or renaming meets another active voice's name. */
    async update(id: string, changes: VoiceChanges, at: number): Promise<void> {
      const sets: string[] = ['updated_at = $2'];
      const params: unknown[] = [id, at];
      for (const [field, value] of Object.entries(changes) as [keyof VoiceChanges, unknown][]) {
        if (value === undefined) continue;
        params.push(value);
        sets.push(`${COLUMNS[field]} = $${params.length}`);
      }
      await sql.query(`update telephony_voices set ${sets.join(', ')} where id = $1`, params);
    },

    /**
     * Inserts the versions `vs` of one voice, in their order, if the voice is the agent's, locking
     * the voice's row first as `get(…, true)` would, and writes each one's audit entry, in one
     * statement run on its own: the lock is held for its one round trip. False when the agent has
     * no such voice (nothing written, no entry). Throws the unique violation (isVersionTaken) when
     * the voice has one of the version strings already (or `vs` has one twice): then nothing is
     * written. Outside a transaction only (`sql` the store's connection): the statement is its own.
     */
    async insertVersionsAudited(agentId: string, voiceId: string, vs: readonly { version: VersionRow; audit: AuditEntry }[]): Promise<boolean> {
      const input = vs.map(({ version: v, audit: a }, n) => ({
        n, id: v.id, version: v.version, description: v.description, config: v.config, bundle: v.bundle, created_by: v.createdBy,
        created_at: v.createdAt, updated_at: v.updatedAt,
        audit_id: a.id, org_id: a.orgId, action: a.action, actor: a.actor, target_type: a.targetType, details: a.details, at: a.at.toISOString(),
      }));
      const rows = await sql.query(
        `with input as (
           select * from jsonb_to_recordset($3::jsonb) as r(n integer, id text, version text, description text, config jsonb, bundle text,
             created_by text, created_at bigint, updated_at bigint, audit_id text, org_id text, action text, actor jsonb, target_type text,
             details jsonb, at timestamptz)
         ), voice as (select id from telephony_voices where agent_id = $1 and id = $2 for update),
         inserted as (
           insert into telephony_voice_versions (id, voice_id, version, description, config, bundle, created_by, created_at, updated_at)
           select input.id, voice.id, input.version, input.description, input.config, input.bundle, input.created_by, input.created_at, input.updated_at
           from input, voice order by input.n
           returning id
         ), audited as (
           insert into audit_log (${AUDIT_COLUMNS})
           select input.audit_id, input.org_id, input.action, input.actor, input.target_type, $2, input.details, input.at
           from inserted join input on input.id = inserted.id
         )
         select count(*)::int as inserted from inserted`,
        [agentId, voiceId, JSON.stringify(input)],
        { prepare: 'telephony_voice_versions_insert_audited' },
      );
      return (rows[0] as { inserted: number }).inserted === vs.length;
    },

    async version(voiceId: string, version: string): Promise<VersionRow | undefined> {
      const rows = await sql.query<VerRow>('select * from telephony_voice_versions where voice_id = $1 and version = $2', [voiceId, version]);
      return rows[0] ? versionOf(rows[0]) : undefined;
    },

    /** The versions of `voiceIds`, newest first; `withBundle`: the bundles too (they may be large). */
    async versions(voiceIds: readonly string[], withBundle: boolean): Promise<VersionRow[]> {
      if (voiceIds.length === 0) return [];
      const cols = withBundle ? '*' : 'id, voice_id, version, description, config, null as bundle, created_by, created_at, updated_at';
      return (await sql.query<VerRow>(`select ${cols} from telephony_voice_versions where voice_id = any($1::text[]) order by seq desc`, [voiceIds])).map(versionOf);
    },

    /** Binds the voice to the organization's active number `msisdn`; false when it has no such number. */
    async bindNumber(orgId: string, msisdn: string, voiceId: string): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(
        `update telephony_phone_numbers set voice_id = $3 where org_id = $1 and msisdn = $2 and status = 'active' returning id`,
        [orgId, msisdn, voiceId],
      );
      return rows.length > 0;
    },
  };
}

/**
 * The dispatch places of agents (dispatch-ledger.ts): one row per dispatch that reserved a place,
 * at the time it was reserved or answered (Unix ms).
 */
export function dispatchPlacesRepo(sql: Sql) {
  return {
    /** The agent's reservation lock, held until the transaction `sql` is bound to ends. */
    async lockAgent(agentId: string): Promise<void> {
      await sql.query('select pg_advisory_xact_lock(hashtext($1))', [`telephony-dispatch:${agentId}`]);
    },
    /** The agent's places at or before `atMs` (out of the window) given up. */
    async dropUntil(agentId: string, atMs: number): Promise<void> {
      await sql.query('delete from telephony_dispatches where agent_id = $1 and at <= $2', [agentId, atMs]);
    },
    /** The times of the agent's places, oldest first. */
    async times(agentId: string): Promise<{ at: string }[]> {
      return sql.query<{ at: string }>('select at from telephony_dispatches where agent_id = $1 order by at', [agentId]);
    },
    async insert(placeId: string, agentId: string, atMs: number): Promise<void> {
      await sql.query('insert into telephony_dispatches (id, agent_id, at) values ($1, $2, $3)', [placeId, agentId, atMs]);
    },
    /** The place counts from the answer, at `atMs`. */
    async answered(placeId: string, atMs: number): Promise<void> {
      await sql.query('update telephony_dispatches set at = $2, answered = true where id = $1', [placeId, atMs]);
    },
    async remove(placeId: string): Promise<void> {
      await sql.query('delete from telephony_dispatches where id = $1', [placeId]);
    },
  };
}
