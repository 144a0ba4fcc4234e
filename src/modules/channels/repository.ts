/** The channels family's SQL: delivery records, inbound messages, receipt events. */
import type { Sql } from '../../store/sql.js';
import { auditFrom, auditParamsOf, type AuditEntry } from '../../store/audit-repo.js';
import type { Delivery, DeliveryOrigin, DeliveryStatus, Failure, HistoryEntry, SendChannel } from './model.js';

interface DeliveryRow {
  id: string; org_id: string; agent_id: string; channel: string; channel_identifier: string | null; sender: string;
  recipient: unknown; user_id: string | null; address: string | null; provider: string; origin: string; status: string;
  failure: unknown; history: unknown; message_id: string | null; template: string | null; idempotency_key: string | null;
  cost: unknown; pending?: unknown; created_at: Date | string; updated_at: Date | string;
}

export interface InboundMessage {
  agentId: string;
  userId: string;
  channel: SendChannel;
  address: string;
  conversationId: string | null;
  messageId: string;
  receivedAt: Date;
}
interface InboundRow {
  agent_id: string; user_id: string; channel: string; address: string; conversation_id: string | null; message_id: string; received_at: Date | string;
}

// jsonb arrives parsed from pg and PGlite alike; a string only from a driver that does not parse it.
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

function deliveryOf(r: DeliveryRow): Delivery {
  return {
    id: r.id, orgId: r.org_id, agentId: r.agent_id, channel: r.channel as SendChannel, channelIdentifier: r.channel_identifier,
    from: r.sender, to: json(r.recipient), userId: r.user_id, address: r.address, provider: r.provider, origin: r.origin as DeliveryOrigin,
    status: r.status as DeliveryStatus, failure: r.failure === null ? null : json<Failure>(r.failure), history: json<HistoryEntry[]>(r.history),
    messageId: r.message_id, template: r.template, idempotencyKey: r.idempotency_key, cost: r.cost === null ? null : json(r.cost),
    createdAt: date(r.created_at), updatedAt: date(r.updated_at),
  };
}
const inboundOf = (r: InboundRow): InboundMessage => ({
  agentId: r.agent_id, userId: r.user_id, channel: r.channel as SendChannel, address: r.address, conversationId: r.conversation_id,
  messageId: r.message_id, receivedAt: date(r.received_at),
});

export interface DeliveryFilter {
  userId?: string | undefined;
  status?: DeliveryStatus | undefined;
  channel?: SendChannel | undefined;
  since?: Date | undefined;
  limit: number;
}

/** A delivery's columns but what a queued send will send (`pending`, which no read form shows). */
const READ_COLUMNS = `id, org_id, agent_id, channel, channel_identifier, sender, recipient, user_id, address, provider, origin, status,
  failure, history, message_id, template, idempotency_key, cost, created_at, updated_at`;

/** The parameters of a delivery's insert, in its columns' order. */
const deliveryParams = (d: Delivery, pending: unknown): unknown[] => [
  d.id, d.orgId, d.agentId, d.channel, d.channelIdentifier, d.from, JSON.stringify(d.to), d.userId, d.address, d.provider, d.origin,
  d.status, d.failure === null ? null : JSON.stringify(d.failure), JSON.stringify(d.history), d.messageId, d.template, d.idempotencyKey,
  d.cost === null ? null : JSON.stringify(d.cost), pending === null ? null : JSON.stringify(pending), d.createdAt.toISOString(), d.updatedAt.toISOString(),
];

export function createChannelsRepo(sql: Sql) {
  return {
    async insertDelivery(d: Delivery, pending: unknown = null): Promise<void> {
      await sql.query(
        `insert into channel_deliveries (id, org_id, agent_id, channel, channel_identifier, sender, recipient, user_id, address, provider, origin,
           status, failure, history, message_id, template, idempotency_key, cost, pending, created_at, updated_at)
         values ($1,$2,$3,$4,$5,$6,$7::jsonb,$8,$9,$10,$11,$12,$13::jsonb,$14::jsonb,$15,$16,$17,$18::jsonb,$19::jsonb,$20,$21)`,
        deliveryParams(d, pending),
        { prepare: 'channels_insert_delivery' },
      );
    },

    /**
     * `insertDelivery` with its audit entry, in one statement run on its own (a send without an
     * idempotency key to complete): one round trip, the row and its entry committed together.
     * Outside a transaction only (`sql` the store's connection): the statement is its own.
     */
    async insertDeliveryAudited(d: Delivery, pending: unknown, audit: AuditEntry): Promise<void> {
      await sql.query(
        `with inserted as (
           insert into channel_deliveries (id, org_id, agent_id, channel, channel_identifier, sender, recipient, user_id, address, provider, origin,
             status, failure, history, message_id, template, idempotency_key, cost, pending, created_at, updated_at)
           values ($1,$2,$3,$4,$5,$6,$7::jsonb,$8,$9,$10,$11,$12,$13::jsonb,$14::jsonb,$15,$16,$17,$18::jsonb,$19::jsonb,$20,$21)
           returning id
         )
         ${auditFrom('inserted', 22)}`,
        [...deliveryParams(d, pending), ...auditParamsOf(audit)],
        { prepare: 'channels_insert_delivery_audited' },
      );
    },

    /**
     * Records many deliveries with one statement (a bulk trigger's, up to 1,000): the rows go as
     * one JSON array, so the statement's size, not its parameter count, grows with them.
     */
    async insertDeliveries(ds: readonly Delivery[]): Promise<void> {
      if (ds.length === 0) return;
      const rows = ds.map((d) => ({
        id: d.id, org_id: d.orgId, agent_id: d.agentId, channel: d.channel, channel_identifier: d.channelIdentifier, sender: d.from,
        recipient: d.to, user_id: d.userId, address: d.address, provider: d.provider, origin: d.origin, status: d.status, failure: d.failure,
        history: d.history, message_id: d.messageId, template: d.template, idempotency_key: d.idempotencyKey, cost: d.cost,
        created_at: d.createdAt.toISOString(), updated_at: d.updatedAt.toISOString(),
      }));
      await sql.query(
        `insert into channel_deliveries (id, org_id, agent_id, channel, channel_identifier, sender, recipient, user_id, address, provider, origin,
           status, failure, history, message_id, template, idempotency_key, cost, created_at, updated_at)
         select id, org_id, agent_id, channel, channel_identifier, sender, recipient, user_id, address, provider, origin,
           status, failure, history, message_id, template, idempotency_key, cost, created_at, updated_at
         from jsonb_to_recordset($1::jsonb) as r(id text, org_id text, agent_id text, channel text, channel_identifier text, sender text,
           recipient jsonb, user_id text, address text, provider text, origin text, status text, failure jsonb, history jsonb,
           message_id text, template text, idempotency_key text, cost jsonb, created_at timestamptz, updated_at timestamptz)`,
        [JSON.stringify(rows)],
      );
    },

    async getDelivery(agentId: string, id: string): Promise<Delivery | undefined> {
      const rows = await sql.query<DeliveryRow>('select * from channel_deliveries where agent_id = $1 and id = $2', [agentId, id]);
      return rows[0] && deliveryOf(rows[0]);
    },

    /** The newest delivery with this vendor message id (of the organization `orgId`, when given). */
    async deliveryByMessageId(messageId: string, provider?: string, orgId?: string): Promise<Delivery | undefined> {
      const rows = await sql.query<DeliveryRow>(
        `select * from channel_deliveries where message_id = $1 and ($2::text is null or provider = $2) and ($3::text is null or org_id = $3)
         order by created_at desc limit 1`,
        [messageId, provider ?? null, orgId ?? null],
      );
      return rows[0] && deliveryOf(rows[0]);
    },

    /** Newest first by createdAt (then id). */
    async listDeliveries(agentId: string, f: DeliveryFilter): Promise<Delivery[]> {
      const rows = await sql.query<DeliveryRow>(
        `select ${READ_COLUMNS} from channel_deliveries
         where agent_id = $1 and ($2::text is null or user_id = $2) and ($3::text is null or status = $3)
           and ($4::text is null or channel = $4) and ($5::timestamptz is null or created_at >= $5)
         order by created_at desc, id desc limit $6`,
        [agentId, f.userId ?? null, f.status ?? null, f.channel ?? null, f.since?.toISOString() ?? null, f.limit],
        { prepare: 'channels_list_deliveries' },
      );
      return rows.map(deliveryOf);
    },

    /**
     * Moves a delivery from `from` to `to` with a history entry, only if it is still at `from`
     * (a move decided on a stale read never undoes a concurrent one). Fields set alongside: the
     * failure, and for a queued send that went out its message id, provider and origin.
     */
    async move(id: string, from: DeliveryStatus, to: DeliveryStatus, entry: HistoryEntry, set: { failure?: Failure; messageId?: string; provider?: string; origin?: DeliveryOrigin } = {}): Promise<boolean> {
      const rows = await sql.query(
        `update channel_deliveries set status = $3, history = history || $4::jsonb, updated_at = $5,
           failure = coalesce($6::jsonb, failure), message_id = coalesce($7, message_id), provider = coalesce($8, provider),
           origin = coalesce($9, origin), pending = case when $3 = 'queued' then pending else null end
         where id = $1 and status = $2 returning 1`,
        [id, from, to, JSON.stringify([entry]), entry.at, set.failure ? JSON.stringify(set.failure) : null, set.messageId ?? null, set.provider ?? null, set.origin ?? null],
      );
      return rows.length > 0;
    },

    async queuedOlderThan(before: Date, limit: number): Promise<{ id: string }[]> {
      return sql.query<{ id: string }>(
        "select id from channel_deliveries where status = 'queued' and created_at < $1 order by created_at limit $2",
        [before.toISOString(), limit],
      );
    },

    /** Queued chat-app sends to an end user (by user id or address), oldest first, with what they send. */
    async queuedFor(agentId: string, userId: string, address: string): Promise<{ delivery: Delivery; pending: unknown }[]> {
      const rows = await sql.query<DeliveryRow>(
        `select * from channel_deliveries where agent_id = $1 and status = 'queued' and channel = 'chatapp' and (user_id = $2 or address = $3)
         order by created_at, id`,
        [agentId, userId, address],
      );
      return rows.map((r) => ({ delivery: deliveryOf(r), pending: json(r.pending) }));
    },

    /** The seed's inbound message written: inserted, or (by agent, channel and message id) given the seed's user, address, conversation and time. */
    async upsertSeededInbound(m: { agentId: string; userId: string; channel: string; address: string; conversationId: string | null; messageId: string; receivedAt: string }): Promise<void> {
      await sql.query(
        `insert into channel_inbound_messages (agent_id, user_id, channel, address, conversation_id, message_id, received_at) values ($1,$2,$3,$4,$5,$6,$7)
         on conflict (agent_id, channel, message_id) do update set user_id = excluded.user_id, address = excluded.address,
           conversation_id = excluded.conversation_id, received_at = excluded.received_at`,
        [m.agentId, m.userId, m.channel, m.address, m.conversationId, m.messageId, m.receivedAt],
      );
    },

    async insertInbound(m: InboundMessage): Promise<boolean> {
      const rows = await sql.query(
        `insert into channel_inbound_messages (agent_id, user_id, channel, address, conversation_id, message_id, received_at)
         values ($1,$2,$3,$4,$5,$6,$7) on conflict (agent_id, channel, message_id) do nothing returning 1`,
        [m.agentId, m.userId, m.channel, m.address, m.conversationId, m.messageId, m.receivedAt.toISOString()],
      );
      return rows.length > 0;
    },

    /** The newest inbound message of an end user to the agent, on one channel or any. */
    async newestFromUser(agentId: string, userId: string, channel?: SendChannel): Promise<InboundMessage | undefined> {
      const rows = await sql.query<InboundRow>(
        `select * from channel_inbound_messages where agent_id = $1 and user_id = $2 and ($3::text is null or channel = $3)
         order by received_at desc limit 1`,
        [agentId, userId, channel ?? null],
        { prepare: 'channels_newest_from_user' },
      );
      return rows[0] && inboundOf(rows[0]);
    },

    async newestFromAddress(agentId: string, channel: SendChannel, address: string): Promise<InboundMessage | undefined> {
      const rows = await sql.query<InboundRow>(
        'select * from channel_inbound_messages where agent_id = $1 and channel = $2 and address = $3 order by received_at desc limit 1',
        [agentId, channel, address],
        { prepare: 'channels_newest_from_address' },
      );
      return rows[0] && inboundOf(rows[0]);
    },

    /**
     * The chat-app address of each of these end users (of their newest chat-app message to the agent);
     * a user who never wrote on the chat-app is absent. One query for a bulk trigger's recipients.
     */
    async chatappAddressesOf(agentId: string, userIds: readonly string[]): Promise<Map<string, string>> {
      if (userIds.length === 0) return new Map();
      const rows = await sql.query<{ user_id: string; address: string }>(
        `select distinct on (user_id) user_id, address from channel_inbound_messages
         where agent_id = $1 and channel = 'chatapp' and user_id = any($2::text[])
         order by user_id, received_at desc`,
        [agentId, [...new Set(userIds)]],
      );
      return new Map(rows.map((r) => [r.user_id, r.address]));
    },

    /** The end user who last wrote to the agent on the chat-app from each of these numbers; unknown numbers are absent. */
    async chatappUsersAt(agentId: string, addresses: readonly string[]): Promise<Map<string, string>> {
      if (addresses.length === 0) return new Map();
      const rows = await sql.query<{ user_id: string; address: string }>(
        `select distinct on (address) address, user_id from channel_inbound_messages
         where agent_id = $1 and channel = 'chatapp' and address = any($2::text[])
         order by address, received_at desc`,
        [agentId, [...new Set(addresses)]],
      );
      return new Map(rows.map((r) => [r.address, r.user_id]));
    },

    async conversation(agentId: string, conversationId: string): Promise<InboundMessage | undefined> {
      const rows = await sql.query<InboundRow>(
        `select * from channel_inbound_messages where agent_id = $1 and channel = 'workchat' and conversation_id = $2
         order by received_at desc limit 1`,
        [agentId, conversationId],
      );
      return rows[0] && inboundOf(rows[0]);
    },

    async inboundByMessageId(agentId: string, messageId: string): Promise<InboundMessage | undefined> {
      const rows = await sql.query<InboundRow>('select * from channel_inbound_messages where agent_id = $1 and message_id = $2 limit 1', [agentId, messageId]);
      return rows[0] && inboundOf(rows[0]);
    },

    async sentMessage(agentId: string, messageId: string): Promise<Delivery | undefined> {
      const rows = await sql.query<DeliveryRow>('select * from channel_deliveries where agent_id = $1 and message_id = $2 limit 1', [agentId, messageId]);
      return rows[0] && deliveryOf(rows[0]);
    },

    /** Records a vendor event id once per organization: false when the organization sent it before. */
    async claimReceiptEvent(orgId: string, provider: string, eventId: string, deliveryId: string | null, at: Date): Promise<boolean> {
      const rows = await sql.query(
        `insert into channel_receipt_events (org_id, provider, event_id, delivery_id, received_at) values ($1,$2,$3,$4,$5)
         on conflict do nothing returning 1`,
        [orgId, provider, eventId, deliveryId, at.toISOString()],
      );
      return rows.length > 0;
    },

    async agent(agentId: string): Promise<{ id: string; orgId: string; name: string } | undefined> {
      const rows = await sql.query<{ id: string; org_id: string; name: string }>('select id, org_id, name from agents where id = $1', [agentId]);
      return rows[0] && { id: rows[0].id, orgId: rows[0].org_id, name: rows[0].name };
    },
  };
}

export type ChannelsRepo = ReturnType<typeof createChannelsRepo>;
