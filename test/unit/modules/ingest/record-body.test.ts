/**
 * The ingest body read a chunk at a time (record-body.ts, body-chunks.ts): whatever the chunks'
 * bounds, the records are those of the body read whole, and every refusal is the one the body
 * whole earns, naming the same byte.
 */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { readJsonArrayBody, readNdjsonBody, type BodyChunks, type BodyItem } from '../../../../src/modules/ingest/record-body.js';
import { bodyChunks } from '../../../../src/modules/ingest/body-chunks.js';
import { Utf8Stream } from '../../../../src/model/utf8.js';
import { invalidUtf8At } from '../../../../src/model/utf8.js';
import { AppError } from '../../../../src/errors.js';

/** The body's bytes cut at the given offsets. */
function cut(bytes: Uint8Array, at: number[]): BodyChunks {
  const bounds = [0, ...at, bytes.length];
  const chunks = bounds.slice(1).map((end, i) => bytes.subarray(bounds[i]!, end));
  return { next: async () => chunks.shift() };
}
const bytesOf = (text: string): Buffer => Buffer.from(text, 'utf8');
/** The outcome of a read: its items, or the refusal's code and message. */
async function outcome(read: Promise<unknown>): Promise<unknown> {
  try {
    return await read;
  } catch (e) {
    if (e instanceof AppError) return { refused: e.code, message: e.message };
    throw e;
  }
}
const values = (items: BodyItem[] | { notArray: unknown }) => (Array.isArray(items) ? items.map((i) => (i.kind === 'value' ? i.value : i)) : items);

// Records whose text holds what a scan must not be fooled by: brackets, braces, commas and quotes
// inside strings, escaped quotes and backslashes, characters of two, three and four bytes.
const TRICKY = [
  { id: 'a', message: 'brackets ] } [ { and a comma, inside a string' },
  { id: 'b', message: 'quote \\" escaped, backslash \\\\ then "quote" and \\\\\\"' },
  { id: 'c', message: 'é ü — € 中文 𝄞 😀', nested: { deep: [1, [2, { x: '"]' }]] } },
  { id: 'd', message: 'ends in a backslash \\' },
  { id: 'e', message: '' },
];

describe('a JSON array body read a chunk at a time', () => {
  const text = ` [ ${TRICKY.map((r) => JSON.stringify(r)).join(' ,\n')} ] `;
  const bytes = bytesOf(text);

  it('finds the same records whatever byte the chunks are cut at, inside a character or an escape included', async () => {
    for (let at = 1; at < bytes.length; at++) {
      const items = await readJsonArrayBody(cut(bytes, [at]), 100);
      expect(values(items), `cut at byte ${at}`).toEqual(TRICKY);
    }
  });

  it('finds the same records when every byte is a chunk of its own', async () => {
    const every = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(values(await readJsonArrayBody(cut(bytes, every), 100))).toEqual(TRICKY);
  });

  it('names the first byte that is not UTF-8, in the middle of a chunk or across two, as the body whole does', async () => {
    const broken = Buffer.concat([bytesOf('[{"message":"é'), Buffer.from([0xe2, 0x82]), bytesOf('x"}, {"a": "\u20ac"}]')]);
    const bad = invalidUtf8At(broken);
    expect(bad).toBeGreaterThan(0);
    for (let at = 1; at < broken.length; at++) {
      expect(await outcome(readJsonArrayBody(cut(broken, [at]), 100)), `cut at byte ${at}`).toEqual({
        refused: 'VALIDATION_FAILED', message: `body is not valid UTF-8 (byte ${bad})`,
      });
    }
  });

  it('refuses a body ending inside a character as not UTF-8', async () => {
    const broken = Buffer.concat([bytesOf('[{"a":1}]'), Buffer.from([0xf0, 0x9f])]);
    expect(await outcome(readJsonArrayBody(cut(broken, [5]), 100))).toEqual({ refused: 'VALIDATION_FAILED', message: 'body is not valid UTF-8 (byte 9)' });
  });

  it('refuses bad UTF-8 before too many records, as the body checked whole did', async () => {
    const many = Buffer.concat([bytesOf(`[${'{"a":1},'.repeat(5)}{"a":1}, "`), Buffer.from([0xff]), bytesOf('"]')]);
    expect(await outcome(readJsonArrayBody(cut(many, [3]), 2))).toMatchObject({ message: `body is not valid UTF-8 (byte ${many.length - 3})` });
    expect(await outcome(readJsonArrayBody(cut(bytesOf(`[${'{"a":1},'.repeat(5)}{"a":1}]`), [3]), 2))).toMatchObject({ refused: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses a malformed array, a record that is not JSON and an empty body as not JSON; reads a body that is not an array', async () => {
    for (const body of ['[{"a":1}', '[{"a":1}] x', '[{"a":1}, {a}]', '', '   ', '\ufeff[]']) {
      expect(await outcome(readJsonArrayBody(cut(bytesOf(body), [1]), 100)), body).toEqual({ refused: 'VALIDATION_FAILED', message: 'body is not valid JSON' });
    }
    expect(await readJsonArrayBody(cut(bytesOf(' {"a": [1]}'), [3]), 100)).toEqual({ notArray: { a: [1] } });
  });

  it('names the field nesting too deep without parsing it, across chunks', async () => {
    const deep = bytesOf(`[{"id":"x","extra":${'['.repeat(40)}${']'.repeat(40)}}, {"id":"y"}]`);
    for (const at of [3, 12, 15, 30]) {
      expect(await readJsonArrayBody(cut(deep, [at]), 100)).toEqual([{ kind: 'too_deep', field: 'extra' }, { kind: 'value', value: { id: 'y' } }]);
    }
  });
});

describe('a JSON array body: each record in its own step', () => {
  /** Chunks handed one at a time, each once the test lets it go; `log` notes each arrival. */
  function gated(texts: string[], log: string[]): { chunks: BodyChunks; release(): void } {
    const waiting: (() => void)[] = [];
    let gate = Promise.resolve();
    return {
      chunks: {
        next: async () => {
          await gate;
          const text = texts.shift();
          if (text !== undefined) log.push('chunk');
          gate = new Promise((r) => waiting.push(r));
          return text === undefined ? undefined : bytesOf(text);
        },
      },
      release: () => waiting.shift()?.(),
    };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it("hands each record to `each` as it is parsed, before the body's end, and holds what `each` returns instead of the value", async () => {
    const log: string[] = [];
    const body = gated(['[{"id":"a"},{"id"', ':"b"}', ']'], log);
    const read = readJsonArrayBody(body.chunks, 10, () => undefined, (item) => {
      log.push(`record ${item.kind === 'value' ? (item.value as { id: string }).id : item.kind}`);
      return item.kind === 'value' ? `kept ${(item.value as { id: string }).id}` : item.kind;
    });
    await settle();
    // The first chunk ends one record: it is checked before the second chunk has arrived.
    expect(log).toEqual(['chunk', 'record a']);
    body.release();
    await settle();
    body.release();
    await settle();
    body.release();
    expect(await read).toEqual(['kept a', 'kept b']);
  });

  it("checks the turn's budget before a record's step, not only after: a reader woken by a chunk yields before parsing", async () => {
    const log: string[] = [];
    const body = gated(['[{"id":"a"},', '{"id":"b"},{"id":"c"}', ']'], log);
    const read = readJsonArrayBody(body.chunks, 10, () => void log.push('turn'), (item) => log.push('record'));
    for (let i = 0; i < 3; i++) {
      await settle();
      body.release();
    }
    await read;
    // After each chunk's arrival, a check of the budget comes before any record is parsed.
    const afterChunks = log.join(' ').split('chunk').slice(1);
    for (const part of afterChunks) {
      const steps = part.trim().split(' ').filter(Boolean);
      if (steps.includes('record')) expect(steps[0], `after a chunk: ${part}`).toBe('turn');
    }
    expect(log.filter((e) => e === 'record')).toHaveLength(3);
  });
});

describe('an NDJSON body read a chunk at a time', () => {
  const lines = TRICKY.map((r) => JSON.stringify(r));
  const bytes = Buffer.concat([bytesOf(`${lines[0]}\n\n${lines[1]}\r\n`), Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), bytesOf(`\n${lines.slice(2).join('\n')}\n  \nnot json\n`)]);

  it('reads the same records whatever byte the chunks are cut at; a line not UTF-8 is refused alone, naming its byte', async () => {
    const expected = [...TRICKY.slice(0, 2), { kind: 'not_utf8', at: 1 }, ...TRICKY.slice(2), { kind: 'invalid' }];
    for (let at = 1; at < bytes.length; at++) {
      expect(values(await readNdjsonBody(cut(bytes, [at]), 100)), `cut at byte ${at}`).toEqual(expected);
    }
  });

  it('stops at the record cap', async () => {
    expect(await outcome(readNdjsonBody(cut(bytesOf('{}\n{}\n{}\n'), [4]), 2))).toMatchObject({ refused: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('Utf8Stream', () => {
  it('decodes text cut inside characters to the text whole, a byte order mark kept', () => {
    const text = '\ufeffa é € 𝄞 z';
    const b = bytesOf(text);
    for (let at = 0; at <= b.length; at++) {
      const u = new Utf8Stream();
      const one = u.write(b.subarray(0, at));
      const two = u.write(b.subarray(at));
      const end = u.end();
      expect('text' in one && 'text' in two && 'text' in end).toBe(true);
      if ('text' in one && 'text' in two && 'text' in end) expect(one.text + two.text + end.text).toBe(text);
    }
  });
});

describe("a request body's chunks", () => {
  const drain = async (chunks: BodyChunks): Promise<number> => {
    let n = 0;
    for (let c = await chunks.next(); c; c = await chunks.next()) n += c.length;
    return n;
  };

  it('are read as they come, up to the end', async () => {
    const stream = new PassThrough();
    const chunks = bodyChunks(stream, '10', 100);
    const read = drain(chunks);
    stream.write('12345');
    stream.end('67890');
    expect(await read).toBe(10);
  });

  it('answer 413 for a body over the limit: by its Content-Length before a byte is read, or as its bytes pass it', async () => {
    const declared = bodyChunks(new PassThrough(), '101', 100);
    await expect(declared.next()).rejects.toMatchObject({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
    const stream = new PassThrough();
    const chunks = bodyChunks(stream, undefined, 100);
    const read = drain(chunks);
    stream.write(Buffer.alloc(60));
    stream.write(Buffer.alloc(60));
    await expect(read).rejects.toMatchObject({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
  });

  it('answer 400 for a body shorter than its Content-Length', async () => {
    const stream = new PassThrough();
    const read = drain(bodyChunks(stream, '20', 100));
    stream.end('short');
    await expect(read).rejects.toMatchObject({ code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' });
  });

  it('end in the stream\'s own error, a 4xx, when the client hangs up mid-body', async () => {
    const stream = new PassThrough();
    const read = drain(bodyChunks(stream, '100', 1000));
    stream.write('part of it');
    stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    await expect(read).rejects.toMatchObject({ message: 'aborted', code: 'ECONNRESET', statusCode: 400 });
  });

  it('once released, stop being read: the rest of the body flows away', async () => {
    const stream = new PassThrough();
    const chunks = bodyChunks(stream, undefined, 100);
    stream.write('first');
    expect(String(await chunks.next())).toBe('first');
    chunks.release();
    stream.write(Buffer.alloc(500));
    expect(stream.listenerCount('data')).toBe(0);
    expect(stream.readableFlowing).toBe(true);
  });
});
