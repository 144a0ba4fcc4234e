/**
 * The charset of a request body: the API reads UTF-8 alone. Apart from the body parser
 * (json-body.ts) so the error handler can know its refusal without loading fastify with it.
 */

/** A body in a charset the API does not read: answered 415 by the error handler (errors.ts). */
export class UnsupportedCharset extends Error {
  readonly statusCode = 415;
  constructor(readonly charset: string) {
    super(`charset ${charset} is not read; send UTF-8`);
  }
}

/**
 * The charset a Content-Type names, lower-cased, or undefined when it names none. Parameters are
 * `;`-separated `name=value`, the value possibly quoted (RFC 9110 section 8.3.1).
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}

/** Throws UnsupportedCharset unless the Content-Type names no charset or UTF-8. */
export function requireUtf8Charset(contentType: string | undefined): void {
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8') throw new UnsupportedCharset(charset.slice(0, 40));
}
