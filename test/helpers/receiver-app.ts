/**
 * The in-process app (`start`: API + worker on the embedded queue) delivering
 * to a loopback HTTPS receiver, with the settings a delivery test wants (the
 * receiver trusted and allowed, short linger, no heartbeats, no drain rate
 * limit) and verified drains of one organization that a test removes after itself.
 */
import { expect } from 'vitest';
import { startApp, waitFor, type TestApp } from './app.js';
import { startReceiver, type HttpsReceiver } from './receiver.js';

export interface ReceiverApp {
  app: TestApp;
  receiver: HttpsReceiver;
  /** `/admin/orgs/<org>/log-drains` */
  drains: string;
  token: string;
  /** Creates a drain (type http, minSeverity debug unless given), verifies it, waits for `healthy`; deleted by deleteDrains() unless `keep`. */
  verifiedDrain(body: Record<string, unknown>, opts?: { keep?: boolean }): Promise<string>;
  /** Marks a drain created elsewhere for deleteDrains(). */
  track(drainId: string): void;
  /** Deletes the drains created or tracked since the last call (an organization holds 5, or 10 on enterprise). */
  deleteDrains(): Promise<void>;
  stop(): Promise<void>;
}

export async function startReceiverApp(env: Record<string, string> = {}, opts: { orgId?: string; token?: string } = {}): Promise<ReceiverApp> {
  const receiver = await startReceiver();
  const app = await startApp({
    DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BATCH_LINGER_MS: '30', HEARTBEAT_INTERVAL_MS: '0',
    DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    ...env,
  });
  const drains = `/admin/orgs/${opts.orgId ?? 'org_acme'}/log-drains`;
  const token = opts.token ?? 'lk_acme_manage';
  const created: string[] = [];
  return {
    app, receiver, drains, token,
    async verifiedDrain(body, { keep = false } = {}) {
      const res = await app.request('POST', drains, { token, body: { type: 'http', minSeverity: 'debug', ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      if (!keep) created.push(res.body.id);
      // A verification is one attempt under DELIVERY_TIMEOUT_MS, which fault tests set low: on a loaded
      // machine it can time out, so a drain still waiting is verified again (5 attempts an hour are allowed).
      const healthy = async () => (await app.request('GET', `${drains}/${res.body.id}`, { token })).body.state === 'healthy';
      for (let attempt = 1; ; attempt++) {
        await app.request('POST', `${drains}/${res.body.id}/verify`, { token });
        try {
          await waitFor(healthy, { what: 'healthy', timeoutMs: 10_000 });
          break;
        } catch (e) {
          if (attempt === 3) throw e;
        }
      }
      return res.body.id as string;
    },
    track: (id) => void created.push(id),
    async deleteDrains() {
      for (const id of created.splice(0)) await app.request('DELETE', `${drains}/${id}`, { token });
    },
    async stop() {
      await app.stop();
      await receiver.close();
    },
  };
}
