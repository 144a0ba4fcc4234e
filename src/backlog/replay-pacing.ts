/**
 * How fast replays run beside live traffic: a duty cycle on the worker's one thread.
 *
 * A drain's slots go to live batches first (replay-runner.ts), but a replay page's work (reading
 * the platform copy, shaping, scrubbing, encoding, gzip, signing) runs on the event loop that
 * routes live records, and at full speed it takes that thread's time from them. So while live
 * records flow (records consumed within LIVE_WINDOW_MS, or records taken from the source and not
 * yet accounted for), and while the source is not reading yet (a worker joining its consumer group
 * does not know what live records wait for it), replays take turns, one page at a time, and after
 * a page that kept a replay busy `t` ms every replay waits `t * (1 - share) / share` ms: replays use
 * at most `share` of the worker's time, and live records the rest. So a replay always progresses:
 * beside a light live stream (pages not slowed by live work) the replays together go at about
 * `share` of their full speed, and with no live records flowing every replay runs at full speed.
 * The pacing follows live records, not the loop's load: a light stream that leaves the thread idle
 * still holds replays to their share.
 *
 * A page's time is measured on the wall clock: while live work runs between the page's steps the
 * page takes longer and the pause after it grows with it, so the share is an upper bound. A page's
 * waits for a slot and its retries' backoff are not charged, but it keeps the turn through them.
 */

/** Live records consumed within this long keep replays paced. */
export const LIVE_WINDOW_MS = 1000;
/** How long a replay waits before asking again while another holds the turn. */
export const TURN_WAIT_MS = 25;

export interface ReplayPacerOptions {
  /** The worker's time replays may use while live records flow, in (0, 1]. */
  maxShare: number;
  /** Records taken from the source and not yet accounted for. */
  liveInFlight: () => number;
  /** Whether the source reads (its consumer group joined, the queue opened). */
  sourceReady: () => boolean;
  /** Milliseconds, monotonic (a test's clock). */
  now?: () => number;
}

export interface ReplayPacer {
  /** Live records handed to the pipeline now. */
  liveConsumed(records: number): void;
  /** Whether live records are flowing, or may be: consumed within LIVE_WINDOW_MS, in flight, or the source not reading yet. */
  liveFlowing(): boolean;
  /**
   * A replay asks to start a page: 0 grants it (the caller calls `pageDone` after the page), more
   * is how long to wait before asking again.
   */
  take(): number;
  /** The page granted by `take` ended, having kept its replay busy `busyMs` (waits for a slot excluded). */
  pageDone(busyMs: number): void;
}

export function createReplayPacer(opts: ReplayPacerOptions): ReplayPacer {
  const now = opts.now ?? (() => performance.now());
  if (!(opts.maxShare > 0 && opts.maxShare <= 1)) throw new RangeError(`replay share must be in (0, 1], not ${opts.maxShare}`);
  const pauseFactor = (1 - opts.maxShare) / opts.maxShare;
  let lastLiveAt = -Infinity;
  /** Pages granted and not yet done. */
  let working = 0;
  /** Before this instant no replay takes a page while live records flow. */
  let readyAt = -Infinity;

  const liveFlowing = () => !opts.sourceReady() || opts.liveInFlight() > 0 || now() - lastLiveAt < LIVE_WINDOW_MS;

  return {
    liveConsumed(records) {
      if (records > 0) lastLiveAt = now();
    },
    liveFlowing,
    take() {
      if (liveFlowing()) {
        // One page at a time, so the pages' busy times do not overlap and their sum is the replays' time.
        if (working > 0) return TURN_WAIT_MS;
        const wait = readyAt - now();
        if (wait > 0) return wait;
      }
      working++;
      return 0;
    },
    pageDone(busyMs) {
      working = Math.max(0, working - 1);
      // Pages run while live records were idle are charged too once they flow again: a page begun
      // at full speed delays the next one as a paced page would have.
      if (liveFlowing()) readyAt = Math.max(readyAt, now()) + Math.max(0, busyMs) * pauseFactor;
    },
  };
}
