/**
 * An agent's voice list reads the versions table once, not once for each of its voices: while the
 * table's statistics are from before a burst of pushes to another agent's voice (seconds to a
 * minute, until the next analysis), a read of the versions is a scan of the whole table, and a
 * correlated subquery made one such scan a voice. The list's statements, as the repository runs
 * them, are explained (ANALYZE) on a table analysed before 20,000 versions of another voice came.
 */
import { describe, expect, it } from 'vitest';
import { FAMILY_STORE_KINDS, storeForSuite } from '../../../helpers/stores.js';
import type { Store } from '../../../../src/store/store.js';
import type { Sql } from '../../../../src/store/sql.js';
import { voiceRepo } from '../../../../src/modules/telephony/voice/repository.js';

const BIG_VERSIONS = 20_000;

async function fill(store: Store): Promise<void> {
  const voice = (id: string, agent: string, name: string) =>
    store.sql.query(
      `insert into telephony_voices (id, agent_id, org_id, name, description, active, source, active_version, created_by, created_at, updated_at)
       values ($1, $2, 'org_plan', $3, null, true, 'config', null, 'usr_plan', 1, 1)`,
      [id, agent, name],
    );
  const versions = (voiceId: string, n: number) =>
    store.sql.query(
      `insert into telephony_voice_versions (id, voice_id, version, description, config, bundle, created_by, created_at, updated_at)
       select $1 || '_' || i, $1, '1.0.' || i, null, '{}'::jsonb, repeat('b', 200), 'usr_plan', i, i from generate_series(1, ${n}) i`,
      [voiceId],
    );
  for (let v = 1; v <= 5; v++) {
    await voice(`vc_small_${v}`, 'agt_small', `small-${v}`);
    await versions(`vc_small_${v}`, 4);
  }
  // Statistics from before the burst of pushes, as for the seconds until the next analysis.
  await store.sql.query('analyze telephony_voices');
  await store.sql.query('analyze telephony_voice_versions');
  await voice('vc_big', 'agt_big', 'big');
  await versions('vc_big', BIG_VERSIONS);
}

/** `sql` that keeps each statement it runs, with its parameters. */
function recording(sql: Sql): { sql: Sql; statements: { text: string; params: readonly unknown[] }[] } {
  const statements: { text: string; params: readonly unknown[] }[] = [];
  const wrapped = Object.create(sql) as Sql;
  wrapped.query = ((text: string, params: readonly unknown[] = [], opts?: unknown) => {
    statements.push({ text, params });
    return (sql.query as (t: string, p: readonly unknown[], o?: unknown) => Promise<unknown[]>).call(sql, text, params, opts);
  }) as Sql['query'];
  return { sql: wrapped, statements };
}

describe.each(FAMILY_STORE_KINDS)('the voice list over $name', (kind) => {
  const store = storeForSuite(kind, fill);

  it("answers the agent's voices with their versions, newest first", async () => {
    const list = await voiceRepo(store().sql).listWithVersions('agt_small');
    expect(list.map((v) => v.voice.id)).toEqual(['vc_small_1', 'vc_small_2', 'vc_small_3', 'vc_small_4', 'vc_small_5']);
    for (const { voice, versions } of list) {
      expect(versions.map((v) => v.version)).toEqual(['1.0.4', '1.0.3', '1.0.2', '1.0.1']);
      expect(versions.every((v) => v.voiceId === voice.id && v.bundle === 'b'.repeat(200))).toBe(true);
    }
    expect(await voiceRepo(store().sql).listWithVersions('agt_none')).toEqual([]);
  });

  it("reads the versions table once for the list, not once for each voice (EXPLAIN ANALYZE of the list's statements)", async () => {
    const { sql, statements } = recording(store().sql);
    await voiceRepo(sql).listWithVersions('agt_small');
    expect(statements.length).toBeGreaterThan(0);
    const loops: number[] = [];
    for (const s of statements) {
      const [row] = await store().sql.query<{ 'QUERY PLAN': unknown }>(`explain (analyze, format json) ${s.text}`, [...s.params]);
      const visit = (node: Record<string, unknown>): void => {
        if (node['Relation Name'] === 'telephony_voice_versions') loops.push(Number(node['Actual Loops']));
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
      };
      for (const p of row!['QUERY PLAN'] as { Plan: Record<string, unknown> }[]) visit(p.Plan);
    }
    expect(loops.length).toBeGreaterThan(0);
    expect(loops.every((n) => n === 1), `loops over telephony_voice_versions: ${loops.join(', ')}`).toBe(true);
  });
});
