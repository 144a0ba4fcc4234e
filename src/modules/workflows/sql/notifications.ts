/**
 * The run-end notification sender's statements (notifier.ts). Every write names the sender
 * (`senderId`) and is conditional on its claim; `sql` is the sender's own handle (one that refuses
 * every statement once the sender is dead).
 */
import type { Sql } from '../../../store/sql.js';

/** A run-end notification (the outbox row). */
export interface NotificationRow {
  id: string;
  run_id: string;
  kind: 'email' | 'app' | 'target' | 'callback';
  channel: string | null;
  thread: string | null;
  recipient: string | null;
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  delivery_id: string | null;
  error: { code: string; message: string } | null;
  attempts: number;
  next_attempt_at: Date;
  claimed_by: string | null;
  claimed_until: Date | null;
}

/** What a send's outcome writes: the status, attempts so far, and the next attempt `delayMs` from now. */
export interface NotificationSettled {
  status: string;
  attempts: number;
  recipient: string | null;
  channel: string | null;
  deliveryId: string | null;
  /** JSON text, or null. */
  error: string | null;
  delayMs: number;
}

export function notificationStatements(sql: Sql, senderId: string, leaseMs: number) {
  const id = senderId;
  const lease = `now() + ${Math.round(leaseMs)} * interval '1 millisecond'`;
  const free = '(claimed_until is null or claimed_until < now())';
  return {
    /** Claims the first due pending notification whose claim is free or ran out. */
    async claimDue(): Promise<NotificationRow | undefined> {
      const [n] = await sql.query<NotificationRow>(
        `update workflow_run_notifications set claimed_by = $1, claimed_until = ${lease}, updated_at = now()
       where id = (select id from workflow_run_notifications where status = 'pending' and next_attempt_at <= now() and ${free}
                   order by next_attempt_at, id limit 1 for update skip locked)
         and status = 'pending' and ${free}
       returning *`,
        [id],
      );
      return n;
    },

    /** Writes the outcome while the claim is still this sender's (and releases it); false when it is not. */
    async settle(notificationId: string, s: NotificationSettled): Promise<boolean> {
      const rows = await sql.query(
        `update workflow_run_notifications set status = $3, attempts = $4, recipient = coalesce($5, recipient), channel = coalesce($6, channel),
         delivery_id = $7, error = $8::jsonb, next_attempt_at = now() + $9 * interval '1 millisecond', claimed_by = null, claimed_until = null, updated_at = now()
       where id = $1 and claimed_by = $2 and status = 'pending' returning id`,
        [notificationId, id, s.status, s.attempts, s.recipient, s.channel, s.deliveryId, s.error, s.delayMs],
      );
      return rows.length > 0;
    },

    /** Keeps `deliveryId` on the notification while the claim is this sender's; false when it is not. */
    async keepDeliveryId(notificationId: string, deliveryId: string): Promise<boolean> {
      const rows = await sql.query('update workflow_run_notifications set delivery_id = $3 where id = $1 and claimed_by = $2 and status = \'pending\' returning id', [notificationId, id, deliveryId]);
      return rows.length > 0;
    },

    /** The agent's name. */
    async agentName(agentId: string): Promise<string | undefined> {
      const [agent] = await sql.query<{ name: string }>('select name from agents where id = $1', [agentId]);
      return agent?.name;
    },

    /** The person's email address. */
    async userEmail(userId: string): Promise<string | undefined> {
      const [user] = await sql.query<{ email: string }>('select email from users where id = $1', [userId]);
      return user?.email;
    },
  };
}

/** On `sql` (the store's own handle): the pending notifications sender `senderId` claimed, released. */
export async function releaseClaims(sql: Sql, senderId: string): Promise<void> {
  await sql.query("update workflow_run_notifications set claimed_by = null, claimed_until = null where claimed_by = $1 and status = 'pending'", [senderId]);
}
