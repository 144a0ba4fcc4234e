/**
 * Reading COPY's binary format (`COPY ... TO STDOUT (format binary)`): the tuples of the data a
 * copy-out answers (copy-in.ts copyOutData), each field the bytes the server sent (a view of the
 * data), and the decoding of the field types the store reads so. The format: an 11-byte signature,
 * flags and a header extension, then each tuple's field count and its fields (a length, -1 for
 * null, and the bytes), and -1 where a field count would be.
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The tuples of binary COPY data, in order: each field's bytes (a view of `data`), or null. */
export function* binaryTuples(data: Buffer): Generator<(Buffer | null)[]> {
  if (data.length < 19 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not COPY binary data');
  let at = 15 + 4 + data.readInt32BE(15);
  for (;;) {
    const count = data.readInt16BE(at);
    at += 2;
    if (count === -1) return;
    const fields: (Buffer | null)[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const n = data.readInt32BE(at);
      at += 4;
      if (n === -1) fields[i] = null;
      else {
        fields[i] = data.subarray(at, at + n);
        at += n;
      }
    }
    yield fields;
  }
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
