import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Paths that may carry secrets; pino replaces their values before anything is written. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.private_key',
  '*.privateKey',
  '*.password',
  '*.passphrase',
  '*.token',
  '*.apiKey',
  'private_key',
  'password',
  'passphrase',
  'token',
  'apiKey',
];

/** What every line logged while handling a request carries (its `req_id`), whichever logger writes it. */
export const logContext = new AsyncLocalStorage<{ req_id: string }>();

/** Loggers whose lines carry a request id already (the request log's): the context must not add it twice. */
const boundToRequest = new WeakSet<object>();

export function boundToRequestId(logger: Logger): void {
  boundToRequest.add(logger);
}

/** JSON lines to stdout, or to stderr (fd 2) where stdout carries a command's answer, or to a stream (tests capture logs). */
export function createLogger(level: string, name = 'bosun', destination: 1 | 2 | DestinationStream = 1): Logger {
  return pino(
    { name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, mixin: (_line, _level, logger) => (boundToRequest.has(logger) ? {} : (logContext.getStore() ?? {})) },
    typeof destination === 'number' ? pino.destination(destination) : destination,
  );
}
