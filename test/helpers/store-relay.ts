/**
 * A TCP relay to the local Postgres that a test cuts (every connection closed, new ones refused)
 * and restores on the same port: the store's outage as the API sees it, while the test still
 * reads the database directly.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createTestDatabase, type TestDatabase } from './postgres.js';

export interface StoreRelay {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startStoreRelay(target = { host: '127.0.0.1', port: 5432 }): Promise<StoreRelay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () => new Promise<void>((resolve, reject) => {
    const s = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('error', () => {});
        sock.on('close', () => sockets.delete(sock));
      }
      client.pipe(upstream).pipe(client);
    });
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      port = (s.address() as { port: number }).port;
      server = s;
      resolve();
    });
  });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    await new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

/** A fresh test database and a relay to it: `url` reaches the database through the relay. */
export async function relayedDatabase(): Promise<{ db: TestDatabase; relay: StoreRelay; url: string; dispose(): Promise<void> }> {
  const db = await createTestDatabase();
  const relay = await startStoreRelay();
  const url = new URL(db.url);
  url.host = `127.0.0.1:${relay.port}`;
  return {
    db, relay, url: url.toString(),
    async dispose() {
      await relay.close().catch(() => {});
      await db.drop().catch(() => {});
    },
  };
}
