import { randomBytes } from 'node:crypto';
import mongoose, { Types } from 'mongoose';
import { connectDatabase } from '../../src/domain/database';
import { ConversationModel } from '../../src/domain/conversations/model';
import * as conversations from '../../src/domain/conversations/store';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import * as runs from '../../src/domain/deployments/runs';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { eventually } from '../support/eventually';
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
  return runs.createRun({
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
const attempt = (status: string, exitCode: number, final = true) => ({ status, exitCode, timedOut: false, exitAttempt: 0, final, fields: {} });

describe('the runs store', () => {
  test('each transition advances seq by one; a finished step is never started or finished again', async () => {
    const run = await queuedRun();
    const id = run._id.toString();
    expect((await read(run._id)).seq).toBe(0);

    expect(await runs.beginRun(id)).not.toBeNull();
    expect(await read(run._id)).toMatchObject({ status: 'running', seq: 1 });
    const steps = runs.runSteps(id);
    await steps.startAttempt(0, { startedAt: new Date(), exitAttempt: 0 });
    await steps.appendOutput(0, { 'steps.0.output': 'hello\n' });
    await steps.finishAttempt(0, attempt('success', 0));
    let now = await read(run._id);
    expect(now.seq).toBe(4);
    expect(now.steps[0]).toMatchObject({ status: 'success', exit_code: 0, attempts: 1, output: 'hello\n' });

    // Started, finished or failed again: nothing moves, and no event is made.
    await steps.startAttempt(0, { startedAt: new Date(), exitAttempt: 1 });
    await steps.finishAttempt(0, attempt('failed', 3));
    await steps.failStep(0, {});
    // Nor does late output overwrite the log it finished with.
    await steps.appendOutput(0, { 'steps.0.output': 'late\n' });
    now = await read(run._id);
    expect(now.seq).toBe(4);
    expect(now.steps[0]).toMatchObject({ status: 'success', exit_code: 0, attempts: 1, output: 'hello\n' });

    await runs.skipSteps(id, 1);
    expect(await read(run._id)).toMatchObject({ seq: 5, steps: [{ status: 'success' }, { status: 'skipped' }] });
    await runs.finishRun(id, 'success', null);
    expect(await read(run._id)).toMatchObject({ status: 'success', seq: 6 });
    expect((await DeploymentModel.findById(run.deployment_id).lean())!.last_run_status).toBe('success');

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
    await steps.finishAttempt(0, { ...attempt('success', 0), start: { startedAt: new Date(), exitAttempt: 0 } });
    expect(await read(run._id)).toMatchObject({ status: 'running', seq: 2 });
    expect(await steps.finishAttempt(1, { ...attempt('success', 0), start: { startedAt: new Date(), exitAttempt: 0 }, fields: runs.endFields('success') })).toBe(true);
    const ended = await read(run._id);
    expect(ended).toMatchObject({ status: 'success', error: null, seq: 3, steps: [{ status: 'success' }, { status: 'success' }] });
    expect(ended.completed_at).toBeInstanceOf(Date);
    // Ended: nothing finishes it again.
    expect(await runs.finishRun(id, 'failed', 'late')).toBeNull();
    expect(await steps.finishAttempt(1, attempt('failed', 1))).toBe(false);
  });

  test("a run's end marks its deployment only while it is the deployment's last run", async () => {
    const deployment = await newDeployment();
    const first = await queuedRun(twoSteps, deployment);
    const second = await queuedRun(twoSteps, deployment);
    const mark = async () => (await DeploymentModel.findById(deployment._id).lean())!.last_run_status;
    await runs.beginRun(first._id.toString());
    const firstBegun = (await read(first._id)).started_at!.getTime();
    // The second begins on a later millisecond of the clock than the first: its mark is the later one.
    await eventually(async () => Date.now(), (now) => now > firstBegun);
    await runs.beginRun(second._id.toString());
    expect(await mark()).toBe('running');
    // The first's begin repeated (its activity retried): the mark stays the second's.
    await runs.beginRun(first._id.toString());
    expect((await DeploymentModel.findById(deployment._id).lean())!.last_run_at).toEqual((await read(second._id)).started_at);
    // The first ends while the second runs: the deployment's last run is still running.
    await runs.finishRun(first._id.toString(), 'failed', 'exit code 1');
    expect(await mark()).toBe('running');
    await runs.finishRun(second._id.toString(), 'success', null);
    expect(await mark()).toBe('success');
  });

  test('a run closed without its workflow: its open steps closed as the workflow would have, in one change', async () => {
    const failed = await queuedRun();
    await runs.beginRun(failed._id.toString());
    await runs.runSteps(failed._id.toString()).startAttempt(0, { startedAt: new Date(), exitAttempt: 0, pgid: 4242 });
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
  test('an ended conversation does not end or change status again', async () => {
    const created = await conversations.createConversation({
      organization_id: new Types.ObjectId(),
      chatable_type: 'server',
      chatable_id: new Types.ObjectId(),
      server_id: new Types.ObjectId(),
      created_by: 'ci',
      messages: [{ _id: new Types.ObjectId(), text: 'uptime', sent_by: 'ci', created_at: new Date() }],
    });
    const seq = async () => (await ConversationModel.findById(created._id).lean())!.seq;
    expect(await conversations.finish(created._id, 'completed', null)).toBe(true);
    expect(await seq()).toBe(1);
    expect(await conversations.finish(created._id, 'failed', 'late')).toBe(false);
    await conversations.setStatus(created._id, 'awaiting_approval');
    expect(await ConversationModel.findById(created._id).lean()).toMatchObject({ status: 'completed', error: null, seq: 1 });
  });
});
