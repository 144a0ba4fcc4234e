/**
 * A seed file for the channel suites, written when a suite starts: the
 * inbound messages' times are relative to now (a live and a closed chat-app
 * window, a message too old to react to).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function writeChannelsSeed(): string {
  const inbound = (userId: string, channel: string, address: string, messageId: string, ageMs: number, conversationId?: string) => ({
    agentId: 'agt_support', userId, channel, address, messageId, receivedAt: ago(ageMs), ...(conversationId ? { conversationId } : {}),
  });
  const seed = {
    orgs: [
      { id: 'org_acme', name: 'Acme', plan: 'standard' },
      { id: 'org_globex', name: 'Globex', plan: 'standard' },
    ],
    users: [
      { id: 'usr_ann', email: 'ann@acme.test', memberships: [{ orgId: 'org_acme', role: 'admin' }] },
      { id: 'usr_gus', email: 'gus@globex.test', memberships: [{ orgId: 'org_globex', role: 'admin' }] },
    ],
    agents: [
      { id: 'agt_support', orgId: 'org_acme', name: 'support-bot', visibility: 'org', version: '1' },
      { id: 'agt_other', orgId: 'org_acme', name: 'other-bot', visibility: 'org', version: '1' },
      { id: 'agt_sales', orgId: 'org_acme', name: 'sales-bot', visibility: 'private', version: '1' },
      { id: 'agt_globex', orgId: 'org_globex', name: 'globex-bot', visibility: 'org', version: '1' },
    ],
    apiKeys: [
      { key: 'lk_send', ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['channels:send'], agentGrants: [] },
      { key: 'lk_wild', ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['channels:*'], agentGrants: [] },
      { key: 'lk_read', ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['*:read', 'logs:manage'], agentGrants: [] },
      { key: 'lk_receipts', ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['channels:receipts'], agentGrants: [] },
      { key: 'lk_globex_send', ownerId: 'usr_gus', orgId: 'org_globex', scopes: ['channels:send', 'channels:receipts'], agentGrants: [] },
    ],
    sessions: [],
    inboundMessages: [
      inbound('usr_chat', 'chatapp', '+15550001111', 'wamid_recent', HOUR),
      inbound('usr_stale', 'chatapp', '+15550002222', 'wamid_stale', 2 * DAY),
      inbound('usr_uk', 'chatapp', '+447700900123', 'wamid_uk', 3 * DAY),
      inbound('usr_old', 'chatapp', '+15550004444', 'wamid_old', 31 * DAY),
      inbound('usr_work', 'workchat', 'W123', 'wc_1', HOUR, 'conv_1'),
      inbound('usr_dm', 'socialdm', 'dm_1', 'dm_msg_1', HOUR),
      inbound('usr_msg', 'socialmsg', 'sm_1', 'sm_msg_1', HOUR),
      inbound('usr_web', 'webchat', 'web_1', 'web_msg_1', HOUR),
      inbound('usr_mail', 'email', 'mail.user@example.com', 'mail_msg_1', HOUR),
      inbound('usr_sms', 'sms', '+15550003333', 'sms_msg_1', HOUR),
    ],
  };
  const dir = mkdtempSync(join(tmpdir(), 'channels-seed-'));
  const path = join(dir, 'seed.json');
  writeFileSync(path, JSON.stringify(seed));
  return path;
}
