/**
 * How the backlog's records are laid out in pages (migration 023): which bucket a resource's
 * records go to, how a page's texts are joined, and how a record is named by its page and place.
 */

/**
 * Resource buckets a drain's pages are spread over. A round reads the backlog bucket by bucket
 * (each bucket's pages in order), holding a bucket's records at once to batch them per resource:
 * more buckets make smaller reads and full batches at higher agent counts, fewer make bigger pages
 * (one page a bucket a park statement). 64 keeps a round of 10,000 agents' records (about 15 s of
 * them) under two reads' budget a bucket, and a 500-record park at about 8 records a page.
 */
export const BUCKETS = 64;

/** Records of a page at most, and the factor of a record's id (page id × PAGE_SLOTS + place). */
export const PAGE_SLOTS = 1024;

/** The bucket legacy rows (one record each, parked before pages) were moved to: read before every other. */
export const LEGACY_BUCKET = -1;

/**
 * The resource's bucket: FNV-1a over its JSON's UTF-16 code units. It must never change: a
 * resource's records are in order only within one bucket, so a worker bucketing differently from
 * the one before it would let new records of a resource overtake parked ones.
 */
export function bucketOf(resourceJson: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < resourceJson.length; i++) {
    h ^= resourceJson.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

/** A record's id: its page's id and its place in the page (1-based, as Postgres's arrays). */
export const recordKey = (page: number, place: number): number => page * PAGE_SLOTS + place - 1;
export const pageOf = (id: number): number => Math.floor(id / PAGE_SLOTS);
export const placeOf = (id: number): number => (id % PAGE_SLOTS) + 1;

/** Separates pages in a park statement's joined texts: a control character no JSON text holds raw. */
export const PAGE_SEP = '\x1e';

/**
 * A JSON text made safe to join: a raw newline in JSON text can only be whitespace between tokens
 * (inside a string it is escaped), so one, which JSON.stringify never writes, becomes a space: the
 * same JSON value. The page separator, a control character, cannot occur in valid JSON at all.
 */
export function joinable(json: string): string {
  return json.includes('\n') || json.includes(PAGE_SEP) ? json.replace(/[\n\x1e]/g, ' ') : json;
}

/**
 * How many of a round's next pages (in bucket order) one read takes: the first bucket whole up to
 * `cap` records (a resource's records of a round in one read, so its batches are full), then more
 * buckets up to about `budget` records; at least one page. A read holding more than one bucket
 * ends where a bucket ends, the bucket running on past the budget left whole for the next read;
 * a first bucket over `cap` is read in parts.
 */
export function readCut(sizes: readonly { bucket: number; records: number }[], budget: number, cap = budget): number {
  let taken = 0;
  let records = 0;
  while (taken < sizes.length) {
    const next = sizes[taken]!;
    const within = records + next.records <= (next.bucket === sizes[0]!.bucket ? cap : budget);
    if (taken > 0 && !within) break;
    records += next.records;
    taken++;
  }
  if (taken === sizes.length) return taken;
  const last = sizes[taken - 1]!.bucket;
  if (sizes[taken]!.bucket !== last || sizes[0]!.bucket === last) return taken;
  while (sizes[taken - 1]!.bucket === last) taken--;
  return taken;
}
