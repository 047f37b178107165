import { randomBytes } from 'node:crypto';
import { mongo } from 'mongoose';
import supertest from 'supertest';
import { compose, type Composed } from '../../src/compose';
import type { Scope } from '../../src/domain/access/scopes';
import { createToken } from '../../src/domain/tokens/service';
import { composeTuning, testConfig, testEnv, testLogger, type BosunOptions } from './bosun-config';
import { sharedServices } from './shared';

// Most suites wait for conditions on the Bosun they start: they take the one poller and the request helpers from here.
export { eventually } from './eventually';
export { bearer, conversationEnded, runEnded } from './http';
export type { BosunOptions } from './bosun-config';

/**
 * A whole Bosun inside the test process, built by the same compose() as `npm start`, on the shared
 * mongod and Temporal, with a database and task queue of its own so test files never see each
 * other's data: for a file that needs a Bosun configured its own way, or stopped, or looked into.
 * Files that need none of that share their jest worker's Bosun (shared-bosun.ts).
 */
export async function startBosun(options: BosunOptions = {}) {
  const services = sharedServices();
  const log = testLogger(options, services);
  const env = testEnv(services);
  const mongoUri = env.MONGODB_URI;
  const at = { mongoUri, temporalAddress: services.temporalAddress };
  const tuning = composeTuning(options);
  // One process with both roles, as `npm start` runs; or the API alone (no worker running), or the
  // API and a worker with another master key (a misconfigured worker).
  const roles: Composed[] = [];
  if (options.worker === false) roles.push(await compose(testConfig(options, env), 'api', at, log, tuning));
  else if (options.workerMasterKey) {
    roles.push(await compose(testConfig(options, env), 'api', at, log, tuning));
    roles.push(await compose(testConfig(options, { ...env, BOSUN_SECRET_KEY: options.workerMasterKey.toString('base64'), WORKER_METRICS_PORT: '0' }), 'worker', at, log, tuning));
  } else roles.push(await compose(testConfig(options, env), 'all', at, log, tuning));
  const api = roles[0]!;

  return {
    api: supertest(api.httpServer!),
    /** The Express app itself, for tests that look at its routes. */
    app: api.app!,
    /** Where the HTTP API and Socket.IO listen, for clients other than supertest. */
    url: api.url!,
    temporal: api.temporal,
    /** This Bosun's Temporal task queue (its own, as each test's Bosun has). */
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    sshd: services.sshd,
    services,
    mongoUri,
    /** Its database, Temporal, task queue and master key: for a Bosun process of another role on the same data. */
    env,
    /** A fresh API token of an organization (created on first mention). */
    async token(org: string, scopes: Scope[] = ['admin'], name = `token-${randomBytes(3).toString('hex')}`) {
      return (await createToken({ org, name, scopes })).token;
    },
    async stop() {
      for (const role of [...roles].reverse()) await role.stop();
      const client = new mongo.MongoClient(mongoUri);
      try {
        await client.db().dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}

export type Bosun = Awaited<ReturnType<typeof startBosun>>;
