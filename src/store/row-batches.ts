/**
 * Writes that each lock one row for their statement (an agent's persona row, which numbers its
 * versions; a voice's row, under which its versions are pushed), gathered by that row in the
 * process. Ten at once on one row queued in the store one behind the other, and the row's
 * hand-over from each commit to the next waiter cost more than the statements. Here they wait in
 * the process instead: while one statement of a row runs, the writes of that row that come meanwhile
 * wait, and the next statement takes all of them (at most `max`), so that one lock, one round trip
 * and one commit serve them all, in the order they came. A batch is cut at `max` writes, and at
 * `maxWeight` of their `weigh` (about the bytes each adds to the statement) but for its first write,
 * so that large bodies do not make one statement of their sum.
 *
 * A statement that fails for several writes is run again for each of them alone, one after the
 * other, so that each answers as it would have alone: one write the store refuses (a duplicate, say)
 * fails by itself and the others are written. Across processes the row's lock still orders the
 * statements.
 */
export interface RowBatchLimits<I> {
  /** The most writes in one statement (100). */
  max?: number;
  /** About the bytes a write adds to the statement (none). */
  weigh?: (item: I) => number;
  /** The most weight in one statement but its first write's (8 MB). */
  maxWeight?: number;
  /**
   * Whether a statement that failed for several writes is run again for each alone (always). Not
   * when no one write can be why it failed: a store that is down would then fail each in turn.
   */
  againAlone?: (e: unknown) => boolean;
}

export function rowBatches<I, O>(write: (row: string, items: I[]) => Promise<O[]>, limits: RowBatchLimits<I> = {}): (row: string, item: I) => Promise<O> {
  const { max = 100, weigh = () => 0, maxWeight = 8 * 2 ** 20, againAlone = () => true } = limits;
  interface Waiting {
    item: I;
    resolve: (o: O) => void;
    reject: (e: unknown) => void;
  }
  /** The writes waiting for each row's statement; a row is here while one of its statements runs. */
  const waiting = new Map<string, Waiting[]>();

  /** One statement for `batch`; when it fails, each of several alone. Never throws: each write is answered. */
  const run = async (row: string, batch: Waiting[]): Promise<void> => {
    let written: O[];
    try {
      written = await write(row, batch.map((w) => w.item));
    } catch (e) {
      if (batch.length === 1 || !againAlone(e)) {
        for (const w of batch) w.reject(e);
        return;
      }
      for (const w of batch) await run(row, [w]);
      return;
    }
    batch.forEach((w, i) => w.resolve(written[i]!));
  };

  /** Runs `batch`, then each batch that came meanwhile, until none is waiting. */
  const drain = async (row: string, batch: Waiting[]): Promise<void> => {
    for (;;) {
      await run(row, batch);
      const next = waiting.get(row)!;
      if (next.length === 0) {
        waiting.delete(row);
        return;
      }
      let count = 1;
      for (let weight = weigh(next[0]!.item); count < Math.min(max, next.length); count++) {
        weight += weigh(next[count]!.item);
        if (weight > maxWeight) break;
      }
      batch = next.splice(0, count);
    }
  };

  return (row, item) =>
    new Promise<O>((resolve, reject) => {
      const w: Waiting = { item, resolve, reject };
      const queue = waiting.get(row);
      if (queue) {
        queue.push(w);
        return;
      }
      waiting.set(row, []);
      void drain(row, [w]);
    });
}
