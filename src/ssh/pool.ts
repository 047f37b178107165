import { createHash } from 'node:crypto';
import type { NodeSSH } from 'node-ssh';
import type { Logger } from '../logger';
import { openConnection, type OpenedConnection, type SshTarget } from './connect';
import { classifySshError, SshError } from './errors';

export interface SshPoolOptions {
  connectTimeoutMs: number;
  /** sshd's MaxSessions defaults to 10; stay under it. */
  maxChannelsPerConnection: number;
  idleTimeoutMs?: number;
  log: Logger;
}

interface Entry {
  key: string;
  identity: string;
  connection: Promise<OpenedConnection>;
  active: number;
  waiters: Array<() => void>;
  idleTimer?: NodeJS.Timeout;
}

/** What makes two targets the same connection: address, login and credentials. */
const identityOf = (t: SshTarget) =>
  createHash('sha256')
    .update(JSON.stringify([t.host, t.port, t.username, t.privateKey, t.passphrase, t.password, t.hostKeyFingerprint]))
    .digest('hex');

/**
 * One SSH connection per server, shared by every activity of a worker, with a bounded number of
 * concurrent channels on each. A connection that fails is dropped and the next caller reconnects.
 */
export class SshPool {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly options: SshPoolOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /** Runs fn on the server's pooled connection; fn also learns the host key the server presented. */
  async withConnection<T>(target: SshTarget, fn: (ssh: NodeSSH, hostKeyFingerprint: string) => Promise<T>): Promise<T> {
    if (this.closed) throw new SshError('transport', 'The SSH pool is shut down');
    const entry = this.entryFor(target);
    await this.acquire(entry);
    try {
      const { ssh, hostKeyFingerprint } = await entry.connection;
      return await fn(ssh, hostKeyFingerprint);
    } catch (error) {
      // A transport failure poisons the connection; a failing command does not.
      if (error instanceof SshError) this.drop(entry);
      throw error;
    } finally {
      this.release(entry);
    }
  }

  /** Connects afresh (not through the pool), runs a no-op and disconnects: is the server reachable now? */
  async probe(target: SshTarget): Promise<void> {
    const { ssh } = await openConnection(target, this.options.connectTimeoutMs);
    try {
      await ssh.execCommand('true');
    } catch (error) {
      throw classifySshError(error, `${target.host}:${target.port}`);
    } finally {
      ssh.dispose();
    }
  }

  evict(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.drop(entry);
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.entries()];
    this.entries.clear();
    await Promise.all(
      entries.map(async ([, entry]) => {
        clearTimeout(entry.idleTimer);
        (await entry.connection.catch(() => null))?.ssh.dispose();
      }),
    );
  }

  private entryFor(target: SshTarget): Entry {
    const identity = identityOf(target);
    const existing = this.entries.get(target.key);
    if (existing && existing.identity === identity) return existing;
    if (existing) this.drop(existing);
    const connection = openConnection(target, this.options.connectTimeoutMs).then((opened) => {
      opened.ssh.connection?.on('close', () => this.drop(entry));
      opened.ssh.connection?.on('error', (err) => this.options.log.warn({ server: target.key, err: err.message }, 'ssh connection error'));
      return opened;
    });
    const entry: Entry = { key: target.key, identity, connection, active: 0, waiters: [] };
    // A failed connect must not leave an unhandled rejection behind; callers see it through acquire.
    connection.catch(() => this.drop(entry));
    this.entries.set(target.key, entry);
    return entry;
  }

  private acquire(entry: Entry): Promise<void> {
    clearTimeout(entry.idleTimer);
    if (entry.active < this.options.maxChannelsPerConnection) {
      entry.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      entry.waiters.push(() => {
        entry.active += 1;
        resolve();
      }),
    );
  }

  private release(entry: Entry): void {
    entry.active -= 1;
    const next = entry.waiters.shift();
    if (next) return next();
    if (entry.active === 0) {
      entry.idleTimer = setTimeout(() => this.drop(entry), this.options.idleTimeoutMs ?? 60_000);
      entry.idleTimer.unref();
    }
  }

  private drop(entry: Entry): void {
    if (this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    clearTimeout(entry.idleTimer);
    entry.connection.then(({ ssh }) => ssh.dispose()).catch(() => undefined);
  }
}
