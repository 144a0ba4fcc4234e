/**
 * A client that hangs up mid-body on a workflow control route: the body reader's error (the
 * request's own socket, `aborted`, ECONNRESET) says nothing about the store, so it is not logged
 * or answered as the store being unavailable, and the server goes on serving. Through a real
 * socket: the headers and half the body, then the socket destroyed once the body is being read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/app.js';
import { startAbortingApi, type AbortingApi } from '../../helpers/aborted-body.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';

const START = `${WF_BASE}/runs`;

describe('a client aborting mid-body on a workflow control route', () => {
  let api: AbortingApi;

  beforeAll(async () => {
    api = await startAbortingApi({ method: 'POST', url: '/workflows/:agentId/runs', seedFile: writeWorkflowsSeed(), env: { WORKFLOW_EXECUTOR: 'false' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is not taken for the store being unavailable, and the server keeps serving', async () => {
    const { events, base } = api;
    const body = JSON.stringify({ workflowName: 'slow', input: { note: 'x'.repeat(400) } });
    await api.abortMidBody(
      `POST ${START} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer lk_wf_all\r\nContent-Type: application/json\r\nIdempotency-Key: aborted-1\r\n`,
      body,
    );

    const gone = await waitFor(() => events.find((e) => e.event === 'api.client_gone'), { what: 'the aborted request to reach the error handler' });
    expect(events.filter((e) => e.reqId === gone.reqId).map((e) => e.event)).not.toContain('api.store_unavailable');
    expect(events.map((e) => e.event)).not.toContain('api.store_unavailable');

    const started = await fetch(base + START, {
      method: 'POST', headers: { authorization: 'Bearer lk_wf_all', 'content-type': 'application/json', 'idempotency-key': 'after-abort-1' },
      body: JSON.stringify({ workflowName: 'slow' }),
    });
    expect(started.status).toBe(202);
    // The aborted start wrote nothing: its key is free and makes a run of its own.
    const again = await fetch(base + START, {
      method: 'POST', headers: { authorization: 'Bearer lk_wf_all', 'content-type': 'application/json', 'idempotency-key': 'aborted-1' },
      body: JSON.stringify({ workflowName: 'slow' }),
    });
    expect(again.status).toBe(202);
  });
});
