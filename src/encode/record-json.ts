/**
 * A delivered record's JSON written as UTF-8 straight into a buffer: the same bytes as
 * `Buffer.from(JSON.stringify(record))`, with no string made. JSON.stringify builds its answer in
 * parts that it joins (a rope of about twice the text's size, for a record of a few hundred
 * characters), and writing that into a slab then flattened it into a third copy: together a
 * quarter of everything the worker allocated a record, which every scavenge paid for. Here a
 * string that is printable ASCII without `"` or `\` (nearly every one) is copied byte for byte;
 * any other is written as JSON.stringify writes it.
 */
import type { DeliveredRecord } from '../shape/delivered-record.js';
import { jsonNumber, jsonStringMostBytes, writeAscii, writeJsonString } from '../model/json-bytes.js';

const COMMA = 0x2c;
const COLON = 0x3a;
const CLOSE = 0x7d;

/**
 * Room kept free at the end of the buffer: the fixed text (keys, braces, a number's digits) written
 * between two checks of the room, which only strings and values make, is far shorter.
 */
const MARGIN = 256;
/** Thrown by a write that would pass the room left (caught in writeRecordJson only). */
const NO_ROOM = new Error('no room');

// The buffer being written, where its room ends (MARGIN before its end) and the next byte's
// place: one record at a time, on one thread.
let out: Buffer = Buffer.alloc(0);
let limit = 0;
let at = 0;

/**
 * Writes `r`'s JSON (JSON.stringify's bytes, its fields in the order shapeRecord makes them) into
 * `into` from `start`, and answers where it ended; or -1 if it might not fit, having written an
 * unknown part of it. Checking the room string by string rather than sizing the record first
 * reads every field once instead of twice.
 */
export function writeRecordJson(r: DeliveredRecord, into: Buffer, start: number): number {
  out = into;
  limit = into.length - MARGIN;
  at = start;
  try {
    if (at > limit) return -1;
    fields(r);
    return at;
  } catch (e) {
    if (e === NO_ROOM) return -1;
    throw e;
  }
}

function fields(r: DeliveredRecord): void {
  ascii('{"id":');
  string(r.id);
  ascii(',"timestamp":');
  string(r.timestamp);
  ascii(',"observedTimestamp":');
  string(r.observedTimestamp);
  ascii(',"eventName":');
  string(r.eventName);
  ascii(',"severityNumber":');
  value(r.severityNumber);
  ascii(',"severityText":');
  string(r.severityText);
  ascii(',"attributes":{');
  let first = true;
  const a = r.attributes;
  for (const k in a) {
    const v = a[k];
    // JSON.stringify leaves out a member whose value it cannot write (undefined).
    if (v === undefined) continue;
    if (!first) out[at++] = COMMA;
    first = false;
    string(k);
    out[at++] = COLON;
    value(v);
  }
  out[at++] = CLOSE;
  if (r.body !== undefined) {
    ascii(',"body":');
    string(r.body);
  }
  if (r.traceId !== undefined) {
    ascii(',"traceId":');
    string(r.traceId);
  }
  if (r.spanId !== undefined) {
    ascii(',"spanId":');
    string(r.spanId);
  }
  out[at++] = CLOSE;
}

function ascii(s: string): void {
  at = writeAscii(s, out, at);
}

function string(s: string): void {
  if (at + jsonStringMostBytes(s) > limit) throw NO_ROOM;
  at = writeJsonString(s, out, at);
}

/** An attribute's or the severity's value: a string, or the text JSON.stringify gives a number or boolean. */
function value(v: unknown): void {
  if (typeof v === 'string') string(v);
  // A number's text is at most 24 characters, a boolean's 5: inside MARGIN.
  else if (typeof v === 'number') ascii(jsonNumber(v));
  else if (typeof v === 'boolean') ascii(v ? 'true' : 'false');
  else {
    // Only strings, numbers and booleans are attribute values; anything else is written as JSON.stringify writes it.
    const json = JSON.stringify(v) ?? 'null';
    if (at + json.length * 3 > limit) throw NO_ROOM;
    at += out.write(json, at, 'utf8');
  }
}
