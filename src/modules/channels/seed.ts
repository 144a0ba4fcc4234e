/**
 * The seed file's `inboundMessages` array (channels contract C7): past
 * messages from end users to agents, which open a chat-app window and make a
 * recipient warm. Applied idempotently by (agent, channel, messageId).
 */
import type { SeedSection } from '../../seed/seed-file.js';
import { createChannelsRepo } from './repository.js';

interface SeedInbound {
  agentId: string;
  userId: string;
  channel: string;
  address: string;
  conversationId: string | null;
  messageId: string;
  receivedAt: string;
}

const CHANNELS = ['chatapp', 'sms', 'email', 'webchat', 'workchat', 'socialdm', 'socialmsg'];
const TEXT_FIELDS = ['agentId', 'userId', 'address', 'messageId'] as const;

export const inboundMessagesSeed: SeedSection = {
  key: 'inboundMessages',
  check(raw) {
    if (!Array.isArray(raw)) return ['inboundMessages must be an array of objects'];
    const problems: string[] = [];
    raw.forEach((v: unknown, i) => {
      const at = `inboundMessages[${i}]`;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        problems.push(`${at} must be an object`);
        return;
      }
      const m = v as Record<string, unknown>;
      for (const f of TEXT_FIELDS) if (typeof m[f] !== 'string' || m[f] === '') problems.push(`${at}.${f} must be a non-empty string`);
      if (m.channel !== undefined && !CHANNELS.includes(m.channel as string)) problems.push(`${at}.channel must be one of ${CHANNELS.join(', ')}`);
      if (m.conversationId !== undefined && m.conversationId !== null && typeof m.conversationId !== 'string') problems.push(`${at}.conversationId must be a string or null`);
      const at2 = m.receivedAt;
      if (typeof at2 !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(at2) || Number.isNaN(Date.parse(at2))) problems.push(`${at}.receivedAt must be an ISO 8601 date-time`);
    });
    return problems;
  },
  async apply(tx, items) {
    for (const raw of items as Partial<SeedInbound>[]) {
      const m = { ...raw, channel: raw.channel ?? 'chatapp', conversationId: raw.conversationId ?? null } as SeedInbound;
      await createChannelsRepo(tx).upsertSeededInbound(m);
    }
  },
};
