/**
 * The bulk capability check's list (src/modules/telephony/rcs/bulk-list.ts): the numbering-plan
 * checks of a long list run in slices that give the event loop back, so what else the process has
 * to do (a /healthz, another organization's request) runs while a list is being checked.
 */
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bulkList } from '../../../../src/modules/telephony/rcs/bulk-list.js';

/** 10,000 UK mobile numbers: among the costliest for the numbering-plan checks. */
const LIST = Array.from({ length: 10_000 }, (_, i) => `+447${String(700900000 + i)}`);

describe('bulkList', () => {
  it('gives the event loop back while it checks: a callback queued before the check runs before it ends', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('turn'));
    await bulkList({ phoneNumbers: LIST }).then(() => order.push('checked'));
    expect(order).toEqual(['turn', 'checked']);
  });

  it('over real sockets: a request that arrives while a list is being checked is answered first', async () => {
    const order: string[] = [];
    let healthz: Promise<void> | undefined;
    const server = createServer((req, res) => {
      if (req.url === '/healthz') {
        res.end('ok');
        return;
      }
      // The check starts with the other request on its way: it can only be answered if the check yields.
      healthz = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`).then(async (r) => {
        await r.text();
        order.push('healthz');
      });
      void bulkList({ phoneNumbers: LIST }).then((l) => res.end(String(l.length)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/bulk`);
      expect(await res.text()).toBe('10000');
      order.push('bulk');
      await healthz;
      expect(order).toEqual(['healthz', 'bulk']);
    } finally {
      server.close();
    }
  });

  it('answers the count before any entry, and the syntax before any numbering-plan check', async () => {
    const over = [...LIST, '+447700919999'];
    over[0] = 'garbage';
    await expect(bulkList({ phoneNumbers: over })).rejects.toMatchObject({ details: { field: 'phoneNumbers', message: ['phoneNumbers must contain 500 to 10,000 numbers'] } });
    const mixed = LIST.slice(0, 500);
    mixed[0] = '+1415';
    mixed[499] = '447700900499';
    await expect(bulkList({ phoneNumbers: mixed })).rejects.toMatchObject({ details: { message: ['phoneNumbers.499 must be an E.164 phone number (+ and digits)'] } });
  });
});
