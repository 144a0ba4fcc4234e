/**
 * The order of a voice dispatch (spec 02 part 4.4; contract telephony T3.4):
 * every refusal comes before the budget and the platform, so a refused
 * dispatch places no call and leaves the agent's budget as it was; and a call
 * the platform placed is answered with its session even when its record
 * cannot be written. The dispatcher on a store of each kind, with a voice
 * calls platform that counts what reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyReply } from 'fastify';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { insertAudit, type AuditWriter } from '../../../../src/store/unit-of-work.js';
import { createLogger } from '../../../../src/telemetry/logger.js';
import { createMetrics } from '../../../../src/telemetry/metrics.js';
import { createSandboxVoiceCalls } from '../../../../src/vendors/voice/sandbox.js';
import type { DispatchRequest, VoiceCallsPort } from '../../../../src/vendors/voice/port.js';
import { createDispatcher, type DispatchBody } from '../../../../src/modules/telephony/voice/dispatch.js';
import { voiceRepo } from '../../../../src/modules/telephony/voice/repository.js';
import type { AgentActor, TelephonyDeps } from '../../../../src/modules/telephony/context.js';
import type { Sql } from '../../../../src/store/sql.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';

const AGENT = 'agt_order';
const actor = (agentId = AGENT): AgentActor => ({
  orgId: 'org_order', agentId,
  principal: { kind: 'api_key', userId: 'usr_order', keyOrgId: 'org_order', scopes: null, agentGrants: [], credentialId: 'cred_order' },
});
const reply = { header: () => reply } as unknown as FastifyReply;

describe.each(['pglite', 'postgres'] as const)('voice dispatch order on %s', (kind) => {
  let store: Store;
  let db: TestDatabase | undefined;
  /** Audit actions whose write fails, as a store that broke after the call was placed would. */
  const failing = new Set<string>();
  const auditWriter: AuditWriter = async (tx, entry) => {
    if (failing.has(entry.action)) throw new Error(`audit write refused: ${entry.action}`);
    await insertAudit(tx, entry);
  };
  const placed: DispatchRequest[] = [];
  const sandbox = createSandboxVoiceCalls();
  /** Set: the platform refuses the next call with this error. */
  let platformDown: Error | undefined;
  const spy: VoiceCallsPort = {
    name: 'spy',
    dispatch: async (req) => {
      if (platformDown) throw platformDown;
      placed.push(req);
      return sandbox.dispatch(req);
    },
  };
  /** Set: the store refuses to give a place back, as a store gone at that moment would. */
  let releaseFails = false;
  const logged: Record<string, unknown>[] = [];
  let dispatcher: ReturnType<typeof createDispatcher>;

  beforeAll(async () => {
    if (kind === 'postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations, auditWriter } : { dataDir: 'memory://', migrations: familyMigrations, auditWriter });
    const now = Date.now();
    for (const agentId of [AGENT, 'agt_full']) {
      await voiceRepo(store.sql).insert({
        id: `voice_${agentId}`, agentId, orgId: 'org_order', name: 'main', description: null, active: true, source: 'cli',
        activeVersion: null, createdBy: 'usr_order', createdAt: now, updatedAt: now,
      });
    }
    const sql: Sql = {
      kind: store.sql.kind,
      query: (text, params, options) => (releaseFails && text.startsWith('delete from telephony_dispatches where id') ? Promise.reject(new Error('store unreachable')) : store.sql.query(text, params, options)),
      queryThenCommit: (text, params, options) => store.sql.queryThenCommit(text, params, options),
      exec: (text) => store.sql.exec(text),
      transaction: (fn) => store.sql.transaction(fn),
      listen: (channel, onNotify, onDown) => store.sql.listen(channel, onNotify, onDown),
      close: () => store.sql.close(),
    };
    const logger = createLogger('warn', 'test', { write: (line: string) => logged.push(JSON.parse(line) as Record<string, unknown>) });
    const deps = { store: { ...store, sql, unitOfWork: store.unitOfWork }, logger, vendors: { voiceCalls: spy }, limiter: undefined, metrics: createMetrics('api').families } as unknown as TelephonyDeps;
    dispatcher = createDispatcher(deps);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  const ledger = async (agentId = AGENT) => store.sql.query('select id, at, answered from telephony_dispatches where agent_id = $1 order by id', [agentId]);
  const dispatch = (body: Record<string, unknown>, agentId = AGENT) => dispatcher.dispatch(actor(agentId), body as DispatchBody, reply);

  it('refuses before the budget and the platform: nothing placed, the ledger unchanged', async () => {
    expect(await dispatch({ to: '+14155550100' })).toMatchObject({ sessionId: expect.any(String) });
    expect(placed).toHaveLength(1);
    const before = await ledger();
    const refusals: [Record<string, unknown>, number][] = [
      [{ to: '+14155550100', threadId: 'thread\u0000one' }, 400],
      [{ to: '+14155550100', threadId: 'thread-\ud800' }, 400],
      [{ to: '+14155550100', threadId: '\udc00' }, 400],
      [{ to: 'not-a-number' }, 400],
      [{ to: '+14155550100', context: { blob: 'x'.repeat(16 * 1024) } }, 400],
      [{ to: '+14155550100', voice: 'no-such-voice' }, 403],
      [{ to: { kind: 'phone', number: '+14155550100', callerId: '+15550100998' } }, 403],
    ];
    for (const [body, status] of refusals) {
      await expect(dispatch(body), JSON.stringify(body)).rejects.toMatchObject({ statusCode: status });
    }
    expect(placed).toHaveLength(1);
    expect(await ledger()).toEqual(before);
    // A threadId the store can hold, astral and unusual characters included, is placed and recorded as given.
    const odd = 'th\u{1F4DE}\uFFFF\u2028\\u0000';
    const res = await dispatch({ to: '+14155550100', threadId: odd });
    const rows = await store.sql.query<{ details: { threadId: string } }>(`select details from audit_log where action = 'telephony.voice.dispatched' and details->>'sessionId' = $1`, [res.sessionId]);
    expect(rows[0]?.details.threadId).toBe(odd);
  });

  it('a budget refusal reaches no platform either', async () => {
    const before = placed.length;
    for (let i = 0; i < 100; i++) await dispatch({ to: '+14155550100' }, 'agt_full');
    expect(placed.length - before).toBe(100);
    const full = await ledger('agt_full');
    await expect(dispatch({ to: '+14155550100' }, 'agt_full')).rejects.toMatchObject({ statusCode: 429 });
    expect(placed.length - before).toBe(100);
    expect(await ledger('agt_full')).toEqual(full);
  });

  it('a call the platform did not place gives its place back; should the store fail then, the platform\'s failure is answered', async () => {
    const before = await ledger();
    platformDown = new Error('platform unavailable');
    try {
      await expect(dispatch({ to: '+14155550100' })).rejects.toBe(platformDown);
      expect(await ledger()).toEqual(before);
      releaseFails = true;
      await expect(dispatch({ to: '+14155550100' })).rejects.toBe(platformDown);
    } finally {
      platformDown = undefined;
      releaseFails = false;
    }
    expect(logged.find((l) => l.event === 'telephony.voice.dispatch_place_kept')).toMatchObject({ agentId: AGENT, err: { message: 'store unreachable' } });
    // The place kept counts until it leaves the window: one more row than before, not answered.
    const after = await ledger();
    expect(after).toHaveLength(before.length + 1);
    expect(after.filter((r) => !r.answered)).toHaveLength(1);
  });

  it('answers a placed call with its session when the record cannot be written; the place stays spent', async () => {
    const before = placed.length;
    const reserved = (await ledger()).length;
    failing.add('telephony.voice.dispatched');
    let res: Record<string, unknown> | undefined;
    try {
      res = await dispatch({ to: '+14155550100', threadId: 'after-placement' });
    } finally {
      failing.delete('telephony.voice.dispatched');
    }
    expect(placed.length - before).toBe(1);
    expect(res).toEqual({ sessionId: placed.at(-1)!.sessionId, roomName: placed.at(-1)!.roomName, callId: expect.any(String) });
    expect(await ledger()).toHaveLength(reserved + 1);
    expect(logged.find((l) => l.sessionId === res!.sessionId)).toMatchObject({ event: 'telephony.voice.dispatch_unrecorded', callId: res!.callId, threadId: 'after-placement' });
  });
});
