/**
 * Audit entries written under the workflow family's older action names (`workflow.run.start`)
 * read as `<family>.<object>.<past-tense verb>` after the upgrade (migration
 * workflows/006), like every entry written since; other entries are left as they were. On PGlite
 * and on real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { migrate } from '../../../src/store/migrate.js';
import { familyMigrations } from '../../../src/modules/index.js';
import { storeKindsWithout } from '../../helpers/stores.js';

const RENAME = 'workflows/006-audit-action-names';

describe.each(storeKindsWithout(RENAME))('audit action names upgrade on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('renames the older workflow actions and leaves every other entry alone', async () => {
    const old = ['workflow.run.start', 'workflow.batch.start', 'workflow.run.cancel', 'workflow.step.retry', 'workflow.step.resolve', 'workflow.budget.raise', 'workflow.run.erase', 'logs.drain.created', 'telephony.trunk.created'];
    for (const [i, action] of old.entries()) {
      await store.sql.query(
        `insert into audit_log (id, org_id, at, action, actor, target_type, target_id, details) values ($1, 'org_a', now(), $2, '{"type":"user","id":"usr_a"}', 'workflow_run', 'run_1', '{}')`,
        [`aud_${i}`, action],
      );
    }
    expect(await migrate(store.sql, familyMigrations)).toEqual([RENAME]);
    const rows = await store.sql.query<{ id: string; action: string }>('select id, action from audit_log order by id');
    expect(rows.map((r) => r.action)).toEqual([
      'workflows.run.started', 'workflows.batch.started', 'workflows.run.cancelled', 'workflows.step.retried', 'workflows.step.resolved',
      'workflows.budget.raised', 'workflows.run.erased', 'logs.drain.created', 'telephony.trunk.created',
    ]);
  });
});
