import { hostname } from 'node:os';
import { conversationEnded, eventually } from '../support/bosun';
import { personToken, userAt, type User } from '../support/client';
import { heldWebServer } from '../support/held-web-server';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { PrivateTemporal } from '../support/temporal';

type Step = { id: string; status: string; execution_success: boolean | null; execution_log: string; title: string; approval: { decision: string | null } | null };
type Conversation = { id: string; status: string; seq: number; steps: Step[] };

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('conversations survive the death of the API and a restart of Temporal', () => {
  let temporal: PrivateTemporal;
  let bosun: BosunProcesses;
  let serverId: string;
  /** The user of the API process running now. */
  const ops = async (): Promise<User> => bosun.userAt(await bosun.alive('api')[0]!.ready());

  beforeAll(async () => {
    temporal = await PrivateTemporal.start();
    bosun = new BosunProcesses({ ...externalServicesEnv('conversations'), TEMPORAL_ADDRESS: temporal.address });
    await bosun.createToken('chat-durable');
    const { ops } = await bosun.launchApiAndWorker();
    serverId = await ops.addServer({ host: '127.0.0.7', title: 'chatty' });
  }, 150_000);
  afterAll(async () => {
    await bosun?.stop();
    await temporal?.destroy();
  });

  test('SIGKILL the API while a step runs: another API shows the conversation finish, its live events continuing', async () => {
    const [firstApi] = bosun.alive('api');
    // Started before the step: the step's curl may wait 15 s at most, and on a loaded machine a start can take longer.
    const takingOver = await bosun.launch('api');
    const takingOverAt = await takingOver.ready();
    const web = await heldWebServer();
    try {
      const first = bosun.userAt(await firstApi!.ready());
      const { id } = await first.startConversation(serverId, `check ${web.url} and then show the hostname`);
      const before = await first.subscribeConversation(id);

      // The curl of the first step is connected to our server and waits for its answer.
      await eventually(async () => web.requests, (n) => n === 1, 30_000);
      await first.waitForConversation(id, (c) => c.steps[0]?.status === 'running');
      await eventually(async () => before.steps().some((e) => e.step.status === 'running'), Boolean, 10_000);
      await firstApi!.stop('SIGKILL');

      const second = bosun.userAt(takingOverAt);
      const polled: Conversation = await second.getConversation(id);
      expect(polled.status).toBe('running');
      expect(polled.steps.map((s) => s.status)).toEqual(['running', 'pending']);
      const after = await second.subscribeConversation(id);
      web.release();

      await eventually(async () => after.updates().at(-1)?.status, (s) => s === 'completed', 60_000);
      const done: Conversation = await second.getConversation(id);
      expect(done.status).toBe('completed');
      expect(done.steps.map((s) => [s.title, s.status, s.execution_success])).toEqual([
        [`Check ${web.url}`, 'completed', true],
        ['Hostname', 'completed', true],
      ]);
      expect(done.steps[0]!.execution_log).toMatch(/^HTTP 200 in [\d.]+ s\n$/);
      expect(done.steps[1]!.execution_log).toBe(`${hostname()}\n`);
      expect(web.requests).toBe(1);

      // The other API relayed every change after its snapshot: the first step finishing, the second one, the end.
      const events = after.steps();
      const ofFirst = events.filter((e) => e.step.id === done.steps[0]!.id);
      expect(ofFirst.map((e) => e.chunk?.data ?? '').join('')).toBe(done.steps[0]!.execution_log);
      expect(ofFirst.at(-1)!.step).toEqual(done.steps[0]);
      expect(events.map((e) => [e.step.id, e.step.status]).filter(([, s]) => s !== 'running').map(([stepId]) => stepId)).toEqual([done.steps[0]!.id, done.steps[1]!.id]);
      expect(events.at(-1)!.step).toEqual(done.steps[1]);
      expect(after.seqs()).toEqual(range(after.seq + 1, done.seq));
    } finally {
      await web.close();
    }
  }, 90_000);

  test('restart Temporal while a step runs, and again while the next one waits for approval: the conversation completes, nothing runs twice', async () => {
    const user = await ops();
    // A person decides on the steps.
    const approver = userAt(await bosun.alive('api')[0]!.ready(), (await personToken(user, 'Dana', 'operator')).token);
    // Every step waits for approval, so the conversation can be caught waiting without a command that changes anything.
    await user.setPolicy({ allow_destructive: false, require_approval_for: ['read', 'change'] });
    const web = await heldWebServer();
    try {
      const { id } = await user.startConversation(serverId, `check ${web.url} and then show the hostname`);
      const waiting: Conversation = await user.waitForConversation(id, (c) => c.status === 'awaiting_approval');
      expect(waiting.steps.map((s) => [s.status, s.approval?.decision])).toEqual([['pending', null], ['pending', null]]);
      await approver.approveStep(id, waiting.steps[0]!.id);

      // Temporal goes away while the approved step's command runs on the server...
      await eventually(async () => web.requests, (n) => n === 1, 30_000);
      await user.waitForConversation(id, (c) => c.steps[0]?.status === 'running');
      await temporal.stop();
      expect(await temporal.reachable()).toBe(false);
      // ...and the command finishes meanwhile: its result is stored, but the workflow cannot move on yet.
      web.release();
      const meanwhile: Conversation = await user.waitForConversation(id, (c) => c.steps[0]!.status !== 'running', 20_000);
      expect([meanwhile.status, ...meanwhile.steps.map((s) => s.status)]).toEqual(['running', 'completed', 'pending']);
      await temporal.resume();

      const second: Conversation = await user.waitForConversation(id, (c) => c.status === 'awaiting_approval');
      expect(second.steps.map((s) => s.status)).toEqual(['completed', 'pending']);
      // And again while the workflow sleeps on the next approval; the decision is given after the restart.
      await temporal.stop();
      expect(await temporal.reachable()).toBe(false);
      await temporal.resume();
      await approver.approveStep(id, second.steps[1]!.id);

      const done: Conversation = await user.waitForConversation(id, conversationEnded);
      expect(done.status).toBe('completed');
      expect(done.steps.map((s) => [s.status, s.execution_success, s.approval?.decision])).toEqual([
        ['completed', true, 'approved'],
        ['completed', true, 'approved'],
      ]);
      expect(done.steps[0]!.execution_log).toMatch(/^HTTP 200 in [\d.]+ s\n$/);
      expect(done.steps[1]!.execution_log).toBe(`${hostname()}\n`);
      // The curl was not started a second time.
      expect(web.requests).toBe(1);
    } finally {
      await web.close();
      // Temporal up again (were this test to fail while it is stopped), for whatever runs next.
      if (!(await temporal.reachable())) await temporal.resume();
      // The policy is the organization's: the other test's conversation must not wait for approval.
      await user.setPolicy({ allow_destructive: false, require_approval_for: ['destructive'] });
    }
  }, 90_000);
});
