/**
 * Structured JSON logs (pino). Redaction paths guard the few places a secret
 * could ride along by mistake; the real rule is never to pass one in.
 */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(level: string, name = 'logdrain', destination?: { write(line: string): void }): Logger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['secret', '*.secret', 'headers', '*.headers', 'authorization', '*.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
