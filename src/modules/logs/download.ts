/**
 * GET /admin/orgs/:orgId/logs/download: the selection of the list route as
 * NDJSON (one log entry per line, newest first), streamed in keyset pages so
 * memory stays flat whatever the size. `cursor` resumes an interrupted export
 * after the entry it names (the `id` and `timestamp` of the last line read
 * give it; see docs/api.md).
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { PageLines, type LogQuery, type LogReads } from './repository.js';
import { decodeCursor } from '../../api/kernel/pagination.js';
import { logEntry } from './log-entry.js';
import { parseSelection } from './log-query.js';
import type { DownloadQuery } from './schemas.js';

/** Rows fetched per query: large enough to amortise a round trip, small enough to stream. */
export const DOWNLOAD_PAGE = 1000;

async function* ndjsonPages(logs: LogReads, query: LogQuery, start: { at: Date; id: string } | undefined): AsyncGenerator<string> {
  let after = start;
  const lines = new PageLines();
  for (;;) {
    const rows = await logs.page(query, DOWNLOAD_PAGE, { after, lines });
    if (rows.length === 0) return;
    let chunk = '';
    for (const r of rows) chunk += `${JSON.stringify(logEntry(r))}\n`;
    yield chunk;
    if (rows.length < DOWNLOAD_PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.ts, id: last.id };
  }
}

export function answerDownload(logs: LogReads, query: DownloadQuery, reply: FastifyReply, scope: LogQuery): FastifyReply {
  const selection = parseSelection(query);
  const { cursor } = query;
  const start = cursor === undefined ? undefined : decodeCursor(cursor);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
  return reply
    .header('Content-Type', 'application/x-ndjson; charset=utf-8')
    .header('Content-Disposition', `attachment; filename="logs-${scope.orgId}-${stamp}Z.ndjson"`)
    .header('Cache-Control', 'no-store')
    .send(Readable.from(ndjsonPages(logs, { ...scope, ...selection }, start), { objectMode: false }));
}
