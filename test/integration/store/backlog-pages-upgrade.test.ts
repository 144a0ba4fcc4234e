/**
 * Records parked before the backlog was stored as pages (migration 023) move into pages of one
 * record each, in a bucket read before every other: a round delivers them first, each resource in
 * order, then records parked after the upgrade. On PGlite and on real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import * as m023 from '../../../src/modules/drains/migrations/023-backlog-pages.js';
import type { RoundCursor } from '../../../src/modules/drains/tables/backlog.js';
import { withBuckets } from '../../helpers/backlog.js';

/** The backlog as migrations 003, 006 and 007 left it. */
const BEFORE = `
drop view drain_backlog;
drop function drain_backlog_delete();
drop table drain_backlog_pages;
create table drain_backlog (
  id bigserial primary key, drain_id text not null, org_id text not null, resource_json text not null, record_json text not null,
  record_id text not null, bytes integer not null, scrub_hits integer not null default 0, enqueued_at timestamptz not null default now()
);
create index drain_backlog_drain on drain_backlog (drain_id, id);
create index drain_backlog_parked_at on drain_backlog (drain_id, enqueued_at);
create index drain_backlog_resource on drain_backlog (drain_id, hashtextextended(resource_json, 0), id);
`;

describe.each(STORE_KINDS)('backlog pages upgrade on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  it('moves parked records into pages read first, each resource in order, then those parked after', async () => {
    await store.sql.exec(BEFORE);
    await store.sql.query(
      `insert into drain_backlog (drain_id, org_id, resource_json, record_json, record_id, bytes, scrub_hits)
       values ('drn_up', 'org_a', '{"a":1}', '{"i":0}', 'old0', 7, 0), ('drn_up', 'org_a', '{"b":1}', '{"i":1}', 'old1', 7, 0),
              ('drn_up', 'org_a', '{"a":1}', '{\n"i":2}', 'old2', 8, 1)`,
    );
    await store.sql.transaction((tx) => tx.exec(m023.sql));
    expect(await store.backlog.sizeOf('drn_up')).toEqual({ records: 3, bytes: 22 });
    await store.backlog.park(withBuckets(['{"a":1}', '{"b":1}'].map((resourceJson, i) => ({
      drainId: 'drn_up', orgId: 'org_a', resourceJson, recordJson: `{"i":${3 + i}}`, recordId: `new${i}`, bytes: 7, scrubHits: 0,
    }))));
    const upTo = (await store.backlog.lastId('drn_up'))!;
    const seen: { resource: string; id: string; hits: number }[] = [];
    let after: RoundCursor | undefined;
    for (;;) {
      const { rows, next } = await store.backlog.roundRead('drn_up', upTo, after, 2);
      seen.push(...rows.map((r) => ({ resource: r.resourceJson, id: r.recordId, hits: r.scrubHits })));
      if (next === undefined) break;
      after = next;
    }
    expect(seen.filter((s) => s.resource === '{"a":1}').map((s) => s.id)).toEqual(['old0', 'old2', 'new0']);
    expect(seen.filter((s) => s.resource === '{"b":1}').map((s) => s.id)).toEqual(['old1', 'new1']);
    expect(seen.find((s) => s.id === 'old2')!.hits).toBe(1);
    expect(await store.sql.query("select record_id from drain_backlog where drain_id = 'drn_up' and record_id like 'old%' order by id")).toEqual([
      { record_id: 'old0' }, { record_id: 'old1' }, { record_id: 'old2' },
    ]);
  });
});
