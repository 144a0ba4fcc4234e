/**
 * The paginated answer of the log read routes (spec 01 part 2.5): keyset
 * pages through `cursor`, the deprecated `page` through an offset, and the
 * `pagination` object kept for one release. Counting stops past 10,000
 * matches, so a large selection costs no more than a small one.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LogQuery, LogReads } from './repository.js';
import { encodeCursor, keysetFetch, keysetPage } from '../../api/kernel/pagination.js';
import { logEntry } from './log-entry.js';
import { parseListQuery } from './log-query.js';
import type { ListQuery, LogList } from './schemas.js';
import { markDeprecated } from './context.js';
import type { Config } from '../../config/config.js';

export const TOTAL_COUNT_CAP = 10_000;

export async function answerLogList(
  deps: { config: Pick<Config, 'deprecatedScopesSunset'>; logs: LogReads },
  req: FastifyRequest<{ Querystring: ListQuery }>,
  reply: FastifyReply,
  scope: LogQuery,
): Promise<LogList> {
  const q = parseListQuery(req.query);
  const query: LogQuery = { ...scope, source: q.source, environment: q.environment, since: q.since, until: q.until };
  const byCursor = q.after !== undefined;
  const [rows, counted] = await Promise.all([
    deps.logs.page(query, keysetFetch(q.limit), byCursor ? { after: q.after } : { offset: (q.page - 1) * q.limit }),
    deps.logs.countUpTo(query, TOTAL_COUNT_CAP),
  ]);
  const hasNextPage = rows.length > q.limit;
  // A page by offset is cut the same way, and its last row's cursor continues it by key.
  const { items: page, nextCursor } = keysetPage(rows, q.limit, (last) => encodeCursor(last.ts, last.id));
  const totalCount = Math.min(counted, TOTAL_COUNT_CAP);

  if (q.pageExplicit) {
    markDeprecated(reply, deps.config);
    if (nextCursor !== null) reply.header('Link', `<${cursorForm(req, nextCursor)}>; rel="next"`);
  }
  return {
    logs: page.map(logEntry),
    nextCursor,
    pagination: {
      currentPage: byCursor ? null : q.page,
      totalPages: Math.ceil(totalCount / q.limit),
      totalCount,
      limit: q.limit,
      hasNextPage,
      hasPrevPage: byCursor || q.page > 1,
      nextPage: !byCursor && hasNextPage ? q.page + 1 : null,
      prevPage: !byCursor && q.page > 1 ? q.page - 1 : null,
      totalCountExact: counted <= TOTAL_COUNT_CAP,
    },
  };
}

/** The request's own URL with `page` replaced by `cursor`: where a deprecated page reader goes next. */
function cursorForm(req: FastifyRequest<{ Querystring: ListQuery }>, cursor: string): string {
  // The parameters as sent (req.query holds the schema's defaults too).
  const [path, search = ''] = req.url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(search);
  params.delete('page');
  params.set('cursor', cursor);
  return `${path}?${params.toString()}`;
}
