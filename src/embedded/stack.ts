import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { resolveBinary } from './binaries';
import { embeddedMongoUri, startMongod, type EmbeddedMongo } from './mongod';
import { isAlive } from './pids';
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

const mongoDataDir = (home: string) => path.join(home, 'mongo');
const temporalDbFile = (home: string) => path.join(home, 'temporal.db');

/** Is pid still this home's service, judged by the exact data path among its arguments (not a recycled pid)? */
const isOurService = (pid: number, dataPath: string) => {
  try {
    return isAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataPath);
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

/** Stops the services a crashed Bosun left behind in this home. */
async function stopOrphans(state: StackState | null, home: string, log: Logger): Promise<void> {
  const orphans = [
    state?.mongo && isOurService(state.mongo.pid, mongoDataDir(home)) ? state.mongo.pid : null,
    state?.temporal && isOurService(state.temporal.pid, temporalDbFile(home)) ? state.temporal.pid : null,
  ].filter((pid): pid is number => pid !== null);
  for (const pid of orphans) process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (orphans.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of orphans.filter(isAlive)) process.kill(pid, 'SIGKILL');
  log.warn({ stalePid: state?.pid, stopped: orphans }, 'recovered from an unclean shutdown of a previous Bosun');
}

/**
 * Takes BOSUN_HOME for this process by creating stack.json exclusively, before anything starts. A
 * live owner means another Bosun runs here; a dead one crashed, and its leftovers are stopped first.
 */
async function takeHome(home: string, log: Logger): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(stateFile(home), JSON.stringify({ pid: process.pid }), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const state = readState(home);
    if (state && state.pid !== process.pid && isAlive(state.pid)) {
      throw new StackBusyError(
        `Another Bosun (pid ${state.pid}) is already running with BOSUN_HOME=${home}. ` +
          'Stop it first, or give this one its own BOSUN_HOME.',
      );
    }
    await stopOrphans(state, home, log);
    rmSync(stateFile(home), { force: true });
  }
  throw new StackBusyError(`Could not take BOSUN_HOME=${home}: another Bosun keeps starting there`);
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
  const logDir = path.join(home, 'logs');
  mkdirSync(logDir, { recursive: true });
  await takeHome(home, log);
  const state: StackState = { pid: process.pid };
  const saveState = () => writeFileSync(stateFile(home), JSON.stringify(state, null, 2));
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
      mongo = await startMongod({
        binary,
        dataDir: mongoDataDir(home),
        port,
        logDir,
        onSpawn: (pid) => {
          state.mongo = { pid, port };
          saveState();
        },
      });
    };
    const startTemporal = async (binary: string) => {
      const port = await freePort(config.temporal.port);
      let uiPort = await freePort(config.temporal.uiPort);
      if (uiPort === port) uiPort = await freePort(0);
      if (port !== config.temporal.port) log.warn({ wanted: config.temporal.port, port }, 'Temporal port taken; using another');
      temporal = await startTemporalDevServer({
        binary,
        dbFile: temporalDbFile(home),
        port,
        uiPort,
        namespace: config.temporal.namespace,
        logDir,
        onSpawn: (pid) => {
          state.temporal = { pid, port, uiPort };
          saveState();
        },
      });
    };
    // Both start at once; if one fails, the other is still awaited so stop() finds it and ends it.
    const results = await Promise.allSettled([
      mongodBinary && startMongo(mongodBinary),
      temporalBinary && startTemporal(temporalBinary),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
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
