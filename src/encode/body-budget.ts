/**
 * How many bytes of uncompressed request bodies exist at once. A body is encoded when its batch's
 * attempt gets a slot in its drain's lane (deliver/lanes.ts) and lives until its gzip is made;
 * gzip runs on zlib's few pool threads, so with many drains (four lanes each) sending at once,
 * bodies were encoded far faster than they could be compressed and waited in zlib's queue, each
 * hundreds of KB outside the JavaScript heap: with ten drains an organization, about 100 MB of the
 * worker's RSS (benchmarks-engine-findings.md, memory). Encoding waits here instead, as its batch, for its turn:
 * the compression threads stay as busy, and the bodies in existence fit the body pool
 * (body-pool.ts), which then serves every one of them from memory already mapped.
 *
 * Admission is first come, first served; a body larger than the whole budget still goes alone.
 */

/** Bytes of batches (their `bytes`, about two thirds of an NDJSON body) being encoded or compressed at once. */
export const BODY_BUDGET_BYTES = 4 * 1024 * 1024;

export class BodyBudget {
  private used = 0;
  private readonly waiting: { bytes: number; admit: () => void }[] = [];

  constructor(readonly limit: number) {}

  /**
   * Takes `bytes` of the budget: undefined when taken at once (no promise made on the fast path),
   * otherwise a promise resolved once taken. Every take is matched by a `give` of the same bytes.
   */
  take(bytes: number): Promise<void> | undefined {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return undefined;
    }
    return new Promise<void>((admit) => this.waiting.push({ bytes, admit }));
  }

  give(bytes: number): void {
    this.used -= bytes;
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.admit();
    }
  }

  /** Bytes taken now and takes waiting (tests). */
  get state(): { used: number; waiting: number } {
    return { used: this.used, waiting: this.waiting.length };
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }
}

/** The process's budget: bodies are memory of the whole process, whichever drain they are for. */
export const bodyBudget = new BodyBudget(BODY_BUDGET_BYTES);
