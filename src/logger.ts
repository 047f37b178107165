import pino, { type Logger } from 'pino';

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

/** JSON lines to stdout, or to stderr (fd 2) where stdout carries a command's answer. */
export function createLogger(level: string, name = 'bosun', fd: 1 | 2 = 1): Logger {
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination(fd));
}
