import { execFile } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { resolveBinary } from '../../src/embedded/binaries';
import { startMongod } from '../../src/embedded/mongod';
import { startTemporalDevServer } from '../../src/embedded/temporal-dev';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle } from '../../src/worker/temporal-worker';
import { portForProcess } from './ports';
import { Sshd } from './sshd';
import { TEST_ENV_VAR, TEST_HEARTBEAT_TIMEOUT_SECONDS, type SharedServices } from './shared';

const REPO = path.resolve(__dirname, '../..');

/**
 * dist/ up to date with the sources (compiled when one is newer, as `npm start` would): the Bosun
 * processes the tests start run what `npm start` runs, from dist/ (test/support/processes.ts).
 */
function built(): Promise<void> {
  const script = `require(${JSON.stringify(path.join(REPO, 'src/cli/build.js'))}).ensureBuilt({ label: 'test setup' })`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { cwd: REPO }, (error, _stdout, stderr) => {
      if (stderr) process.stderr.write(stderr);
      if (error) reject(new Error(`compiling dist/ failed: ${error.message}`));
      else resolve();
    }),
  );
}

/** Linux's tmpfs magic number (statfs f_type). */
const TMPFS = 0x01021994;

/**
 * Where the run's temporary files go: BOSUN_TEST_TMP if set, else /dev/shm when it is a writable
 * tmpfs (memory: mongod's and SQLite's syncs, and every collection a test Bosun creates, cost no disk
 * wait; about a tenth off the in-process files), else the system's temporary directory.
 */
function temporaryRoot(): string {
  if (process.env.BOSUN_TEST_TMP) return process.env.BOSUN_TEST_TMP;
  try {
    accessSync('/dev/shm', constants.W_OK);
    if (statfsSync('/dev/shm').type === TMPFS) return '/dev/shm';
  } catch {
    // none, or not ours to write
  }
  return os.tmpdir();
}

/**
 * A transaction whose Bosun was killed in the middle of it (the durability tests' SIGKILLs) holds its
 * documents' locks until mongod aborts it, after `transactionLifetimeLimitSeconds`: 60 by default, which
 * a test whose restarted Bosun writes the same documents waited out in full (an apply killed halfway
 * took 89 s, 60 of them waiting). The tests' mongod aborts such a transaction after 15 s; no
 * transaction of Bosun's comes near that (they are milliseconds). Production keeps mongod's default.
 */
async function abandonedTransactionsEndSooner(uri: string): Promise<void> {
  const client = await MongoClient.connect(uri, { directConnection: true });
  try {
    await client.db('admin').command({ setParameter: 1, transactionLifetimeLimitSeconds: 15 });
  } finally {
    await client.close();
  }
}

/** One genuine mongod, Temporal dev server and sshd for the whole run; test files get their own databases and task queues. */
export default async function globalSetup(): Promise<void> {
  const log = createLogger('warn', 'test-setup');
  const cacheDir = path.resolve(process.env.BOSUN_CACHE_DIR ?? '.bosun/cache');
  // Every temporary file of the run (the tests', their Bosun processes', the services') goes under one
  // directory, removed at the end: CI runs on the same machine again and again. Traversable by the
  // unprivileged test login, whose steps write into folders the tests share with it.
  const runDir = mkdtempSync(path.join(temporaryRoot(), 'bosun-run-'));
  chmodSync(runDir, 0o755);
  process.env.TMPDIR = runDir;
  const dir = mkdtempSync(path.join(runDir, 'bosun-test-'));
  const [mongodBinary, temporalBinary] = await Promise.all([
    resolveBinary('mongod', { explicitPath: process.env.MONGOD_PATH, cacheDir, log }),
    resolveBinary('temporal', { explicitPath: process.env.TEMPORAL_CLI_PATH, cacheDir, log }),
  ]);
  const [mongo, temporal, sshd] = await Promise.all([
    portForProcess().then((port) => startMongod({ binary: mongodBinary, dataDir: path.join(dir, 'mongo'), port, logDir: dir })),
    Promise.all([portForProcess(), portForProcess()]).then(([port, uiPort]) =>
      startTemporalDevServer({ binary: temporalBinary, dbFile: path.join(dir, 'temporal.db'), port, uiPort, namespace: 'default', logDir: dir }),
    ),
    portForProcess().then((port) => Sshd.start(path.join(dir, 'sshd'), port)),
    // The tests' Bosuns' bundle, and the default one (the workflow tests' workers, the replays).
    cachedWorkflowBundle(cacheDir, log, { heartbeatTimeoutSeconds: TEST_HEARTBEAT_TIMEOUT_SECONDS }).then(() => cachedWorkflowBundle(cacheDir, log)),
    built(),
  ]);
  await abandonedTransactionsEndSooner(mongo.uri);
  const logFile = path.join(dir, 'bosun-logs.jsonl');
  writeFileSync(logFile, '');
  const shared: SharedServices = {
    dir,
    logFile,
    cacheDir,
    mongodBinary,
    temporalBinary,
    mongoPort: mongo.port,
    temporalAddress: temporal.address,
    sshd: sshd.info,
  };
  writeFileSync(path.join(dir, 'shared.json'), JSON.stringify(shared));
  process.env[TEST_ENV_VAR] = path.join(dir, 'shared.json');
  Object.assign(globalThis, { __bosunServices: { mongo, temporal, sshd, dir, runDir } });
}
