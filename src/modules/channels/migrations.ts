/** The channels family's tables: delivery records, end users' inbound messages, receipt events seen. */
import type { Migration } from '../../store/migrate.js';

export const channelMigrations: readonly Migration[] = [
  {
    id: 'channels/001-deliveries',
    sql: /* sql */ `
create table channel_deliveries (
  id text primary key,
  org_id text not null,
  agent_id text not null,
  channel text not null,
  channel_identifier text,
  sender text not null,
  recipient jsonb not null,
  user_id text,
  address text,
  provider text not null,
  origin text not null,
  status text not null check (status in ('queued', 'accepted', 'sent', 'delivered', 'read', 'failed', 'expired')),
  failure jsonb,
  history jsonb not null,
  message_id text,
  template text,
  idempotency_key text,
  cost jsonb,
  -- What a queued send sends once the end user writes again.
  pending jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index channel_deliveries_agent on channel_deliveries (agent_id, created_at desc, id desc);
create index channel_deliveries_message on channel_deliveries (message_id) where message_id is not null;
create index channel_deliveries_queued on channel_deliveries (created_at) where status = 'queued';

create table channel_inbound_messages (
  agent_id text not null,
  user_id text not null,
  channel text not null,
  address text not null,
  conversation_id text,
  message_id text not null,
  received_at timestamptz not null,
  primary key (agent_id, channel, message_id)
);
create index channel_inbound_user on channel_inbound_messages (agent_id, user_id, channel, received_at desc);
create index channel_inbound_address on channel_inbound_messages (agent_id, channel, address, received_at desc);
create index channel_inbound_message on channel_inbound_messages (agent_id, message_id);

create table channel_receipt_events (
  provider text not null,
  event_id text not null,
  delivery_id text,
  received_at timestamptz not null,
  primary key (provider, event_id)
);
`,
  },
];
