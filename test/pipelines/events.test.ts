import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { asUser, personToken, type User } from '../support/client';
import { connectSocket, type BosunSocket } from '../support/socket';
import type { PipelineRunUpdatedEvent } from '../../src/domain/events';

type Json = any;

/*
 * A pipeline run's live events (docs/events.md, PipelineRunUpdated): a client subscribes to a run and
 * sees every change of it, its seq one more each time, through to its final status; nobody who may
 * not read the pipeline can subscribe.
 */

describe('pipeline run events', () => {
  let bosun: SharedBosun;
  let admin: User;
  let work: string;
  let pipelineId: string;
  const sockets: BosunSocket[] = [];

  const call = async (token: string, method: 'get' | 'post', url: string, body?: object, status = method === 'post' ? 201 : 200) => {
    const request = bosun.api[method](`/api/v1${url}`).set(bearer(token));
    const res = await (body ? request.send(body) : request);
    if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  };
  const socketOf = async (token: string) => {
    const socket = await connectSocket(bosun.url, token);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'pipe-events');
    work = mkdtempSync(path.join(tmpdir(), 'bosun-pipeline-events-'));
    chmodSync(work, 0o777);
    const web = await admin.addServer({ host: '127.0.0.1', title: 'web-1', tags: ['web'] });
    const db = await admin.addServer({ host: '127.0.0.2', title: 'db-1', tags: ['db'] });
    // The build waits for the test's go, so that the run is still at its start when the client subscribes.
    await call(admin.token, 'post', '/deployments', { name: 'build', server_id: web, steps: [{ name: 'build', command: `for i in $(seq 600); do test -f ${work}/go && exit 0; sleep 0.1; done; exit 1` }] });
    await call(admin.token, 'post', '/deployments', { name: 'migrate', server_id: db, steps: [{ name: 'migrate', command: 'echo migrated' }] });
    pipelineId = (
      await call(admin.token, 'post', '/pipelines', {
        name: 'release',
        stages: [
          { name: 'build', deployment: 'build' },
          { name: 'migrate', deployment: 'migrate', needs: ['build'] },
        ],
      })
    ).data.id;
  }, 120_000);
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await bosun.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('a subscriber sees every change of the run, seq one more each time, through to success', async () => {
    const runId = (await call(admin.token, 'post', `/pipelines/${pipelineId}/run`, {}, 202)).run_id as string;
    const socket = await socketOf(admin.token);
    const events: PipelineRunUpdatedEvent[] = [];
    socket.on('PipelineRunUpdated', (event) => events.push(event));
    const answer = await socket.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: runId });
    if (!answer.ok) throw new Error(answer.error.message);
    const snapshot = answer.data.run as Json;
    expect([snapshot.id, snapshot.status, snapshot.seq]).toEqual([runId, expect.stringMatching(/^(queued|running)$/), answer.data.seq]);
    writeFileSync(path.join(work, 'go'), '');

    const last = await eventually(
      async () => events.at(-1)?.run as Json,
      (run) => ['success', 'failed', 'cancelled'].includes(run?.status),
      120_000,
    );
    expect(last.status).toBe('success');
    expect(last.stages.map((s: Json) => [s.name, s.status])).toEqual([
      ['build', 'success'],
      ['migrate', 'success'],
    ]);
    // Every change after the snapshot, none missed, none twice, each the run as it then stood.
    const after = events.filter((e) => e.seq > answer.data.seq);
    expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => answer.data.seq + 1 + i));
    expect(after.every((e) => e.pipeline_run_id === runId && (e.run as Json).seq === e.seq)).toBe(true);
    expect(after.map((e) => (e.run as Json).status)).toContain('running');
    // The last event is the run as GET shows it.
    const read = (await call(admin.token, 'get', `/pipelines/${pipelineId}/runs/${runId}`)).data;
    expect({ ...last, stages: last.stages.map((s: Json) => ({ ...s, deployment_run_status: null })) }).toEqual({
      ...read,
      stages: read.stages.map((s: Json) => ({ ...s, deployment_run_status: null })),
    });
  }, 150_000);

  test('another organization, a person who may not read every stage, or no run at all: not_found', async () => {
    const runs = (await call(admin.token, 'get', `/pipelines/${pipelineId}/runs`)).data;
    const runId = runs[0].id as string;
    const notFound = { ok: false, error: { code: 'not_found', message: 'Pipeline run not found' } };

    const stranger = await socketOf(await bosun.token('pipe-events-other'));
    expect(await stranger.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: runId })).toEqual(notFound);
    // A viewer of the web servers only does not see the migrate stage's deployment, so not the pipeline.
    const webViewer = await socketOf((await personToken(admin, 'Wen', 'viewer', ['web'])).token);
    expect(await webViewer.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: runId })).toEqual(notFound);
    expect(await webViewer.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: 'nope' })).toEqual(notFound);
    // A viewer of every server does.
    const viewer = await socketOf((await personToken(admin, 'Vera', 'viewer')).token);
    const answer = await viewer.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: runId });
    expect(answer.ok && (answer.data.run as Json).id).toBe(runId);
  }, 60_000);
});
