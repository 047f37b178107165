import type { NodeSSH } from 'node-ssh';
import type { Duplex } from 'node:stream';
import { describeTarget, openConnection, type OpenedConnection, type SshTarget } from './connect';
import { classifySshError, SshError } from './errors';
import { identityOf, poolKeyOf } from './pool-keys';
import { boundEvictions, type SshPoolOptions } from './pool-options';
import { runTrue } from './probe';

interface Entry {
  key: string;
  identity: string;
  connection: Promise<OpenedConnection>;
  active: number;
  /** Connections of servers behind this one (a jump host) that go through it: it stays open while any does. */
  dependents: number;
  /** Callers waiting for a channel; resolved true with a slot, or false when the entry was retired. */
  waiters: Array<(granted: boolean) => void>;
  retired: boolean;
  idleTimer?: NodeJS.Timeout;
  /** The connection, once open. */
  opened?: OpenedConnection;
  /** Health probes it answered. */
  probes: number;
}

const describeHop = (hop: SshTarget) => `jump host ${describeTarget(hop)}`;

export type { SshPoolOptions } from './pool-options';

/**
 * One SSH connection per server, shared by every activity of a worker, with a bounded number of
 * concurrent channels on each. A connection that fails or is replaced is retired: nobody new gets
 * it, and it is closed once the commands running on it are done.
 */
export class SshPool {
  private readonly entries = new Map<string, Entry>();
  /** Entries nothing runs on or goes through, least recently used first (a Set keeps insertion order). */
  private readonly idleEntries = new Set<Entry>();
  private closed = false;
  /** Counts (and says) each connection closed, or not kept, for the bound alone. */
  private readonly evictedForBound: () => void;

  constructor(private readonly options: SshPoolOptions) {
    this.evictedForBound = boundEvictions(options, () => this.maxConnections);
  }

  /** Connections open or opening (those retired while a command finishes on them not counted). */
  get size(): number {
    return this.entries.size;
  }

  get connectTimeoutMs(): number { return this.options.connectTimeoutMs; }

  /** Of those, the ones nothing runs on or goes through. */
  get idle(): number {
    return this.idleEntries.size;
  }

  /** Runs fn on the server's pooled connection; fn also learns the host key the server presented. */
  async withConnection<T>(target: SshTarget, fn: (ssh: NodeSSH, hostKeyFingerprint: string) => Promise<T>): Promise<T> {
    const entry = await this.acquire(target);
    let ssh: NodeSSH | undefined;
    try {
      const opened = await entry.connection;
      ssh = opened.ssh;
      return await fn(opened.ssh, opened.hostKeyFingerprint);
    } catch (error) {
      // A transport failure poisons the connection; a command that failed on a live connection does not.
      if (error instanceof SshError || !ssh?.isConnected()) this.retire(entry);
      throw error;
    } finally {
      this.release(entry);
    }
  }

  /**
   * Can the server run a command now? Over its pooled connection (no new login) unless freshProbeEvery probes came before;
   * else, or if that one cannot run `true` in time (then dropped), over a fresh login, pooled in place of an aged one or in a free place.
   */
  async probe(target: SshTarget): Promise<void> {
    const pooled = this.entries.get(poolKeyOf(target));
    const current = pooled?.identity === identityOf(target) && pooled.opened ? pooled : undefined;
    const pooledTurn = current && current.probes + 1 < (this.options.freshProbeEvery ?? 5);
    if (current && pooledTurn && current.active < this.options.maxChannelsPerConnection) {
      current.probes += 1;
      current.active += 1;
      this.busy(current);
      try {
        return await runTrue(current.opened!.ssh, target, this.options.connectTimeoutMs);
      } catch {
        this.retire(current);
      } finally {
        this.release(current);
      }
    }
    const opened = await this.open(target).catch((error: unknown) => {
      throw this.failed(error, target);
    });
    try {
      await runTrue(opened.ssh, target, this.options.connectTimeoutMs);
    } catch (error) {
      opened.ssh.dispose();
      throw error;
    }
    const replaces = current && !pooledTurn && this.entries.get(current.key) === current;
    const free = !this.entries.has(poolKeyOf(target));
    if (!this.closed && (replaces || (free && this.entries.size < this.maxConnections))) {
      this.afterUse(this.addEntry(target, Promise.resolve(opened)));
      return;
    }
    opened.ssh.dispose();
    // Not kept for the bound alone: this server's next check (or run) logs in again.
    if (!this.closed && free) this.evictedForBound();
  }

  /** Stops handing out the server's current connections (and those through it); commands running on them finish first. */
  evict(serverId: string): void {
    for (const entry of [...this.entries.values()]) if (entry.key.split('<').includes(serverId)) this.retire(entry);
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    this.idleEntries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        entry.retired = true;
        clearTimeout(entry.idleTimer);
        for (const wake of entry.waiters.splice(0)) wake(false);
        (await entry.connection.catch(() => null))?.ssh.dispose();
      }),
    );
  }

  private entryFor(target: SshTarget): Entry {
    if (this.closed) throw new SshError('transport', 'The SSH pool is shut down');
    const existing = this.entries.get(poolKeyOf(target));
    if (existing && existing.identity === identityOf(target)) return existing;
    if (existing) this.retire(existing);
    this.makeRoom();
    return this.addEntry(target, this.open(target));
  }

  /** The server's entry from now on, over this connection (the one it replaces retired). */
  private addEntry(target: SshTarget, connection: Promise<OpenedConnection>): Entry {
    const key = poolKeyOf(target);
    const existing = this.entries.get(key);
    if (existing) this.retire(existing);
    const entry: Entry = { key, identity: identityOf(target), connection, active: 0, dependents: 0, waiters: [], retired: false, probes: 0 };
    entry.connection.then(
      (opened) => {
        entry.opened = opened;
        this.options.log.debug({ server: target.key, target: describeTarget(target) }, 'ssh connection opened');
        opened.ssh.connection?.on('close', () => this.retire(entry));
        opened.ssh.connection?.on('error', (err) => {
          this.failed(err, target);
          this.options.log.warn({ server: target.key, err: err.message }, 'ssh connection error');
        });
      },
      // A failed connect must not linger for the next caller; this caller sees the error from withConnection.
      (error) => {
        this.failed(error, target);
        this.retire(entry);
      },
    );
    this.entries.set(key, entry);
    return entry;
  }

  /** A new connection to the server: directly, or through its jump host's pooled connection. */
  private open(target: SshTarget): Promise<OpenedConnection> {
    const opening = target.via ? this.openThrough(target, target.via) : openConnection(target, this.options.connectTimeoutMs);
    return opening.then((opened) => {
      this.options.onConnectionOpened?.();
      return opened;
    });
  }

  /**
   * As `ssh -J` does: a direct-tcpip channel from the jump host to the server, and the SSH session
   * inside it (the server's own host key checked against its pin, as the hop's was against its own).
   * The hop's connection is shared by every server behind it and kept open while one uses it.
   */
  private async openThrough(target: SshTarget, hop: SshTarget): Promise<OpenedConnection> {
    const timeoutMs = this.options.connectTimeoutMs;
    const hopEntry = this.entryFor(hop);
    hopEntry.dependents += 1;
    this.busy(hopEntry);
    // Once: when the connection through the hop closes, or when it could not be opened.
    const release = () => {
      hopEntry.dependents -= 1;
      this.afterUse(hopEntry);
    };
    try {
      const { ssh: hopSsh } = await hopEntry.connection.catch((error: unknown) => {
        const cause = classifySshError(error, describeTarget(hop));
        throw new SshError(cause.kind, `Through ${describeHop(hop)}: ${cause.message}`);
      });
      const channel = await new Promise<Duplex>((resolve, reject) => {
        const client = hopSsh.connection;
        if (!client) return reject(new SshError('transport', `The connection to ${describeHop(hop)} is closed`));
        const timer = setTimeout(() => reject(new SshError('timeout', `${describeHop(hop)} did not open a connection to ${target.host}:${target.port} within ${timeoutMs} ms`)), timeoutMs);
        client.forwardOut('127.0.0.1', 0, target.host, target.port, (error, stream) => {
          clearTimeout(timer);
          if (error) reject(new SshError('transport', `${describeHop(hop)} could not connect to ${target.host}:${target.port}: ${error.message}`));
          else resolve(stream);
        });
      });
      const opened = await openConnection(target, timeoutMs, channel);
      opened.ssh.connection?.once('close', release);
      return opened;
    } catch (error) {
      release();
      throw error;
    }
  }

  /** A channel slot on the server's live entry; a waiter whose entry is retired tries the newer one. */
  private async acquire(target: SshTarget): Promise<Entry> {
    for (;;) {
      const entry = this.entryFor(target);
      if (entry.active < this.options.maxChannelsPerConnection) {
        entry.active += 1;
        this.busy(entry);
        return entry;
      }
      if (await new Promise<boolean>((resolve) => entry.waiters.push(resolve))) return entry;
    }
  }

  private release(entry: Entry): void {
    entry.active -= 1;
    const next = entry.waiters.shift();
    if (next) {
      entry.active += 1;
      next(true);
      return;
    }
    this.afterUse(entry);
  }

  /**
   * Nothing runs on the entry now (a jump host: nothing goes through it either): disposed if retired,
   * else retired after the idle time, or sooner while the pool holds more than its bound (overBoundIdleMs).
   */
  private afterUse(entry: Entry): void {
    if (entry.active > 0 || entry.dependents > 0) return;
    if (entry.retired) {
      this.dispose(entry);
      return;
    }
    this.idleEntries.delete(entry);
    this.idleEntries.add(entry);
    this.expireLater(entry);
  }

  /** The idle entry's close: after the idle time; over the bound, after overBoundIdleMs if the pool is still over it then. */
  private expireLater(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    const over = this.entries.size > this.maxConnections;
    entry.idleTimer = setTimeout(
      () => (over && this.entries.size <= this.maxConnections ? this.expireLater(entry) : this.retire(entry)),
      over ? (this.options.overBoundIdleMs ?? 10_000) : (this.options.idleTimeoutMs ?? 300_000),
    );
    entry.idleTimer.unref();
  }

  /** Something runs on the entry (or goes through it) again. */
  private busy(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    this.idleEntries.delete(entry);
  }

  /** Before one more connection opens at the bound: the least recently used idle one is closed. */
  private makeRoom(): void {
    for (const oldest of this.idleEntries) {
      if (this.entries.size < this.maxConnections) return;
      this.retire(oldest);
      this.evictedForBound();
    }
  }

  private get maxConnections(): number {
    return this.options.maxConnections ?? Infinity;
  }

  private retire(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    this.idleEntries.delete(entry);
    if (entry.retired) return;
    entry.retired = true;
    this.options.log.debug({ server: entry.key, running: entry.active }, 'ssh connection retired');
    clearTimeout(entry.idleTimer);
    for (const wake of entry.waiters.splice(0)) wake(false);
    if (entry.active === 0 && entry.dependents === 0) this.dispose(entry);
  }

  private failed(error: unknown, target: SshTarget): SshError {
    const sshError = classifySshError(error, describeTarget(target));
    this.options.onConnectionFailure?.(sshError.kind);
    return sshError;
  }

  private dispose(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    entry.connection.then(({ ssh }) => ssh.dispose()).catch(() => undefined);
  }
}
