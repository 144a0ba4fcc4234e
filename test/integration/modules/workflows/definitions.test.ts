/**
 * GET /workflows/:agentId/definitions (spec 03 part 4.3, contract W1, W5): the path agent's
 * deployed definitions from the seed, the form and includeComposed filters, cursor paging, the
 * workflow error shape, and who may read them (workflows:read on the agent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startWorkflowsApi, WF_BASE } from '../../../helpers/workflows.js';

describe('workflow definitions', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startWorkflowsApi({ WORKFLOW_RATE_LIMIT_READ_PER_MIN: '10000' });
  });
  afterAll(async () => {
    await app?.stop();
  });
  const get = (path: string, token = 'lk_wf_read') => app.request('GET', `${WF_BASE}/definitions${path}`, { token });

  it('lists the agent\'s deployed definitions, chat-composed ones left out unless asked for', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    const ids = res.body.items.map((d: { workflowId: string }) => d.workflowId).sort();
    expect(ids).toEqual(['wf_big', 'wf_draft', 'wf_flaky', 'wf_report', 'wf_script', 'wf_slow']);
    expect(res.body.nextCursor).toBeNull();
    const report = res.body.items.find((d: { workflowId: string }) => d.workflowId === 'wf_report');
    expect(report).toEqual({
      workflowId: 'wf_report', name: 'nightly-report', description: 'the nightly report', form: 'graph', dynamic: false, active: true,
      activeVersionId: 'wfv_report_2', updatedAt: expect.any(Number),
      inputSchema: { type: 'object', required: ['day'], properties: { day: { type: 'string' }, level: { enum: ['low', 'high'] } } },
    });
    // No active version: not active, no default version.
    const draft = res.body.items.find((d: { workflowId: string }) => d.workflowId === 'wf_draft');
    expect(draft.active).toBe(false);
    expect(draft).not.toHaveProperty('activeVersionId');

    const all = await get('?includeComposed=true');
    expect(all.body.items.map((d: { workflowId: string }) => d.workflowId)).toContain('wf_composed');
    expect(all.body.items.find((d: { workflowId: string }) => d.workflowId === 'wf_composed').dynamic).toBe(true);
  });

  it('filters by form', async () => {
    const scripts = await get('?form=script');
    expect(scripts.body.items.map((d: { workflowId: string }) => d.workflowId)).toEqual(['wf_script']);
    const graphs = await get('?form=graph');
    expect(graphs.body.items.every((d: { form: string }) => d.form === 'graph')).toBe(true);
  });

  it('pages with a cursor, each definition once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`?includeComposed=true&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((d: { workflowId: string }) => d.workflowId));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(seen.sort()).toEqual(['wf_big', 'wf_composed', 'wf_draft', 'wf_flaky', 'wf_report', 'wf_script', 'wf_slow']);
    expect(pages).toBe(4);
  });

  it('answers a bad parameter with VALIDATION_FAILED and details[], a foreign cursor with BAD_CURSOR', async () => {
    const limit = await get('?limit=101');
    expect(limit.status).toBe(400);
    expect(limit.body).toMatchObject({
      statusCode: 400, code: 'VALIDATION_FAILED', message: 'limit must be an integer from 1 to 100',
      details: [{ path: 'limit', constraint: 'pattern', message: 'limit must be an integer from 1 to 100' }],
    });
    expect(limit.body).not.toHaveProperty('error');
    const form = await get('?form=flow');
    expect(form.body.details).toEqual([{ path: 'form', constraint: expect.any(String), message: 'form must be graph or script' }]);
    const cursor = await get(`?cursor=${Buffer.from('["x"]').toString('base64url')}`);
    expect(cursor.status).toBe(400);
    expect(cursor.body).toEqual({ statusCode: 400, code: 'BAD_CURSOR', message: 'cursor is not a cursor this route returned for this sort' });
  });

  it('holds only the path agent\'s definitions', async () => {
    const other = await app.request('GET', '/workflows/agt_other/definitions', { token: 'lk_wf_read' });
    expect(other.body.items.map((d: { workflowId: string }) => d.workflowId)).toEqual(['wf_other']);
  });

  it('needs workflows:read on a visible agent', async () => {
    expect((await get('', 'lk_wf_outputs')).status).toBe(200);
    expect((await get('', 'sess_max')).status).toBe(200);
    const none = await get('', 'lk_wf_none');
    expect(none.status).toBe(403);
    expect(none.body).toEqual({
      statusCode: 403, code: 'INSUFFICIENT_SCOPE', message: 'This credential lacks the workflows:read scope.',
      resourceType: 'agent', resourceId: 'agt_support', requiredScope: 'workflows:read',
    });
    const foreign = await get('', 'lk_wf_globex');
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('RESOURCE_NOT_PROJECTED');
    const anonymous = await app.request('GET', `${WF_BASE}/definitions`);
    expect(anonymous.status).toBe(401);
  });
});
