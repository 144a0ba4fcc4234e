/**
 * The claim half of a poll loop (the executor's and the notification sender's): claims work until
 * every slot is busy or nothing is left, runs each piece on its own, and frees its slot as it ends.
 * A piece that fails is reported to `failed`; `settled` runs after every piece (to wake the loop).
 */
export interface SlotPool<T> {
  inflight: Set<Promise<void>>;
  slots: number;
  stopped(): boolean;
  claim(): Promise<T | undefined>;
  run(item: T): Promise<void>;
  failed(item: T, e: unknown): void;
  settled(): void;
}

export async function fillSlots<T>(pool: SlotPool<T>): Promise<void> {
  while (!pool.stopped() && pool.inflight.size < pool.slots) {
    const item = await pool.claim();
    if (item === undefined) break;
    const p: Promise<void> = pool.run(item)
      .catch((e: unknown) => pool.failed(item, e))
      .finally(() => {
        pool.inflight.delete(p);
        pool.settled();
      });
    pool.inflight.add(p);
  }
}
