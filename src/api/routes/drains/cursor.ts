/** Opaque keyset cursors: base64url of `<ISO time>|<id>` of the last row of a page. */
import { AppError } from '../../../errors.js';
import { ID_PATTERN } from './context.js';

export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(`${at.toISOString()}|${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(raw: string): { at: Date; id: string } {
  const bad = () =>
    new AppError(400, 'VALIDATION_FAILED', 'cursor is not a cursor this route returned', { field: 'cursor', message: ['cursor is not a cursor this route returned'] });
  if (raw.length > 200 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad();
  const [ts, id, extra] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  const at = new Date(ts ?? '');
  if (extra !== undefined || !id || Number.isNaN(at.getTime()) || !ID_PATTERN.test(id)) throw bad();
  return { at, id };
}

/** A query parameter given at most once. */
export function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    throw new AppError(400, 'VALIDATION_FAILED', `${name} may be given once`, { field: name, message: [`${name} may be given once`] });
  }
  return v;
}

/** `limit`: an integer from 1 to `max`, default `fallback`. */
export function parseLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    const message = `limit must be an integer from 1 to ${max}`;
    throw new AppError(400, 'VALIDATION_FAILED', message, { field: 'limit', message: [message] });
  }
  return Number(raw);
}
