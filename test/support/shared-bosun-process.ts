import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { isAlive } from '../../src/embedded/pids';
import { compose } from '../../src/compose';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { ScheduleModel } from '../../src/domain/schedules/model';
import { temporalScheduleId } from '../../src/domain/contracts/workflow-ids';
import type { Scope } from '../../src/domain/access/scopes';
import { createToken } from '../../src/domain/tokens/service';
import { registeredRoutes } from '../../src/api/http/route-inventory';
import { composeTuning, testConfig, testEnv, testLogger } from './bosun-config';
import { SHARED_BOSUN_OPTIONS, sharedBosunFile, type SharedBosunInfo } from './shared-bosun-info';
import { sharedServices } from './shared';

/*
 * The Bosun a jest worker shares between its test files, in a process of its own (started by
 * shared-bosun.ts on the worker's first call, once): built by the same compose() as `npm start`, on
 * the run's mongod, Temporal and sshd, with its own database and task queue. Test files are kept
 * apart by organization. Beside the API, a control port for the tests alone: a token of an
 * organization (created on first mention, as the in-process harness does), the app's routes, and an organization
 * forgotten once its file is done (its Temporal Schedules and running workflows ended, its documents
 * gone), so that nothing of one file runs on while the next one is measured. It stops when the jest
 * worker that started it is gone, or on SIGTERM.
 */

type Handler = (body: Record<string, unknown>) => Promise<unknown>;

/** Everything of an organization, ended and removed: its schedules first (no tick starts anything), then its workflows, then its documents. */
async function forget(temporal: Awaited<ReturnType<typeof compose>>['temporal'], slugs: string[]): Promise<number> {
  const organizations = await OrganizationModel.find({ slug: { $in: slugs } }, { _id: 1 }).lean();
  for (const { _id } of organizations) {
    const id = _id.toString();
    const schedules = await ScheduleModel.find({ organization_id: _id }, { _id: 1 }).lean();
    await Promise.all(schedules.map((s) => temporal.schedule.getHandle(temporalScheduleId(s._id.toString())).delete().catch(() => undefined)));
    const running: Array<{ workflowId: string; runId: string }> = [];
    for await (const execution of temporal.workflow.list({ query: `BosunOrganization = '${id}' AND ExecutionStatus = 'Running'` })) running.push(execution);
    await Promise.all(running.map(({ workflowId, runId }) => temporal.workflow.getHandle(workflowId, runId).terminate('its test file is over').catch(() => undefined)));
    for (const model of Object.values(mongoose.models)) {
      if (model.schema.path('organization_id')) await model.deleteMany({ organization_id: { $in: [_id, id] } });
    }
    await OrganizationModel.deleteOne({ _id });
  }
  return organizations.length;
}

function controlServer(handlers: Record<string, Handler>): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const handler = req.method === 'POST' ? handlers[req.url ?? ''] : undefined;
      if (!handler) return void res.writeHead(404).end();
      handler(body ? (JSON.parse(body) as Record<string, unknown>) : {}).then(
        // A connection per call: a kept-alive one, reused by the next file just as it timed out, failed its first call ("other side closed").
        (answer) => res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' }).end(JSON.stringify(answer)),
        (error: Error) => res.writeHead(500, { 'Content-Type': 'application/json', Connection: 'close' }).end(JSON.stringify({ error: error.message })),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main(): Promise<void> {
  const services = sharedServices();
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const log = testLogger(SHARED_BOSUN_OPTIONS, services);
  const env = testEnv(services, `w${worker}-${randomBytes(3).toString('hex')}`);
  const at = { mongoUri: env.MONGODB_URI, temporalAddress: services.temporalAddress };
  const bosun = await compose(testConfig(SHARED_BOSUN_OPTIONS, env), 'all', at, log, composeTuning(SHARED_BOSUN_OPTIONS));
  const control = await controlServer({
    '/token': async ({ org, scopes, name }) => ({ token: (await createToken({ org: String(org), name: String(name), scopes: scopes as Scope[] })).token }),
    '/forget': async ({ orgs }) => ({ forgotten: await forget(bosun.temporal, orgs as string[]) }),
    // The app's own routes (`METHOD /path`), for the tests that hold them against their tables.
    '/routes': async () => ({ routes: registeredRoutes(bosun.app!) }),
  });
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ why }, 'the shared Bosun of a jest worker stops');
    control.close();
    await bosun.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // The jest worker that started it is gone (ended, or killed): so is it.
  const parent = process.ppid;
  setInterval(() => {
    if (!isAlive(parent)) void stop('its jest worker is gone');
  }, 1000).unref();
  const info: SharedBosunInfo = {
    pid: process.pid,
    url: bosun.url!,
    control: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    mongoUri: env.MONGODB_URI,
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    secretKey: env.BOSUN_SECRET_KEY,
  };
  // Written whole, then renamed: a reader never sees half of it.
  const file = sharedBosunFile(services.dir, worker);
  writeFileSync(`${file}.tmp`, JSON.stringify(info));
  renameSync(`${file}.tmp`, file);
}

main().catch((error: Error) => {
  process.stderr.write(`the shared Bosun did not start: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
