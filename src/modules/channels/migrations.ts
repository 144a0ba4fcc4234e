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
  {
    // A vendor event id is the organization's: two organizations (two vendor accounts) may send the
    // same id, and neither may suppress the other's event or learn that the other used it. A row seen
    // before this change takes its organization from its delivery. A row with no delivery to name it
    // (an inbound message's event, or a status event of a delivery since removed) cannot be given
    // one and is dropped: it only stopped a vendor's redelivery of that event, and the inbound
    // message it recorded stays deduplicated by its own (agent, channel, message id) key.
    id: 'channels/002-receipt-events-per-org',
    sql: /* sql */ `
alter table channel_receipt_events add column org_id text;
update channel_receipt_events e set org_id = d.org_id from channel_deliveries d where d.id = e.delivery_id;
delete from channel_receipt_events where org_id is null;
alter table channel_receipt_events alter column org_id set not null;
alter table channel_receipt_events drop constraint channel_receipt_events_pkey;
alter table channel_receipt_events add primary key (org_id, provider, event_id);
`,
  },
  {
    // A delivery's origin is one of the four of contract C20 (model.ts DELIVERY_ORIGINS), as its
    // status is one of the seven: every record written so far is a send route's.
    id: 'channels/003-delivery-origins',
    sql: /* sql */ `
alter table channel_deliveries add constraint channel_deliveries_origin
  check (origin in ('channels_send', 'queued_flush', 'notification', 'template'));
`,
  },
];
