import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { resolveBinary } from './binaries';
import { embeddedMongoUri, startMongod, type EmbeddedMongo } from './mongod';
import { freePort } from './ports';
import { startTemporalDevServer, type EmbeddedTemporal } from './temporal-dev';

/** Written to <BOSUN_HOME>/stack.json while `npm start` runs; the CLI reads it to find the database. */
export interface StackState {
  pid: number;
  mongo?: { pid: number; port: number };
  temporal?: { pid: number; port: number; uiPort: number };
}

export class StackBusyError extends Error {
  override name = 'StackBusyError';
}

const stateFile = (home: string) => path.join(home, 'stack.json');

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Is pid still one of this home's services (and not a recycled pid of something else)? */
const isOurService = (pid: number, home: string) => {
  try {
    return isAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home);
  } catch {
    return false;
  }
};

function readState(home: string): StackState | null {
  try {
    return JSON.parse(readFileSync(stateFile(home), 'utf8')) as StackState;
  } catch {
    return null;
  }
}

/** The running stack of this BOSUN_HOME, or null when none runs. */
export function runningStack(home: string): StackState | null {
  const state = readState(home);
  return state && isAlive(state.pid) ? state : null;
}

export const runningStackMongoUri = (state: StackState) => (state.mongo ? embeddedMongoUri(state.mongo.port) : undefined);

/** Refuses a second stack on the same home; after a crash, stops the services the dead one left behind. */
async function takeOverHome(home: string, log: Logger): Promise<void> {
  const state = readState(home);
  if (!state) return;
  if (state.pid !== process.pid && isAlive(state.pid)) {
    throw new StackBusyError(
      `Another Bosun (pid ${state.pid}) is already running with BOSUN_HOME=${home}. ` +
        'Stop it first, or give this one its own BOSUN_HOME.',
    );
  }
  const orphans = [state.mongo?.pid, state.temporal?.pid].filter((pid): pid is number => !!pid && isOurService(pid, home));
  for (const pid of orphans) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (orphans.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of orphans.filter(isAlive)) process.kill(pid, 'SIGKILL');
  log.warn({ stalePid: state.pid, stopped: orphans }, 'recovered from an unclean shutdown of a previous Bosun');
  rmSync(stateFile(home), { force: true });
}

export interface EmbeddedStack {
  mongoUri: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  stop(): Promise<void>;
}

/** Starts what the configuration does not point elsewhere: mongod unless MONGODB_URI, Temporal unless TEMPORAL_ADDRESS. */
export async function startEmbeddedStack(config: Config, log: Logger): Promise<EmbeddedStack> {
  const { home, cacheDir } = config;
  mkdirSync(path.join(home, 'logs'), { recursive: true });
  await takeOverHome(home, log);
  const logDir = path.join(home, 'logs');
  const state: StackState = { pid: process.pid };
  let mongo: EmbeddedMongo | undefined;
  let temporal: EmbeddedTemporal | undefined;

  const stop = async () => {
    await temporal?.process.stop();
    await mongo?.process.stop();
    if (readState(home)?.pid === process.pid) rmSync(stateFile(home), { force: true });
  };

  try {
    const [mongodBinary, temporalBinary] = await Promise.all([
      config.mongo.uri ? undefined : resolveBinary('mongod', { explicitPath: config.mongo.mongodPath, cacheDir, log, offline: config.offline }),
      config.temporal.address ? undefined : resolveBinary('temporal', { explicitPath: config.temporal.cliPath, cacheDir, log, offline: config.offline }),
    ]);
    const startMongo = async (binary: string) => {
      const port = await freePort(config.mongo.port);
      if (port !== config.mongo.port) log.warn({ wanted: config.mongo.port, port }, 'MongoDB port taken; using another');
      mongo = await startMongod({ binary, dataDir: path.join(home, 'mongo'), port, logDir });
      state.mongo = { pid: mongo.process.child.pid!, port };
    };
    const startTemporal = async (binary: string) => {
      const port = await freePort(config.temporal.port);
      let uiPort = await freePort(config.temporal.uiPort);
      if (uiPort === port) uiPort = await freePort(0);
      if (port !== config.temporal.port) log.warn({ wanted: config.temporal.port, port }, 'Temporal port taken; using another');
      temporal = await startTemporalDevServer({
        binary,
        dbFile: path.join(home, 'temporal.db'),
        port,
        uiPort,
        namespace: config.temporal.namespace,
        logDir,
      });
      state.temporal = { pid: temporal.process.child.pid!, port, uiPort };
    };
    // Both start at once; if one fails, the other is still awaited so stop() finds it and ends it.
    const results = await Promise.allSettled([
      mongodBinary && startMongo(mongodBinary),
      temporalBinary && startTemporal(temporalBinary),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    writeFileSync(stateFile(home), JSON.stringify(state, null, 2));
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    mongoUri: config.mongo.uri ?? mongo!.uri,
    temporalAddress: config.temporal.address ?? temporal!.address,
    temporalUiUrl: temporal?.uiUrl,
    stop,
  };
}
