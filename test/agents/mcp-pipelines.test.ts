import { randomBytes } from 'node:crypto';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { agentAccount, agentOverHttp, type Agent } from '../support/mcp';

type Json = any;

/*
 * An agent runs a pipeline through the MCP door (docs/agents.md): list_pipelines, run_pipeline,
 * get_pipeline_run. Its run stops before each stage whose deployment changes servers until a person
 * approves, as its change commands do; a read-only stage runs at once; a person's run of the same
 * pipeline is not held; with the organization's `agents_require_approval_for_change: false` an
 * agent's change stage is not held either.
 */

const n = () => randomBytes(3).toString('hex');
const ended = (run: Json) => ['success', 'failed', 'cancelled'].includes(run?.status);

let bosun: SharedBosun;
let ops: User;
let alice: User & { id: string };
let carol: User & { id: string };
let agent: Agent;
let agentToken: string;
let pipelineId: string;
const stage = (run: Json, name: string) => run.stages.find((s: Json) => s.name === name);

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'mcp-pipelines');
  const server = await ops.addServer({ host: '127.0.0.3', title: 'web-1' });
  alice = await addPerson(bosun, ops, 'Alice', 'approver');
  carol = await addPerson(bosun, ops, 'Carol', 'deployer');
  await ops.define({ name: 'web-check', server_id: server, steps: [{ name: 'check', command: 'cat /etc/hostname' }] });
  await ops.define({ name: 'web-roll', server_id: server, steps: [{ name: 'roll', command: `touch /tmp/bosun-agent-release-${n()}` }] });
  const defined = await ops.request('post', '/pipelines', {
    name: 'agent-release',
    stages: [
      { name: 'check', deployment: 'web-check' },
      { name: 'roll', deployment: 'web-roll', needs: ['check'] },
    ],
  });
  expect(defined.status).toBe(201);
  pipelineId = defined.body.data.id;
  const account = await agentAccount(ops, 'claude');
  agentToken = account.token;
  agent = await agentOverHttp(bosun.url, account.token);
}, 120_000);
afterAll(async () => {
  await agent?.close();
  for (const user of [ops, alice, carol]) user?.close();
  await bosun.stop();
});

test('list_pipelines shows the pipeline; run_pipeline holds the stage that changes servers for a person; get_pipeline_run follows it to success', async () => {
  const listed = await agent.call('list_pipelines');
  expect(listed.isError).toBe(false);
  expect(listed.data.pipelines.map((p: Json) => [p.id, p.name, p.stages.map((s: Json) => s.name)])).toEqual([[pipelineId, 'agent-release', ['check', 'roll']]]);

  const started = await agent.call('run_pipeline', { pipeline_id: pipelineId });
  expect(started.isError).toBe(false);
  const runId = started.data.run_id;
  expect(started.data).toMatchObject({ pipeline_id: pipelineId, held_stages: ['roll'], console_url: `${bosun.url}/pipelines/${pipelineId}/runs/${runId}` });

  // The read-only stage ran; the change waits for a person.
  const waiting = await eventually(() => agent.call('get_pipeline_run', { pipeline_id: pipelineId, run_id: runId }), (r) => r.data.run?.status === 'awaiting_approval', 60_000);
  expect(stage(waiting.data.run, 'check').status).toBe('success');
  expect(stage(waiting.data.run, 'roll')).toMatchObject({ status: 'awaiting_approval', deployment_run_id: null, gate: { approvals: 1, expires_in: '24h' }, approval: { approvals_required: 1, approvals: [], outcome: null } });
  expect(waiting.data.run.actor).toMatchObject({ type: 'service_account', name: 'claude' });

  // The agent cannot pass its own hold: approving is people's.
  const byAgent = await bosun.api.post(`/api/v1/pipelines/${pipelineId}/runs/${runId}/stages/roll/approve`).set({ Authorization: `Bearer ${agentToken}` }).send({});
  expect(byAgent.status).toBe(403);
  const approved = await alice.request('post', `/pipelines/${pipelineId}/runs/${runId}/stages/roll/approve`, { comment: 'agent asked, looks right' });
  expect(approved.status).toBe(200);

  const done = await eventually(() => agent.call('get_pipeline_run', { pipeline_id: pipelineId, run_id: runId }), (r) => ended(r.data.run), 60_000);
  expect(done.data.run.status).toBe('success');
  expect(stage(done.data.run, 'roll')).toMatchObject({ status: 'success', deployment_run_id: expect.stringMatching(/^[0-9a-f]{24}$/), approval: { outcome: 'approved', approvals: [{ by: { name: 'Alice' }, comment: 'agent asked, looks right' }] } });
}, 180_000);

test('a person’s run of the same pipeline is not held; an organization that lets agents change without approval holds no stage of theirs', async () => {
  const byPerson = await carol.request('post', `/pipelines/${pipelineId}/run`, {});
  expect(byPerson.status).toBe(202);
  const run = await eventually(async () => (await carol.request('get', `/pipelines/${pipelineId}/runs/${byPerson.body.run_id}`)).body.data, ended, 60_000);
  expect([run.status, stage(run, 'roll').gate, stage(run, 'roll').approval]).toEqual(['success', null, null]);

  expect((await ops.request('put', '/policy', { allow_destructive: false, require_approval_for: ['destructive'], agents_require_approval_for_change: false })).status).toBe(200);
  try {
    const started = await agent.call('run_pipeline', { pipeline_id: pipelineId });
    expect(started.data.held_stages).toEqual([]);
    const done = await eventually(() => agent.call('get_pipeline_run', { pipeline_id: pipelineId, run_id: started.data.run_id }), (r) => ended(r.data.run), 60_000);
    expect(done.data.run.status).toBe('success');
  } finally {
    await ops.request('put', '/policy', { allow_destructive: false, require_approval_for: ['destructive'] });
  }
}, 180_000);

test('what Bosun refuses comes back as the tool’s error: an unknown pipeline, a missing parameter', async () => {
  const missing = await agent.call('get_pipeline_run', { pipeline_id: 'a'.repeat(24), run_id: 'b'.repeat(24) });
  expect([missing.isError, missing.data.error.status, missing.data.error.code]).toEqual([true, 404, 'not_found']);
  const unknownParameter = await agent.call('run_pipeline', { pipeline_id: pipelineId, parameters: { version: '1' } });
  expect([unknownParameter.isError, unknownParameter.data.error.status, unknownParameter.data.error.code]).toEqual([true, 422, 'validation_failed']);
});
