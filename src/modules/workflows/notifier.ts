/**
 * The run-end notification sender (contract W8). The transaction that ends a run writes its
 * notifications (a trigger of migration workflows/005: the outbox); a sender beside each executor
 * sends them after the commit:
 *
 * - a claim takes one due pending notification whose claim is free or ran out, with FOR UPDATE
 *   SKIP LOCKED and a claim held until now + the lease; every outcome is written only while the
 *   claim is still this sender's, so two senders never both send one notification, and one whose
 *   sender died (after the run's commit, before or during the send) is sent by another after the
 *   lease;
 * - `email` goes through the mail port to the creating person's address; `target` and `callback`
 *   through the channels family's port, under a delivery id chosen before the send and kept on the
 *   notification, so a sender that died after the send finds the delivery and sends nothing more;
 * - a vendor failure that may pass is tried again later (doubling backoff, up to the attempt cap),
 *   anything else is recorded `failed`; the run itself is never touched.
 */
import { newId } from '../../model/ids.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Sql } from '../../store/sql.js';
import type { Logger } from '../../telemetry/logger.js';
import type { MailPort } from '../../vendors/mail/port.js';
import type { ChannelNotificationPort, FamilyMetrics } from '../platform-deps.js';
import { runEndSummary } from './model.js';
import { createWorkflowsRepo } from './repository.js';
import { createNap } from './nap.js';
import { fillSlots } from './slots.js';
import { notificationStatements, releaseClaims, type NotificationRow } from './sql/notifications.js';

export interface NotifierOptions {
  store: KernelStore;
  logger: Logger;
  mail: MailPort;
  channels: ChannelNotificationPort;
  /** Sends settled, by kind and outcome (/metrics). */
  metrics?: FamilyMetrics;
  /** How long a claim holds a notification (longer than a vendor's send may take). */
  leaseMs: number;
  /** How often an idle sender looks for due notifications (the executor of its process also wakes it). */
  pollMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Sends tried before the notification is recorded failed. */
  maxAttempts: number;
  /** Notifications sent at a time. */
  slots?: number;
}

export type { NotificationRow } from './sql/notifications.js';

type Problem = { code: string; message: string };
/** How one send ended: `retry` leaves the notification pending until its next attempt. */
type Outcome =
  | { status: 'sent' | 'skipped' | 'failed'; recipient?: string | null; channel?: string | null; deliveryId?: string | null; error?: Problem | null }
  | { status: 'retry'; recipient?: string | null; channel?: string | null; error: Problem };

/** The sender stopped (or, in a test, was made to die): it writes nothing more. */
class Halted extends Error {}

const NO_RECIPIENT: Problem = { code: 'no_recipient', message: 'the run acts for a customer principal: there is no person to email' };

export function createNotifier(o: NotifierOptions) {
  const id = `wfs_${newId()}`;
  const slots = o.slots ?? 4;
  let stopped = false;
  let dead = false;
  const nap = createNap();
  let loopDone: Promise<void> | undefined;
  let started = false;
  const inflight = new Set<Promise<void>>();

  /** Every statement of this sender: none once it is dead. */
  const sql: Sql = new Proxy(o.store.sql, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'query' || prop === 'transaction') {
        return (...args: unknown[]) => {
          if (dead) return Promise.reject(new Halted());
          return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      return v;
    },
  });
  const repo = createWorkflowsRepo(sql);
  const statements = notificationStatements(sql, id, o.leaseMs);

  async function claim(): Promise<NotificationRow | undefined> {
    return statements.claimDue();
  }

  /** Writes the outcome if the claim is still this sender's; false when it is not (nothing written). */
  async function settle(n: NotificationRow, out: Outcome): Promise<boolean> {
    // A notification skipped (no one to send it to) was never tried.
    const attempts = out.status === 'skipped' ? n.attempts : n.attempts + 1;
    const retry = out.status === 'retry' && attempts < o.maxAttempts;
    const status = out.status === 'retry' ? (retry ? 'pending' : 'failed') : out.status;
    const delay = Math.min(o.retryMaxMs, o.retryBaseMs * 2 ** (attempts - 1));
    return statements.settle(n.id, {
      status, attempts, recipient: out.recipient ?? null, channel: out.channel ?? null,
      // A retried channel send gets a delivery of its own: the failed one stays on record.
      deliveryId: out.status === 'retry' ? null : 'deliveryId' in out ? (out.deliveryId ?? null) : n.delivery_id,
      error: out.error ? JSON.stringify(out.error) : null, delayMs: retry ? delay : 0,
    });
  }

  /** The delivery id a channel send goes under: kept on the notification before the send. */
  async function deliveryIdOf(n: NotificationRow): Promise<string | undefined> {
    if (n.delivery_id !== null) return n.delivery_id;
    const chosen = `dlv_${newId()}`;
    return (await statements.keepDeliveryId(n.id, chosen)) ? chosen : undefined;
  }

  async function send(n: NotificationRow): Promise<Outcome | undefined> {
    const run = await repo.run(n.run_id);
    // Erased meanwhile: the notification went with it.
    if (!run) return undefined;
    const steps = (await repo.steps([run.id])).get(run.id) ?? [];
    const summary = runEndSummary(run, steps, (await statements.agentName(run.agent_id)) ?? run.agent_id);
    if (n.kind === 'email') {
      if (run.principal?.kind === 'customer') return { status: 'skipped', error: NO_RECIPIENT };
      const email = await statements.userEmail(run.created_by);
      if (email === undefined) return { status: 'skipped', error: { code: 'no_recipient', message: `the run's creator ${run.created_by} has no email address` } };
      const sent = await o.mail.send({ to: email, cc: [], bcc: [], subject: summary.subject, text: summary.text, attachments: [], references: [] });
      if (sent.ok) return { status: 'sent', recipient: email };
      const error = { code: sent.failure.code ?? sent.failure.category, message: sent.failure.title };
      return sent.failure.retryable ? { status: 'retry', recipient: email, error } : { status: 'failed', recipient: email, error };
    }
    if (n.kind === 'app') return { status: 'sent' };
    const deliveryId = await deliveryIdOf(n);
    if (deliveryId === undefined) return undefined;
    const channel = n.kind === 'target' ? (n.channel as 'chatapp' | 'sms' | 'email' | 'webchat') : undefined;
    const r = await o.channels.send({ orgId: run.org_id, agentId: run.agent_id, channel, thread: n.thread!, subject: summary.subject, text: summary.text, deliveryId });
    switch (r.kind) {
      case 'sent':
        return { status: 'sent', channel: r.channel, deliveryId: r.deliveryId };
      case 'failed':
        return r.retryable ? { status: 'retry', channel: r.channel, error: r.error } : { status: 'failed', channel: r.channel, deliveryId: r.deliveryId, error: r.error };
      case 'refused':
        return { status: 'failed', channel: r.channel, deliveryId: null, error: r.error };
    }
  }

  async function handle(n: NotificationRow): Promise<void> {
    let out: Outcome | undefined;
    try {
      out = await send(n);
    } catch (e) {
      if (e instanceof Halted) return;
      o.logger.warn({ event: 'workflows.notification.send_failed', notificationId: n.id, runId: n.run_id, err: { message: (e as Error).message } }, 'run notification not sent; tried again later');
      out = { status: 'retry', error: { code: 'internal', message: 'the notification could not be sent' } };
    }
    if (out === undefined || dead) return;
    const written = await settle(n, out);
    if (written) {
      // As settle wrote it: a retry past the last attempt is the notification's failure.
      o.metrics?.workflowNotification(n.kind, out.status === 'retry' && n.attempts + 1 >= o.maxAttempts ? 'failed' : out.status);
      o.logger.info({ event: 'workflows.notification.settled', notificationId: n.id, runId: n.run_id, kind: n.kind, status: out.status }, 'run notification settled');
    }
  }

  function wake(): void {
    nap.wake();
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        await fillSlots({
          inflight, slots, stopped: () => stopped, claim, run: handle, settled: wake,
          failed(n, e) {
            if (!(e instanceof Halted)) o.logger.error({ event: 'workflows.notification.error', notificationId: n.id, err: { message: (e as Error).message } }, 'run notification outcome not written');
          },
        });
      } catch (e) {
        if (e instanceof Halted) return;
        o.logger.error({ event: 'workflows.notification.error', err: { message: (e as Error).message } }, 'run notification pass failed');
      }
      if (stopped) break;
      await nap.sleep(o.pollMs);
    }
  }

  return {
    id,
    start(): void {
      if (started || stopped) return;
      started = true;
      loopDone = loop();
    },
    /** Looks for due notifications now (the executor calls it when a run it held ended). */
    wake,
    /** Stops: claims no more, lets the sends under way finish, and frees what it still holds. */
    async stop(): Promise<void> {
      // A dead sender's sends are left as they are (its claims run out).
      if (dead) return;
      stopped = true;
      wake();
      await loopDone;
      await Promise.allSettled([...inflight]);
      await releaseClaims(o.store.sql, id).catch(() => {});
    },
    /** Dies on the spot, as a killed process would: no statement more, its claims left to run out. */
    async die(): Promise<void> {
      dead = true;
      stopped = true;
      wake();
      await loopDone?.catch(() => {});
    },
  };
}

export type Notifier = ReturnType<typeof createNotifier>;
