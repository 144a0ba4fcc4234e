import { describe, expect, it } from 'vitest';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import type { AgentRecord } from '../../../src/model/record.js';

const rec: AgentRecord = {
  id: 'r1', orgId: 'o', agentId: 'a', agentName: 'bot', environment: 'production', source: 'mcp', event: 'error',
  severity: 'warn', timestamp: '2026-01-01T00:00:00Z', executionId: 'exe_9', message: 'failed',
  attributes: { tool: 'search', empty: '', secret_key: 'x', n: 3 },
};

describe('shapeRecord', () => {
  it('builds eventName, the severity pair and flat attributes without empty values', () => {
    const out = shapeRecord(rec, '2026-01-01T00:00:01.000Z', { includeContent: false, redact: new Set(['secret_key']) });
    expect(out).toEqual({
      id: 'r1', timestamp: '2026-01-01T00:00:00Z', observedTimestamp: '2026-01-01T00:00:01.000Z',
      eventName: 'svc.mcp.error', severityNumber: 13, severityText: 'WARN', body: 'failed',
      attributes: { tool: 'search', n: 3, 'svc.execution.id': 'exe_9' },
    });
  });

  it('withholds the body of content records unless the drain includes content', () => {
    const content = { ...rec, source: 'user_message', event: 'sent' };
    const withheld = shapeRecord(content, 't', { includeContent: false, redact: null });
    expect(withheld.body).toBeUndefined();
    expect(withheld.attributes['svc.content.withheld']).toBe(true);
    const included = shapeRecord(content, 't', { includeContent: true, redact: null });
    expect(included.body).toBe('failed');
    expect(included.attributes['svc.content.withheld']).toBeUndefined();
  });
});
