/** Records for tests: CONTRACT part 3 records built field by field, and a helper to post them. */
import type { AgentRecord } from '../../src/model/record.js';
import type { TestApp } from './app.js';

let n = 0;

export function record(p: Partial<AgentRecord> = {}): AgentRecord {
  n++;
  return {
    id: `rec-${process.pid}-${n}`,
    orgId: 'org_acme',
    agentId: 'agt_support',
    agentName: 'support-bot',
    environment: 'production',
    source: 'mcp',
    event: 'call',
    severity: 'info',
    timestamp: new Date().toISOString(),
    executionId: `exe-${n}`,
    message: `message ${n}`,
    ...p,
  };
}

export function records(count: number, p: Partial<AgentRecord> = {}): AgentRecord[] {
  return Array.from({ length: count }, () => record(p));
}

export async function ingest(app: TestApp, recs: AgentRecord[], token = 'lk_acme_ingest'): Promise<void> {
  const res = await app.request('POST', '/internal/records', { token, body: recs });
  if (res.status !== 202 || res.body.rejected.length > 0) throw new Error(`ingest failed: ${JSON.stringify(res.body)}`);
}
