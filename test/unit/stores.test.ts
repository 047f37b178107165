import { randomBytes } from 'node:crypto';
import mongoose, { Types } from 'mongoose';
import { connectDatabase } from '../../src/domain/database-connection';
import { ConversationModel } from '../../src/domain/conversations/model';
import * as conversations from '../../src/domain/conversations/store';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import { createRun } from '../../src/domain/deployments/new-runs';
import * as runs from '../../src/domain/deployments/runs';
import * as gates from '../../src/domain/deployments/gates';
import { askForTurn, nextRun } from '../../src/domain/run-queue';
import { takePlaces } from '../../src/domain/servers/run-turn';
import { ServerModel } from '../../src/domain/servers/model';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { sharedServices } from '../support/shared';

/*
 * The stores' promise, checked on the real MongoDB: a transition leaves only the state it expects
 * (a finished step is never started or finished again, an ended run never ends twice), and every
 * transition that changes what a client sees advances `seq` by exactly one.
 */

beforeAll(() => connectDatabase(embeddedMongoUri(sharedServices().mongoPort, `bosun_test_stores_${randomBytes(4).toString('hex')}`)));
afterAll(async () => {
  await mongoose.connection.dropDatabase();
  await mongoose.disconnect();
});

const twoSteps = [{ name: 'one', command: 'true' }, { name: 'two', command: 'true' }];
const newDeployment = (steps = twoSteps) =>
  DeploymentModel.create({ organization_id: new Types.ObjectId(), server_id: new Types.ObjectId(), name: `d-${randomBytes(3).toString('hex')}`, steps });

async function queuedRun(steps = twoSteps, deployment?: Awaited<ReturnType<typeof newDeployment>>) {
  deployment ??= await newDeployment(steps);
  return createRun({
    organization_id: deployment.organization_id,
    deployment_id: deployment._id,
    server_id: deployment.server_id,
    triggered_by: 'ci',
    token_id: new Types.ObjectId(),
    idempotency_key: null,
    queue_seq: 1,
    steps,
  });
}

const read = async (id: Types.ObjectId) => (await DeploymentRunModel.findById(id).lean())!;
const attempt = (succeeded: boolean, exitCode: number, final = true) => ({ succeeded, exitCode, timedOut: false, exitAttempt: 0, final, chunk: null });
const started = () => ({ startedAt: new Date(), exitAttempt: 0 });
/** A chunk of output as StepLog makes it: the step's output with it, its bytes, and the chunk at its offset. */
const chunk = (output: string, data: string) => ({ output, bytes: Buffer.byteLength(output), offset: output.length - data.length, data });

describe('the runs store', () => {
  test('each transition advances seq by one; a finished step is never started or finished again', async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    expect((await read(run._id)).seq).toBe(0);

    expect(await runs.beginRun(id)).not.toBeNull();
    expect(await read(run._id)).toMatchObject({ status: 'running', seq: 1 });
    const steps = runs.runSteps(id);
    await steps.startAttempt(0, started());
    await steps.appendOutput(0, chunk('hello\n', 'hello\n'));
    await steps.finishAttempt(0, attempt(true, 0));
    let now = await read(run._id);
    expect(now.seq).toBe(4);
    expect(now.steps[0]).toMatchObject({ status: 'success', exit_code: 0, attempts: 1, output: 'hello\n' });

    // Started, finished or failed again: nothing moves, and no event is made.
    await steps.startAttempt(0, { startedAt: new Date(), exitAttempt: 1 });
    expect(await steps.finishAttempt(0, attempt(false, 3))).toBe(false);
    await steps.failStep(0, { chunk: chunk('hello\nfailed\n', 'failed\n') });
    // Nor does late output overwrite the log it finished with.
    await steps.appendOutput(0, chunk('hello\nlate\n', 'late\n'));
    now = await read(run._id);
    expect(now.seq).toBe(4);
    expect(now.steps[0]).toMatchObject({ status: 'success', exit_code: 0, attempts: 1, output: 'hello\n' });

    await runs.skipSteps(id, 1);
    expect(await read(run._id)).toMatchObject({ seq: 5, steps: [{ status: 'success' }, { status: 'skipped' }] });
    await runs.finishRun(id, 'success', null);
    expect(await read(run._id)).toMatchObject({ status: 'success', seq: 6 });
    expect((await runs.lastRunsOf([run.deployment_id])).get(String(run.deployment_id))).toEqual({ status: 'success', at: (await read(run._id)).started_at });

    // An ended run does not end again, nor is it closed by anyone else.
    await runs.finishRun(id, 'failed', 'late');
    expect(await runs.closeRun(run._id, 'running', 'failed', { error: 'orphan' })).toBe(false);
    expect(await read(run._id)).toMatchObject({ status: 'success', error: null, seq: 6 });
  });

  test("a run's last step ends the run with its own result: one write, one change", async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    await runs.beginRun(id);
    const steps = runs.runSteps(id);
    await steps.finishAttempt(0, { ...attempt(true, 0), start: started() });
    expect(await read(run._id)).toMatchObject({ status: 'running', seq: 2 });
    expect(await steps.finishStepEndingRun(1, { exitCode: 0, timedOut: false, exitAttempt: 0, start: started(), chunk: chunk('done\n', 'done\n') })).toMatchObject({ _id: run._id, status: 'success' });
    const ended = await read(run._id);
    expect(ended).toMatchObject({ status: 'success', error: null, seq: 3, steps: [{ status: 'success' }, { status: 'success', attempts: 1, exit_code: 0, output: 'done\n' }] });
    expect(ended.completed_at).toBeInstanceOf(Date);
    expect(ended.steps[1]!.completed_at).toBeInstanceOf(Date);
    // Ended: nothing finishes it again.
    expect(await runs.finishRun(id, 'failed', 'late')).toBeNull();
    expect(await steps.finishAttempt(1, attempt(false, 1))).toBe(false);
    expect(await steps.finishStepEndingRun(1, { exitCode: 0, timedOut: false, exitAttempt: 1 , chunk: null })).toBeNull();
    expect(await read(run._id)).toMatchObject({ status: 'success', seq: 3 });
  });

  test("a last step closed by someone else does not end its run: the run keeps the status it was closed with", async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    await runs.beginRun(id);
    const steps = runs.runSteps(id);
    await steps.finishAttempt(0, { ...attempt(true, 0), start: started() });
    await steps.startAttempt(1, started());
    expect(await runs.closeRun(run._id, 'running', 'failed', { error: 'orphaned' })).toBe(true);
    const closed = await read(run._id);
    expect(await steps.finishStepEndingRun(1, { exitCode: 0, timedOut: false, exitAttempt: 0, chunk: chunk('late\n', 'late\n') })).toBeNull();
    expect(await read(run._id)).toMatchObject({ status: 'failed', error: 'orphaned', seq: closed.seq, steps: [{ status: 'success' }, { status: 'failed', output: '' }] });
  });

  test("a step's output grows chunk by chunk, each one change relayed as the run's last chunk", async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    await runs.beginRun(id);
    const steps = runs.runSteps(id);
    await steps.startAttempt(0, { ...started(), pgid: 77 });
    await steps.appendOutput(0, chunk('one\n', 'one\n'));
    await steps.appendOutput(0, chunk('one\ntwo\n', 'two\n'));
    expect(await read(run._id)).toMatchObject({
      seq: 4,
      last_chunk: { step: 0, offset: 4, data: 'two\n' },
      steps: [{ status: 'running', pgid: 77, output: 'one\ntwo\n', output_bytes: 8, streamed: 8 }, { status: 'pending' }],
    });
    // A retry pending: the step stays running, its command's group forgotten, not yet completed.
    expect(await steps.finishAttempt(0, { ...attempt(false, 2, false), chunk: chunk('one\ntwo\nthree\n', 'three\n') })).toBe(true);
    const retrying = await read(run._id);
    expect(retrying).toMatchObject({ seq: 5, last_chunk: { step: 0, offset: 8, data: 'three\n' }, steps: [{ status: 'running', pgid: null, exit_code: 2, last_exit: { attempt: 0, exit_code: 2 }, streamed: 14 }, { status: 'pending' }] });
    expect(retrying.steps[0]!.completed_at).toBeNull();
  });

  test('a step failed without its result: failed with its last output, once; a run step records no execution_success', async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    await runs.beginRun(id);
    const steps = runs.runSteps(id);
    await steps.startAttempt(0, { ...started(), pgid: 4242 });
    await steps.failStep(0, { chunk: chunk('--- failed: unreachable ---\n', '--- failed: unreachable ---\n') });
    const failed = await read(run._id);
    expect(failed).toMatchObject({ seq: 3, status: 'running', steps: [{ status: 'failed', pgid: null, output: '--- failed: unreachable ---\n' }, { status: 'pending' }] });
    expect(failed.steps[0]!.completed_at).toBeInstanceOf(Date);
    expect(failed.steps[0]).not.toHaveProperty('execution_success');
    await steps.failStep(0, { chunk: null });
    expect((await read(run._id)).seq).toBe(3);
  });

  test("a run's one step is read alone; a cancel closes the open steps in one change and returns their commands' process groups", async () => {
    const run = await queuedRun([...twoSteps, { name: 'three', command: 'true' }]);
    const id = run._id.toString();
    await runs.beginRun(id);
    const steps = runs.runSteps(id);
    await steps.finishAttempt(0, { ...attempt(true, 0), start: started() });
    await steps.startAttempt(1, { ...started(), pgid: 31 });
    const found = await runs.findRunStep(id, 1);
    expect(found?.step).toMatchObject({ name: 'two', status: 'running', pgid: 31 });
    expect(found?.run.server_id).toEqual(run.server_id);
    expect(await runs.findRunStep(id, 3)).toBeNull();

    expect(await runs.cancelSteps(id)).toEqual([31]);
    const cancelled = await read(run._id);
    expect(cancelled).toMatchObject({ seq: 4, steps: [{ status: 'success' }, { status: 'cancelled', pgid: null }, { status: 'cancelled' }] });
    expect(cancelled.steps[1]!.completed_at).toBeInstanceOf(Date);
    // Nothing open any more: no change.
    expect(await runs.cancelSteps(id)).toEqual([]);
    expect((await read(run._id)).seq).toBe(4);
  });

  test("a deployment's last run is its newest run, as it is now, whichever run ends first", async () => {
    const deployment = await newDeployment();
    const first = await queuedRun(twoSteps, deployment);
    const second = await queuedRun(twoSteps, deployment);
    const last = async () => (await runs.lastRunsOf([deployment._id])).get(String(deployment._id));
    // Queued: triggered at, not begun.
    expect(await last()).toEqual({ status: 'queued', at: (await read(second._id)).createdAt });
    await runs.beginRun(first._id.toString());
    expect((await last())!.status).toBe('queued');
    await runs.beginRun(second._id.toString());
    expect(await last()).toEqual({ status: 'running', at: (await read(second._id)).started_at });
    // The first ends while the second runs: the deployment's last run is still running.
    await runs.finishRun(first._id.toString(), 'failed', 'exit code 1');
    expect((await last())!.status).toBe('running');
    await runs.finishRun(second._id.toString(), 'success', null);
    expect((await last())!.status).toBe('success');
    // A deployment never run has none.
    const never = await newDeployment();
    expect((await runs.lastRunsOf([never._id])).has(String(never._id))).toBe(false);
  });

  test('a run closed without its workflow: its open steps closed as the workflow would have, in one change', async () => {
    const failed = await queuedRun();
    await runs.beginRun(failed._id.toString());
    await runs.runSteps(failed._id.toString()).startAttempt(0, { ...started(), pgid: 4242 });
    expect(await runs.closeRun(failed._id, 'running', 'failed', { error: 'gone' })).toBe(true);
    expect(await read(failed._id)).toMatchObject({ status: 'failed', error: 'gone', seq: 3, steps: [{ status: 'failed', pgid: null }, { status: 'skipped' }] });

    const cancelled = await queuedRun();
    expect(await runs.closeRun(cancelled._id, 'queued', 'cancelled')).toBe(true);
    expect(await read(cancelled._id)).toMatchObject({ status: 'cancelled', seq: 1, steps: [{ status: 'cancelled' }, { status: 'cancelled' }] });
    // Never begun: no longer queued, so a queue that reaches it skips it.
    expect(await runs.beginRun(cancelled._id.toString())).toBeNull();
  });
});

describe('the conversations store', () => {
  const newConversation = () =>
    conversations.createConversation({
      organization_id: new Types.ObjectId(),
      chatable_type: 'server',
      chatable_id: new Types.ObjectId(),
      server_id: new Types.ObjectId(),
      created_by: 'ci',
      message: { _id: new Types.ObjectId(), text: 'uptime', sent_by: 'ci' },
    });
  const readConversation = async (id: Types.ObjectId) => (await ConversationModel.findById(id).lean())!;

  /** A conversation whose instruction was planned as `titles`, each step pending. */
  async function planned(titles: string[]) {
    const created = await newConversation();
    const messageId = created.messages[0]!._id;
    const now = new Date();
    const steps = titles.map((title) => ({ _id: new Types.ObjectId(), message_id: messageId, title, command: 'uptime', target: 'server', risk: 'read', status: 'pending', created_at: now }));
    expect(await conversations.storePlan(created._id, messageId, steps)).toBe(true);
    return created._id;
  }

  test('an ended conversation does not end or change status again', async () => {
    const created = await newConversation();
    expect(created).toMatchObject({ status: 'running', seq: 0, messages: [{ text: 'uptime', sent_by: 'ci', planned: false }] });
    expect(created.messages[0]!.created_at).toBeInstanceOf(Date);
    const seq = async () => (await ConversationModel.findById(created._id).lean())!.seq;
    expect(await conversations.finish(created._id, 'completed', null)).toBe(true);
    expect(await seq()).toBe(1);
    expect(await conversations.finish(created._id, 'failed', 'late')).toBe(false);
    await conversations.setStatus(created._id, 'awaiting_approval');
    expect(await ConversationModel.findById(created._id).lean()).toMatchObject({ status: 'completed', error: null, seq: 1 });
  });

  test("a conversation step's result records whether its command succeeded, with its output, in one change; never twice", async () => {
    const id = await planned(['Check uptime', 'Check disk']);
    const steps = conversations.conversationSteps(id);
    expect(await conversations.findStep(id, 1)).toMatchObject({ title: 'Check disk', status: 'pending', execution_success: null });
    expect(await conversations.findStep(id, 2)).toBeNull();

    expect(await steps.finishAttempt(0, { ...attempt(true, 0), start: started(), chunk: chunk('up 3 days\n', 'up 3 days\n') })).toBe(true);
    let now = await readConversation(id);
    expect(now).toMatchObject({ seq: 2, last_chunk: { step: 0, offset: 0, data: 'up 3 days\n' } });
    expect(now.steps[0]).toMatchObject({ status: 'completed', execution_success: true, exit_code: 0, attempts: 1, output: 'up 3 days\n', output_bytes: 10, streamed: 10 });

    expect(await steps.finishAttempt(1, { ...attempt(false, 1), start: started() })).toBe(true);
    now = await readConversation(id);
    expect(now.seq).toBe(3);
    expect(now.steps[1]).toMatchObject({ status: 'failed', execution_success: false, exit_code: 1 });

    // Finished: neither finished nor failed again.
    expect(await steps.finishAttempt(0, attempt(false, 2))).toBe(false);
    await conversations.failStep(id, 0, now.steps[0]!, 'the server is unreachable');
    expect(await readConversation(id)).toMatchObject({ seq: 3, steps: [{ status: 'completed', execution_success: true, output: 'up 3 days\n' }, { status: 'failed' }] });
  });

  test('a conversation step failed without its result: failed, why at the end of its log, execution_success false', async () => {
    const id = await planned(['Check uptime']);
    await conversations.conversationSteps(id).startAttempt(0, { ...started(), pgid: 99 });
    await conversations.conversationSteps(id).appendOutput(0, chunk('partial', 'partial'));
    const step = (await conversations.findStep(id, 0))!;
    await conversations.failStep(id, 0, step, 'the server refused the connection');
    const now = await readConversation(id);
    expect(now.seq).toBe(4);
    expect(now.steps[0]).toMatchObject({ status: 'failed', execution_success: false, pgid: null, output: 'partial\n--- the server refused the connection ---\n' });
    expect(now.steps[0]!.completed_at).toBeInstanceOf(Date);
  });
});

describe('the run queue', () => {
  test("a run's end wakes its queue only for a turn the run took itself: a turn the queue gave, the queue waits out", async () => {
    const organizationId = new Types.ObjectId();
    const server = await ServerModel.create({
      organization_id: organizationId, title: 'web-1', host: '127.0.0.1', port: 22, username: 'deploy', auth_method: 'private_key', credentials: 'x', status: 'verified', host_key_fingerprint: 'SHA256:x',
    });
    const deployment = await DeploymentModel.create({ organization_id: organizationId, server_id: server._id, name: `d-${randomBytes(3).toString('hex')}`, steps: twoSteps });
    const [first, second, third] = [1, 2, 3].map(() => queuedRun(twoSteps, deployment));
    const placed = await Promise.all([first, second, third].map(async (run, i) => {
      const { _id } = await run!;
      await takePlaces(server._id, organizationId.toString(), 1);
      await DeploymentRunModel.updateOne({ _id }, { $set: { queue_seq: i + 1 } });
      return _id.toString();
    }));
    const [one, two, three] = placed as [string, string, string];
    const place = (runId: string, at: number) => ({ runId, serverId: server._id.toString(), organizationId: organizationId.toString(), place: at });
    // Nothing ahead of the first: it takes the turn itself; the others wait.
    expect(await askForTurn(place(one, 1))).toMatchObject({ turn: true });
    expect(await askForTurn(place(two, 2))).toEqual({ queued: true });
    // Its end wakes the queue for the first one waiting.
    expect((await runs.finishRun(one, 'success', null))?.waiting?.toString()).toBe(two);
    // The queue gives the turn to the next; that run's end wakes nobody (the queue waits for it), though a run still waits.
    expect((await nextRun(server._id.toString()))?.runId).toBe(two);
    await runs.beginRun(two);
    expect((await runs.finishRun(two, 'success', null))?.waiting).toBeNull();
    expect((await nextRun(server._id.toString()))?.runId).toBe(three);
  });
});

describe('a fleet run’s gate, in the store itself (whatever the client, the store refuses what it must)', () => {
  const person = (name: string) => ({ type: 'person' as const, id: new Types.ObjectId().toString(), name, token_id: null });
  /** A fleet run as a trigger creates it (by `actor`, stored as a trigger stores it: the id a string), then running (with `set`). */
  async function runningRun(actor: ReturnType<typeof person> | null = null, set: Record<string, unknown> = {}) {
    const deployment = await newDeployment();
    const fields = { organization_id: deployment.organization_id, deployment_id: deployment._id, server_id: null, token_id: null, idempotency_key: null, queue_seq: null, steps: twoSteps };
    const triggered = actor ? { ...fields, triggered_by: `${actor.name} (person)`, actor } : { ...fields, triggered_by: 'ci' };
    const run = await createRun(triggered);
    await DeploymentRunModel.updateOne({ _id: run._id }, { $set: { status: 'running', ...set } });
    return run;
  }

  test('the triggerer never approves, a person approves once, the count decides; after expiry nothing is recorded; each write advances seq once', async () => {
    const carol = person('Carol');
    const alice = person('Alice');
    const bob = person('Bob');
    const run = await runningRun(carol, { plan_hash: 'h'.repeat(64) });
    const now = Date.now();
    expect(await gates.openGate(run._id.toString(), { beforeBatch: 2, approvals: 2, expiresIn: '1h', openedAt: new Date(now), expiresAt: new Date(now + 3600_000) })).toEqual({ expiresAt: new Date(now + 3600_000), outcome: null, rejection: null });
    const seq = async () => (await DeploymentRunModel.findById(run._id).lean())!.seq;
    const before = await seq();

    expect(await gates.approveGate(run._id.toString(), 2, carol, null)).toMatchObject({ refused: 'self_approval' });
    expect(await gates.approveGate(run._id.toString(), 2, alice, 'fine')).toEqual({ recorded: true, approvals: 1, outcome: null });
    expect(await gates.approveGate(run._id.toString(), 2, alice, 'again')).toMatchObject({ refused: 'already_approved' });
    expect(await gates.approveGate(run._id.toString(), 3, bob, null)).toMatchObject({ refused: 'not_awaiting_approval' });
    expect(await seq()).toBe(before + 1);
    expect(await gates.approveGate(run._id.toString(), 2, bob, null)).toEqual({ recorded: true, approvals: 2, outcome: 'approved' });
    const approved = (await DeploymentRunModel.findById(run._id).lean())!;
    expect([approved.status, approved.gate!.outcome, approved.gate!.approvals.map((a) => [a.by.name, a.plan_hash]), approved.seq]).toEqual([
      'running',
      'approved',
      [['Alice', 'h'.repeat(64)], ['Bob', 'h'.repeat(64)]],
      before + 2,
    ]);

    // A second gate that expires: an approval after its time is refused as expired, and the expiry is recorded once.
    await gates.openGate(run._id.toString(), { beforeBatch: 3, approvals: 1, expiresIn: '1s', openedAt: new Date(now), expiresAt: new Date(now + 1000) });
    expect(await gates.approveGate(run._id.toString(), 3, bob, null, new Date(now + 2000))).toMatchObject({ refused: 'expired' });
    expect(await gates.expireGate(run._id.toString(), 3)).toBe('expired');
    expect(await gates.expireGate(run._id.toString(), 3)).toBe('expired');
    expect(await gates.rejectGate(run._id.toString(), 3, bob, 'late')).toMatchObject({ refused: 'expired' });
  });

  test('a gate opened again (its workflow’s task done again after a worker died) is the gate as first opened, decided or not: never opened afresh', async () => {
    const alice = person('Alice');
    const now = Date.now();
    const opening = (openedAt: number, beforeBatch = 2) => ({ beforeBatch, approvals: 1, expiresIn: '1h', openedAt: new Date(openedAt), expiresAt: new Date(openedAt + 3600_000) });

    // Approved between the opening and its repeat: the run is running again, the approval stands.
    const run = await runningRun();
    const id = run._id.toString();
    expect(await gates.openGate(id, opening(now))).toEqual({ expiresAt: new Date(now + 3600_000), outcome: null, rejection: null });
    expect(await gates.openGate(id, opening(now + 5000))).toEqual({ expiresAt: new Date(now + 3600_000), outcome: null, rejection: null });
    expect(await gates.approveGate(id, 2, alice, 'go')).toEqual({ recorded: true, approvals: 1, outcome: 'approved' });
    const approved = await read(run._id);
    expect(await gates.openGate(id, opening(now + 9000))).toEqual({ expiresAt: new Date(now + 3600_000), outcome: 'approved', rejection: null });
    const after = await read(run._id);
    expect([after.status, after.gate!.outcome, after.gate!.approvals.map((a) => a.by.name), after.seq]).toEqual(['running', 'approved', ['Alice'], approved.seq]);
    // A run frozen before that batch, continued as new, comes back to the gate it passed.
    await DeploymentRunModel.updateOne({ _id: run._id }, { $set: { status: 'frozen' } });
    expect(await gates.openGate(id, opening(now + 60_000))).toMatchObject({ outcome: 'approved' });
    // The next gate opens as ever.
    await DeploymentRunModel.updateOne({ _id: run._id }, { $set: { status: 'running' } });
    expect(await gates.openGate(id, opening(now + 90_000, 3))).toEqual({ expiresAt: new Date(now + 90_000 + 3600_000), outcome: null, rejection: null });
    expect((await read(run._id)).status).toBe('awaiting_approval');

    // Rejected before the repeat: who and why come back with it.
    const rejected = await runningRun();
    await gates.openGate(rejected._id.toString(), opening(now));
    await gates.rejectGate(rejected._id.toString(), 2, alice, 'not today');
    expect(await gates.openGate(rejected._id.toString(), opening(now + 9000))).toEqual({ expiresAt: new Date(now + 3600_000), outcome: 'rejected', rejection: 'approval rejected by Alice: not today' });

    // A run that ended meanwhile has no gate to come back to.
    await DeploymentRunModel.updateOne({ _id: rejected._id }, { $set: { status: 'cancelled' } });
    expect(await gates.openGate(rejected._id.toString(), opening(now + 9000))).toBeNull();
  });

  test('a refused pause or resume says whether the store holds a pause (its workflow follows the store)', async () => {
    const alice = person('Alice');
    const run = await runningRun(null, { fleet: { total: 1, batches: 1, batch_size: 1, max_failures: 0 } });
    const id = run._id.toString();
    expect(await gates.resumeRun(id)).toMatchObject({ refused: 'not_paused', pause_asked: false });
    expect(await gates.requestPause(id, alice, 'hold')).toEqual({ recorded: true });
    expect(await gates.requestPause(id, alice, 'hold')).toMatchObject({ refused: 'not_running', pause_asked: true });
    expect(await gates.holdPaused(id)).toBe(true);
    expect(await gates.resumeRun(id)).toEqual({ recorded: true });
    // The same resume again (its handler run again after a worker died): refused, and no pause held.
    expect(await gates.resumeRun(id)).toMatchObject({ refused: 'not_paused', pause_asked: false });
    expect((await read(run._id)).status).toBe('running');
  });

  test('a decision recorded again (its workflow’s handler run again after a worker died) is found recorded, once; the same person’s next request is refused', async () => {
    const [alice, bob] = [person('Alice'), person('Bob')];
    const now = Date.now();
    const gated = async (approvals: number) => {
      const run = await runningRun();
      await gates.openGate(run._id.toString(), { beforeBatch: 2, approvals, expiresIn: '1h', openedAt: new Date(now), expiresAt: new Date(now + 3600_000) });
      return run._id;
    };

    const twoNeeded = await gated(2);
    const first = { kind: 'approve' as const, by: alice, comment: 'ok', id: 'decision-1' };
    expect(await gates.recordDecision(twoNeeded.toString(), 2, first)).toEqual({ recorded: true, approvals: 1, outcome: null });
    const once = await read(twoNeeded);
    expect(await gates.recordDecision(twoNeeded.toString(), 2, first)).toEqual({ recorded: true, approvals: 1, outcome: null });
    expect(await gates.recordDecision(twoNeeded.toString(), 2, { ...first, id: 'decision-2' })).toMatchObject({ refused: 'already_approved' });
    expect(await gates.recordDecision(twoNeeded.toString(), 2, { ...first, id: undefined })).toMatchObject({ refused: 'already_approved' });
    const second = { kind: 'approve' as const, by: bob, comment: null, id: 'decision-3' };
    expect(await gates.recordDecision(twoNeeded.toString(), 2, second)).toEqual({ recorded: true, approvals: 2, outcome: 'approved' });
    // Again after the approval that decided the gate (the run running again): recorded, as it stands.
    expect(await gates.recordDecision(twoNeeded.toString(), 2, second)).toEqual({ recorded: true, approvals: 2, outcome: 'approved' });
    const after = await read(twoNeeded);
    expect([after.gate!.approvals.map((a) => a.by.name), after.seq]).toEqual([['Alice', 'Bob'], once.seq + 1]);

    const rejectedRun = await gated(1);
    const rejection = { kind: 'reject' as const, by: alice, reason: 'not today', id: 'decision-4' };
    expect(await gates.recordDecision(rejectedRun.toString(), 2, rejection)).toEqual({ recorded: true, approvals: 0, outcome: 'rejected' });
    expect(await gates.recordDecision(rejectedRun.toString(), 2, rejection)).toEqual({ recorded: true, approvals: 0, outcome: 'rejected' });
    expect(await gates.recordDecision(rejectedRun.toString(), 2, { ...rejection, by: bob, id: 'decision-5' })).toMatchObject({ refused: 'not_awaiting_approval' });
  });
});
