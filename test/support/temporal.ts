import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTemporalDevServer, type EmbeddedTemporal } from '../../src/embedded/temporal-dev';
import { portForProcess } from './ports';
import { portOpen } from './processes';
import { sharedServices } from './shared';

/**
 * A Temporal dev server of a test's own (its own ports and SQLite file), for tests that stop and
 * restart it: the run's shared server is never disturbed.
 */
export class PrivateTemporal {
  private server?: EmbeddedTemporal;

  private constructor(
    private readonly dir: string,
    private readonly port: number,
    private readonly uiPort: number,
  ) {}

  static async start(): Promise<PrivateTemporal> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-temporal-'));
    const temporal = new PrivateTemporal(dir, await portForProcess(), await portForProcess());
    await temporal.resume();
    return temporal;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts (or starts again) the server on the same port and SQLite file: workflow histories are kept. */
  async resume(): Promise<void> {
    this.server = await startTemporalDevServer({
      binary: sharedServices().temporalBinary,
      dbFile: path.join(this.dir, 'temporal.db'),
      port: this.port,
      uiPort: this.uiPort,
      namespace: 'default',
      logDir: this.dir,
    });
  }

  /** Stops the server (SIGTERM); its SQLite file stays for resume(). */
  async stop(): Promise<void> {
    await this.server?.process.stop();
    this.server = undefined;
  }

  /** Whether anything listens on the server's port. */
  reachable(): Promise<boolean> {
    return portOpen(this.port);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
