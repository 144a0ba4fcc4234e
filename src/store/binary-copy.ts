/**
 * Reading COPY's binary format (`COPY ... TO STDOUT (format binary)`): the tuples of the data a
 * copy-out answers (copy-in.ts copyOutData), each field the bytes the server sent (a view of the
 * piece it came in), and the decoding of the field types the store reads so. The format: an 11-byte signature,
 * flags and a header extension, then each tuple's field count and its fields (a length, -1 for
 * null, and the bytes), and -1 where a field count would be.
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** Thrown by a read past the end of the piece being read: the tuple goes on in the next piece. */
const SPLIT = new Error('tuple split across pieces');

/**
 * The tuples of binary COPY data given in pieces (copyOutData's), in order: each field's bytes (a
 * view of its piece), or null. A tuple lies in one piece when the server sends a row a message, as
 * it does; one that does not is read from its pieces joined.
 */
export function* binaryTuples(pieces: readonly Buffer[]): Generator<(Buffer | null)[]> {
  let data = pieces[0] ?? Buffer.alloc(0);
  let next = 1;
  if (data.length < 19 && pieces.length > 1) {
    data = Buffer.concat(pieces);
    next = pieces.length;
  }
  if (data.length < 19 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not COPY binary data');
  let at = 15 + 4 + data.readInt32BE(15);
  for (;;) {
    if (at === data.length) {
      if (next >= pieces.length) throw new Error('COPY binary data ends without its trailer');
      data = pieces[next++]!;
      at = 0;
    }
    let tuple: { fields: (Buffer | null)[] | null; end: number };
    try {
      tuple = tupleAt(data, at);
    } catch (e) {
      if (e !== SPLIT || next >= pieces.length) throw e === SPLIT ? new Error('COPY binary data ends inside a tuple') : e;
      data = Buffer.concat([data.subarray(at), pieces[next++]!]);
      at = 0;
      continue;
    }
    if (tuple.fields === null) return;
    at = tuple.end;
    yield tuple.fields;
  }
}

/** The tuple at `at` (null fields: the trailer) and where it ends; SPLIT if it runs past `data`. */
function tupleAt(data: Buffer, at: number): { fields: (Buffer | null)[] | null; end: number } {
  if (at + 2 > data.length) throw SPLIT;
  const count = data.readInt16BE(at);
  at += 2;
  if (count === -1) return { fields: null, end: at };
  const fields: (Buffer | null)[] = new Array(count);
  for (let i = 0; i < count; i++) {
    if (at + 4 > data.length) throw SPLIT;
    const n = data.readInt32BE(at);
    at += 4;
    if (n === -1) fields[i] = null;
    else {
      if (at + n > data.length) throw SPLIT;
      fields[i] = data.subarray(at, at + n);
      at += n;
    }
  }
  return { fields, end: at };
}

/** A bigint field (8 bytes) as a number: every int8 the store reads so fits a double. */
export const int8Of = (b: Buffer): number => Number(b.readBigInt64BE(0));

/** A one-dimensional array field's elements (an empty array has no dimension): each element's bytes, or null. */
function arrayElements(b: Buffer): (Buffer | null)[] {
  const dims = b.readInt32BE(0);
  if (dims === 0) return [];
  if (dims !== 1) throw new Error(`an array of ${dims} dimensions where one was expected`);
  const n = b.readInt32BE(12);
  const out: (Buffer | null)[] = new Array(n);
  let at = 20;
  for (let i = 0; i < n; i++) {
    const len = b.readInt32BE(at);
    at += 4;
    if (len === -1) out[i] = null;
    else {
      out[i] = b.subarray(at, at + len);
      at += len;
    }
  }
  return out;
}

const present = (e: Buffer | null): Buffer => {
  if (e === null) throw new Error('a null array element where none was expected');
  return e;
};

/** An int4[] field's numbers (arrays the store writes without nulls). */
export const int4ArrayOf = (b: Buffer): number[] => arrayElements(b).map((e) => present(e).readInt32BE(0));

/** A text[] field's strings (arrays the store writes without nulls). */
export const textArrayOf = (b: Buffer): string[] => arrayElements(b).map((e) => present(e).toString('utf8'));
