/**
 * The workflow run event log on a store that had runs before it (migration workflows/004): each run
 * gets one `snapshot` event at the eventSeq it had, so eventSeq never goes back, and its next move
 * is logged after it. On PGlite and on real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../../src/store/store.js';
import { migrate } from '../../../../src/store/migrate.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { storeKindsWithout } from '../../../helpers/stores.js';

const LOG = 'workflows/004-run-events';
const KINDS = storeKindsWithout(LOG);

describe.each(KINDS)('workflow event log upgrade on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('opens each existing run\'s log at its eventSeq, and logs its moves after it', async () => {
    expect(familyMigrations.map((m) => m.id)).toContain(LOG);
    await store.sql.query(
      `insert into workflow_runs (id, org_id, agent_id, form, origin, trigger, status, created_by, graph, budget, created_at, updated_at, event_seq)
       values ('wfr_old_parked', 'org_a', 'agt_a', 'graph', 'inline', 'api', 'suspended', 'usr_a', '{"steps": []}', '{}', now(), now(), 5),
              ('wfr_old_queued', 'org_a', 'agt_a', 'graph', 'inline', 'api', 'queued', 'usr_a', '{"steps": []}', '{}', now(), now(), 0)`,
    );
    expect(await migrate(store.sql, familyMigrations)).toEqual([LOG]);
    const log = () => store.sql.query<{ run_id: string; seq: number; kind: string; status: string }>('select run_id, seq, kind, status from workflow_run_events order by run_id, seq');
    expect(await log()).toEqual([
      { run_id: 'wfr_old_parked', seq: 5, kind: 'snapshot', status: 'suspended' },
      { run_id: 'wfr_old_queued', seq: 1, kind: 'snapshot', status: 'queued' },
    ]);
    await store.sql.query("update workflow_runs set status = 'queued', gate = null, event_seq = event_seq + 1 where id = 'wfr_old_parked'");
    await store.sql.query("update workflow_runs set status = 'cancelled', completed_at = now() where id = 'wfr_old_queued'");
    expect(await log()).toEqual([
      { run_id: 'wfr_old_parked', seq: 5, kind: 'snapshot', status: 'suspended' },
      { run_id: 'wfr_old_parked', seq: 6, kind: 'resumed', status: 'queued' },
      { run_id: 'wfr_old_queued', seq: 1, kind: 'snapshot', status: 'queued' },
      { run_id: 'wfr_old_queued', seq: 2, kind: 'cancelled', status: 'cancelled' },
    ]);
    expect(await store.sql.query('select id, event_seq from workflow_runs order by id')).toEqual([
      { id: 'wfr_old_parked', event_seq: 6 },
      { id: 'wfr_old_queued', event_seq: 2 },
    ]);
  });
});
