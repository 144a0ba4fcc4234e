/**
 * The ingest body read off the API's thread (body-reader.ts, reader-worker.ts): whatever the body
 * and its chunks' bounds, the reader thread answers what a read on the API's thread answers (each
 * record's refusal or payload in order, or the body's refusal with its code and message), the
 * records are parsed and checked on the thread (no check runs on the API's), bodies read at once
 * keep apart, a refused body is answered without waiting for its end, and a thread that ends fails its bodies
 * rather than hanging them.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BodyChunks } from '../../../../src/modules/ingest/record-body.js';
import { record } from '../../../helpers/records.js';

// Every check the API's thread makes, counted: the reader thread loads its own copy of the module.
const checksOnThisThread = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../../src/modules/ingest/check-record.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../../src/modules/ingest/check-record.js')>();
  return { ...real, checkItem: (...args: Parameters<typeof real.checkItem>) => (checksOnThisThread.count++, real.checkItem(...args)) };
});
// The setup file has loaded the app (and the real module) already: the reader and what it imports are loaded anew.
vi.resetModules();
const { createBodyReader, readInline } = await import('../../../../src/modules/ingest/body-reader.js');
const { AppError } = await import('../../../../src/errors.js');

/** Bodies of at least 0 bytes go to the thread. */
const threaded = createBodyReader({ inlineMaxBytes: -1 });
afterAll(() => threaded.close());
beforeEach(() => {
  checksOnThisThread.count = 0;
});

const ORG = 'org_acme';
/** The body's bytes in chunks of `size` (a size that cuts characters of several bytes and records). */
function chunked(bytes: Uint8Array, size: number): BodyChunks {
  let at = 0;
  const chunks = {
    next: async () => {
      if (at >= bytes.length) return undefined;
      const chunk = bytes.subarray(at, at + size);
      at += size;
      return chunk;
    },
  };
  return chunks;
}
async function outcome(read: Promise<unknown>): Promise<unknown> {
  try {
    return await read;
  } catch (e) {
    if (e instanceof AppError) return { refused: e.code, status: e.statusCode, message: e.message, details: e.details };
    throw e;
  }
}

const valid = (id: string, extra: Record<string, unknown> = {}) => ({ ...record({ id, orgId: ORG }), ...extra });
let deep: unknown = 1;
for (let i = 0; i < 200; i++) deep = [deep];
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const ndjson = (lines: (string | Buffer)[]) => Buffer.concat(lines.map((l) => Buffer.concat([typeof l === 'string' ? Buffer.from(l) : l, Buffer.from('\n')])));

const CASES: [string, 'json' | 'ndjson', Buffer, number][] = [
  ['valid records, another organization\'s, an invalid one', 'json', json([valid('a', { message: 'é ü — € 中文 𝄞 ] } " \\' }), valid('b', { orgId: 'org_globex' }), { id: 'c' }, valid('d')]), 10],
  ['a field nested too deep', 'json', json([valid('a'), valid('b', { attributes: { deep } })]), 10],
  ['a record that is not JSON', 'json', Buffer.from(`[${JSON.stringify(valid('a'))}, {"id": nope}]`), 10],
  ['more records than the cap', 'json', json([valid('a'), valid('b'), valid('c'), valid('d')]), 3],
  ['an object, not an array', 'json', json(valid('a')), 10],
  ['bytes that are not UTF-8', 'json', Buffer.concat([Buffer.from(`[${JSON.stringify(valid('a'))},`), Buffer.from([0xc3, 0x28]), Buffer.from('1]')]), 10],
  ['nothing', 'json', Buffer.alloc(0), 10],
  ['NDJSON: valid, not JSON, not UTF-8, blank, too deep', 'ndjson', ndjson([JSON.stringify(valid('a')), '{"id":', Buffer.from([0x7b, 0xff, 0x7d]), '  ', JSON.stringify(valid('b', { attributes: { deep } })), JSON.stringify(valid('c'))]), 10],
  ['NDJSON past the cap', 'ndjson', ndjson([1, 2, 3, 4].map((i) => JSON.stringify(valid(`r${i}`)))), 3],
];

describe('the ingest body reader thread', () => {
  it.each(CASES)('answers what the API\'s thread answers: %s', async (_name, kind, bytes, maxItems) => {
    for (const size of [1, 7, 64, 1 << 16]) {
      const inline = await outcome(readInline(kind, chunked(bytes, size), ORG, maxItems));
      checksOnThisThread.count = 0;
      const off = await outcome(threaded.read(kind, chunked(bytes, size), ORG, maxItems, undefined));
      expect(off, `chunks of ${size}`).toEqual(inline);
      expect(checksOnThisThread.count).toBe(0);
    }
  });

  it('checks every record on its thread, and a small body on the API\'s', async () => {
    const reader = createBodyReader();
    try {
      const body = json([valid('a'), valid('b')]);
      const small = await reader.read('json', chunked(body, 100), ORG, 10, body.length);
      expect(checksOnThisThread.count).toBe(2);
      checksOnThisThread.count = 0;
      const large = json(Array.from({ length: 40 }, (_, i) => valid(`big-${i}`, { message: 'x'.repeat(4000) })));
      const read = await reader.read('json', chunked(large, 1 << 14), ORG, 100, large.length);
      expect(checksOnThisThread.count).toBe(0);
      expect((small as unknown[]).length).toBe(2);
      expect((read as { payload: string }[]).map((r) => JSON.parse(r.payload).id)).toEqual(Array.from({ length: 40 }, (_, i) => `big-${i}`));
    } finally {
      await reader.close();
    }
  });

  it('reads bodies at once, each its own records in order, whatever their chunks interleave', async () => {
    const bodies = [0, 1, 2].map((b) => json(Array.from({ length: 30 }, (_, i) => valid(`b${b}-${i}`, { message: 'é'.repeat(b * 100 + i) }))));
    const reads = await Promise.all(bodies.map((body, b) => threaded.read('json', chunked(body, 97 + b * 31), ORG, 100, undefined)));
    reads.forEach((read, b) => {
      expect((read as { payload: string }[]).map((r) => JSON.parse(r.payload).id)).toEqual(Array.from({ length: 30 }, (_, i) => `b${b}-${i}`));
    });
  });

  it('answers a body\'s refusal without waiting for the rest of it', async () => {
    // A bad byte, then a body that never ends: a read that waited for the end would never answer.
    const head = Buffer.concat([Buffer.from('[1,'), Buffer.from([0xff])]);
    let given = false;
    const endless: BodyChunks = { next: () => (given ? new Promise(() => {}) : ((given = true), Promise.resolve(head))) };
    const refused = await outcome(threaded.read('json', endless, ORG, 10, undefined));
    expect(refused).toMatchObject({ refused: 'VALIDATION_FAILED', status: 400, message: 'body is not valid UTF-8 (byte 3)' });
  });

  it('fails the bodies of a thread that ends, and reads the next body on a new one', async () => {
    const reader = createBodyReader({ inlineMaxBytes: -1 });
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    // A body whose next chunk never comes: the read waits on the thread until the thread ends.
    let given = false;
    const hanging: BodyChunks = {
      next: () => {
        if (given) return new Promise(() => {});
        given = true;
        begun();
        return Promise.resolve(Buffer.from('[{"id":'));
      },
    };
    const read = reader.read('json', hanging, ORG, 10, undefined);
    await started;
    await reader.close();
    await expect(read).rejects.toThrow(/reader thread exited/);
    const body = json([valid('after')]);
    const again = await reader.read('json', chunked(body, 50), ORG, 10, undefined);
    expect((again as { payload: string }[]).map((r) => JSON.parse(r.payload).id)).toEqual(['after']);
    await reader.close();
  });
});
