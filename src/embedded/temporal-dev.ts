import path from 'node:path';
import { Connection } from '@temporalio/client';
import { devServerSearchAttributeFlags } from '../domain/temporal/search-attributes';
import { startService, type ManagedProcess } from './child-process';

export interface EmbeddedTemporal {
  process: ManagedProcess;
  address: string;
  uiUrl: string;
}

/** `temporal server start-dev` with a SQLite file, so workflow history survives restarts. */
export async function startTemporalDevServer(options: {
  binary: string;
  dbFile: string;
  port: number;
  uiPort: number;
  namespace: string;
  logDir: string;
  /** Called as soon as the process exists, before it is ready. */
  onSpawn?: (pid: number) => void;
}): Promise<EmbeddedTemporal> {
  const address = `127.0.0.1:${options.port}`;
  const proc = await startService({
    name: 'temporal',
    file: options.binary,
    args: [
      'server', 'start-dev',
      '--db-filename', options.dbFile,
      // Write-ahead logging, synced at checkpoints: a commit survives the process crashing (not the
      // machine losing power mid-write), at a fraction of the fsyncs. A fleet run's targets, each a
      // workflow, are otherwise held up by SQLite's syncs.
      '--sqlite-pragma', 'journal_mode=wal',
      '--sqlite-pragma', 'synchronous=normal',
      '--ip', '127.0.0.1',
      '--port', String(options.port),
      '--ui-port', String(options.uiPort),
      '--namespace', options.namespace,
      '--log-level', 'warn',
      // A worker that schedules an activity gets it back in the same reply: a step starts without a
      // round trip through the task queue (halves the time between steps here).
      '--dynamic-config-value', 'system.enableActivityEagerExecution=true',
      ...devServerSearchAttributeFlags(),
    ],
    logFile: path.join(options.logDir, 'temporal.log'),
    ready: async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: options.namespace });
        return true;
      } finally {
        await connection.close();
      }
    },
    timeoutMs: 90_000,
    onSpawn: options.onSpawn,
  });
  return { process: proc, address, uiUrl: `http://127.0.0.1:${options.uiPort}` };
}
