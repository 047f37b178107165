import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { startService, type ManagedProcess } from './child-process';

const REPLICA_SET = 'rs0';

export interface EmbeddedMongo {
  process: ManagedProcess;
  port: number;
  uri: string;
}

export const embeddedMongoUri = (port: number, database = 'bosun') =>
  `mongodb://127.0.0.1:${port}/${database}?replicaSet=${REPLICA_SET}`;

/** Makes this lone member primary of its set, initiating it on first start, repointing it when the port moved. */
async function ensurePrimary(port: number): Promise<void> {
  const client = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`, { serverSelectionTimeoutMS: 2000 });
  const host = `127.0.0.1:${port}`;
  try {
    const admin = client.db('admin');
    try {
      const { config } = await admin.command({ replSetGetConfig: 1 });
      if (config.members[0]?.host !== host) {
        config.members = [{ ...config.members[0], host }];
        config.version += 1;
        await admin.command({ replSetReconfig: config, force: true });
      }
    } catch (error) {
      if ((error as { codeName?: string }).codeName !== 'NotYetInitialized') throw error;
      await admin.command({ replSetInitiate: { _id: REPLICA_SET, members: [{ _id: 0, host }] } });
    }
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const hello = await admin.command({ hello: 1 });
      if (hello.isWritablePrimary) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('mongod did not become primary of its replica set within 30 s');
  } finally {
    await client.close();
  }
}

/** A genuine mongod as a single-node replica set (change streams need one), data under dataDir. */
export async function startMongod(options: {
  binary: string;
  dataDir: string;
  port: number;
  logDir: string;
  /** Called as soon as the process exists, before it is ready: a crash meanwhile must not orphan it untracked. */
  onSpawn?: (pid: number) => void;
}): Promise<EmbeddedMongo> {
  mkdirSync(options.dataDir, { recursive: true });
  mkdirSync(options.logDir, { recursive: true });
  const proc = await startService({
    name: 'mongod',
    file: options.binary,
    args: ['--dbpath', options.dataDir, '--port', String(options.port), '--bind_ip', '127.0.0.1', '--replSet', REPLICA_SET, '--quiet'],
    logFile: path.join(options.logDir, 'mongod.log'),
    ready: async () => {
      await ensurePrimary(options.port);
      return true;
    },
    timeoutMs: 60_000,
    onSpawn: options.onSpawn,
  });
  return { process: proc, port: options.port, uri: embeddedMongoUri(options.port) };
}
