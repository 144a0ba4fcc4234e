/**
 * Errors are values. Every failure that crosses a module boundary carries a
 * stable `code` that callers match on; messages are for people only.
 */
export class AppError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /** Extra fields merged into the REST error body (for example `field`, `requiredScope`). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.statusCode = statusCode;
    this.details = details;
  }
}
