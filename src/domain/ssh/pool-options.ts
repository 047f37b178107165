import { readFileSync } from 'node:fs';
import type { Logger } from '../../logger';
import type { SshErrorKind } from './errors';

export interface SshPoolOptions {
  connectTimeoutMs: number;
  /** sshd's MaxSessions defaults to 10; stay under it. */
  maxChannelsPerConnection: number;
  /** How long an idle connection stays open within the bound (SSH_POOL_IDLE_SECONDS); absent: 5 minutes. */
  idleTimeoutMs?: number;
  /**
   * Open connections kept at most while some are idle (SSH_POOL_MAX): opening one more closes the
   * least recently used idle one first. Busy connections are never closed for it: when all are busy
   * the new one opens anyway, and the pool shrinks back as they go idle. Absent: no bound.
   */
  maxConnections?: number;
  /**
   * Every how many health probes of a server one logs in afresh (checking its host key and that sshd
   * still takes logins); its connection then takes the pooled one's place. The others run `true` over
   * the pooled connection when there is one. Absent: 5.
   */
  freshProbeEvery?: number;
  /** Over the bound, how long an idle connection waits for its server's next step (a fleet target's steps follow each other) before it closes: 10 s. */
  overBoundIdleMs?: number;
  log: Logger;
  /** Told of every connection that could not be opened or broke (metrics). */
  onConnectionFailure?: (kind: SshErrorKind) => void;
  /** Told of every connection opened (a login: metrics). */
  onConnectionOpened?: () => void;
  /** Told of every connection the bound closed to make room, or did not keep (metrics). */
  onBoundEviction?: () => void;
}

/** At most one warning per this long that the bound makes servers log in afresh. */
const BOUND_WARNING_EVERY_MS = 10 * 60_000;

/**
 * What the pool calls each time it closes a connection (or does not keep one) only because it is at
 * SSH_POOL_MAX: its server's next use logs in again. Counted (metrics), and said at most once every ten
 * minutes with how many since: a bound below the servers in use makes every use a login.
 */
export function boundEvictions(options: Pick<SshPoolOptions, 'log' | 'onBoundEviction'>, max: () => number): () => void {
  let count = 0;
  let warnedAt = 0;
  return () => {
    options.onBoundEviction?.();
    count += 1;
    const now = Date.now();
    if (now - warnedAt < BOUND_WARNING_EVERY_MS) return;
    options.log.warn(
      { closed: count, max: max() },
      `SSH pool at its bound (SSH_POOL_MAX=${max()}): ${count} connection(s) closed or not kept to stay within it since the last such warning; each later use of their servers logs in afresh. With more servers in use than that, raise SSH_POOL_MAX (docs/configuration.md)`,
    );
    count = 0;
    warnedAt = now;
  };
}

/** Files a worker needs beside its SSH connections: MongoDB's and Temporal's sockets, the API's clients, its own files. */
const OTHER_OPEN_FILES = 200;

/** This process's soft limit of open files (Linux: /proc/self/limits); null where it cannot be read, or unlimited. */
function openFilesLimit(): number | null {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}

/**
 * Said once at the worker's start when its open files cannot hold SSH_POOL_MAX connections (one file
 * each) beside the rest: past the limit, a connection (or a MongoDB socket) fails with EMFILE in the
 * middle of a run. The limit is the process's to raise (`ulimit -n`, systemd's LimitNOFILE).
 */
export function warnIfTooFewOpenFiles(maxConnections: number, log: Logger): void {
  const limit = openFilesLimit();
  if (limit === null || limit >= maxConnections + OTHER_OPEN_FILES) return;
  log.warn(
    { openFiles: limit, sshPoolMax: maxConnections },
    `SSH_POOL_MAX=${maxConnections} wants about ${maxConnections + OTHER_OPEN_FILES} open files, and this process may open ${limit}: raise its limit (\`ulimit -n\`, LimitNOFILE= in a systemd unit) or lower SSH_POOL_MAX, or connections will fail when the pool fills`,
  );
}
