import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer, conversationEnded } from '../support/http';
import { eventually } from '../support/eventually';
import { personToken, userWithToken, type User } from '../support/client';
import { connectSocket, type BosunSocket } from '../support/socket';
import type { ConversationStepUpdatedEvent } from '../../src/domain/events';

type Step = { id: string; status: string; execution_success: boolean | null; execution_log: string; title: string; command: string; risk: string; approval: { decision: string | null } | null };
type Conversation = { id: string; status: string; steps: Step[]; messages: Array<{ text: string; planned: boolean }>; actor: unknown; cancelled_by: unknown };

describe('conversations: plain-English instructions run on a server', () => {
  let bosun: SharedBosun;
  let token: string;
  let ops: User;
  let serverId: string;
  let person: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('chat', ['admin'], 'ops-person');
    ops = userWithToken(bosun, token);
    serverId = await ops.addServer();
    person = (await personToken(ops, 'Olga', 'operator')).token;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await bosun.stop();
  });

  const start = async (message: string, extra: Record<string, unknown> = {}): Promise<{ id: string; status: string; created_at: string }> =>
    ops.startConversation(serverId, message, extra);
  const until = (id: string, done: (c: Conversation) => boolean): Promise<Conversation> => ops.waitForConversation(id, done);
  const ended = conversationEnded;

  test('an instruction is planned into steps that run one by one, each with its status and execution log', async () => {
    const created = await start('show memory usage and uptime, then who is logged in');
    expect(created.status).toBe('running');
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const done = await until(created.id, ended);
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => [s.title, s.command, s.status, s.execution_success])).toEqual([
      ['Memory usage', 'free -h', 'completed', true],
      ['Uptime and load', 'uptime', 'completed', true],
      ['Logged-in users', 'who', 'completed', true],
    ]);
    expect(done.steps[0]!.execution_log).toMatch(/Mem:/);
    expect(done.steps[1]!.execution_log).toMatch(/load average/);

    const list = await bosun.api.get('/api/v1/conversations').set(bearer(token));
    expect(list.body.data[0]).toEqual({ id: created.id, chatable_type: 'server', chatable_id: serverId, server_id: serverId, status: 'completed', created_at: created.created_at });
    expect(list.body.meta).toMatchObject({ current_page: 1, per_page: 12 });
  });

  test('a failing step fails the conversation; later steps fail as not run, never left pending', async () => {
    const { id } = await start('tail /nonexistent/app.log and show memory usage');
    const done = await until(id, ended);
    expect(done.status).toBe('failed');
    expect(done.steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    expect(done.steps[0]!.execution_log).toMatch(/No such file or directory[\s\S]*--- failed: exit code 1 ---/);
    expect(done.steps[1]!.execution_log).toContain('Not run: an earlier step failed');
    expect(done.steps[1]!.execution_success).toBe(false);
  });

  test('an instruction the built-in planner cannot plan fails with a log saying so and how to configure an LLM', async () => {
    const { id } = await start('write a haiku about the cloud');
    const done = await until(id, ended);
    expect(done.status).toBe('failed');
    expect(done.steps).toHaveLength(1);
    expect(done.steps[0]).toMatchObject({ title: 'Plan the instruction', status: 'failed', execution_success: false });
    expect(done.steps[0]!.execution_log).toContain('LLM_BASE_URL');
  });

  test('a destructive command is refused by the policy: nothing of the instruction runs', async () => {
    const { id } = await start('show disk usage and reboot the server');
    const done = await until(id, ended);
    expect(done.status).toBe('failed');
    expect(done.steps.map((s) => [s.title, s.status, s.risk])).toEqual([
      ['Disk usage', 'failed', 'read'],
      ['Reboot the server', 'failed', 'destructive'],
    ]);
    expect(done.steps[0]!.execution_log).toContain('Not run: another step of this instruction was refused');
    expect(done.steps[1]!.execution_log).toMatch(/^Refused by the organization's command policy: this command is destructive \(reboot takes the server down\)/);
  });

  test('approval: a step waits (awaiting_approval) until approved, and a rejection ends the conversation', async () => {
    // Read steps wait for approval under this policy, so the test never needs a command that changes anything.
    expect((await bosun.api.put('/api/v1/policy').set(bearer(token)).send({ allow_destructive: false, require_approval_for: ['read'] })).status).toBe(200);
    try {
      const { id } = await start('show memory usage and show the hostname');
      let waiting = await until(id, (c) => c.status === 'awaiting_approval');
      expect(waiting.steps.map((s) => s.status)).toEqual(['pending', 'pending']);
      // Only people decide: the service account that started it may not.
      const byAccount = await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[0]!.id}/approve`).set(bearer(token));
      expect([byAccount.status, byAccount.body.error.code]).toEqual([403, 'people_only']);
      const approve = await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[0]!.id}/approve`).set(bearer(person));
      expect(approve.status).toBe(202);
      // Approving twice, or a step that is not waiting, is a conflict.
      expect((await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[0]!.id}/approve`).set(bearer(person))).status).toBe(409);

      waiting = await until(id, (c) => c.status === 'awaiting_approval' && c.steps[0]!.status === 'completed');
      expect(waiting.steps[0]!.approval).toMatchObject({ decision: 'approved', decided_by: 'Olga (person)' });
      expect((await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[1]!.id}/reject`).set(bearer(person))).status).toBe(202);
      const done = await until(id, ended);
      expect(done.status).toBe('cancelled');
      expect(done.steps[1]).toMatchObject({ status: 'failed', execution_success: false, approval: { decision: 'rejected' } });
      expect(done.steps[1]!.execution_log).toContain('rejected by Olga (person); not run');
      // A cancelled conversation takes no follow-up.
      expect((await bosun.api.post(`/api/v1/conversations/${id}/messages`).set(bearer(token)).send({ message: 'uptime' })).status).toBe(409);
    } finally {
      await bosun.api.put('/api/v1/policy').set(bearer(token)).send({ allow_destructive: false, require_approval_for: ['destructive'] });
    }
  });

  test('a follow-up message is planned and run after the first instruction, in the same conversation', async () => {
    const { id } = await start('show the hostname');
    await until(id, ended);
    const follow = await bosun.api.post(`/api/v1/conversations/${id}/messages`).set(bearer(token)).send({ message: 'and now the kernel version' });
    expect(follow.status).toBe(202);
    expect(follow.body.data.status).toBe('running');
    const done = await until(id, (c) => ended(c) && c.steps.length === 2);
    expect(done.status).toBe('completed');
    expect(done.messages.map((m) => [m.text, m.planned])).toEqual([['show the hostname', true], ['and now the kernel version', true]]);
    expect(done.steps.map((s) => s.command)).toEqual(['hostname', 'uname -a']);
  });

  test('cancel stops the command running on the server; the conversation ends cancelled', async () => {
    // A local port that accepts and never answers: curl waits on it (up to its 15 s limit).
    const silent: Server = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const { id } = await start(`check http://127.0.0.1:${port}/slow`);
      await until(id, (c) => c.steps[0]?.status === 'running');
      const cancel = await bosun.api.post(`/api/v1/conversations/${id}/cancel`).set(bearer(token));
      expect(cancel.status).toBe(202);
      const done = await until(id, ended);
      expect(done.status).toBe('cancelled');
      expect(done.cancelled_by).toEqual(done.actor);
      expect(done.steps[0]!.status).toBe('failed');
      expect(done.steps[0]!.execution_log).toContain("cancelled: the command's process group was killed");
      // The server-side curl is gone: its connection to our silent port closed.
      await eventually(async () => new Promise<number>((r) => silent.getConnections((_e, n) => r(n))), (n) => n === 0, 10_000);
      expect((await bosun.api.post(`/api/v1/conversations/${id}/cancel`).set(bearer(token))).status).toBe(409);
      // The kill is a command Bosun ran: in the audit trail with the conversation and step it stopped.
      const kills = await eventually(
        async () =>
          ((await bosun.api.get('/api/v1/audit?action=command.run&per_page=100').set(bearer(token))).body.data as Array<Record<string, any>>).filter(
            (e) => e.details.conversation_id === id && e.details.purpose === 'stop_process_group' && e.outcome !== 'pending',
          ),
        (list) => list.length > 0,
      );
      expect(kills[0]).toMatchObject({ outcome: 'ok', details: { step: 0, command: expect.stringMatching(/^kill -TERM -\d+ /) } });
    } finally {
      silent.close();
    }
  });

  test('live ConversationStepUpdated events follow each step, in order, with no gaps', async () => {
    const socket = await connectSocket(bosun.url, token);
    sockets.push(socket);
    const { id } = await start('show the hostname');
    // The first step may already be underway: the snapshot covers what happened before it.
    const events: ConversationStepUpdatedEvent[] = [];
    const statuses: string[] = [];
    socket.on('ConversationStepUpdated', (e) => e.conversation_id === id && events.push(e));
    socket.on('ConversationUpdated', (e) => e.conversation_id === id && statuses.push(e.status));
    const answer = await socket.emitWithAck('subscribe_conversation', { conversation_id: id });
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    const done = await until(id, ended);
    await eventually(async () => statuses.at(-1), (s) => s === 'completed', 10_000);
    const after = events.filter((e) => e.seq > answer.data.seq);
    const seqs = [...new Set(after.map((e) => e.seq))];
    seqs.forEach((seq, i) => i > 0 && expect(seq).toBeGreaterThan(seqs[i - 1]!));
    const last = events.at(-1)!;
    expect(last.step).toEqual(done.steps[0]);
    // Another organization cannot subscribe to it.
    const stranger = await connectSocket(bosun.url, await bosun.token('someone-else'));
    sockets.push(stranger);
    expect(await stranger.emitWithAck('subscribe_conversation', { conversation_id: id })).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  test('bad input gets a clear error and starts nothing; another organization’s server looks like none', async () => {
    const post = (body: unknown) => bosun.api.post('/api/v1/conversations').set(bearer(token)).send(body as object);
    const before = (await bosun.api.get('/api/v1/conversations').set(bearer(token))).body.meta.total;
    expect((await post({ chatable_type: 'robot', chatable_id: serverId, message: 'uptime' })).body.error.code).toBe('validation_failed');
    expect((await post({ chatable_type: 'server', chatable_id: serverId, message: '   ' })).body.error.details).toEqual([{ path: 'message', message: 'message must not be empty' }]);
    expect((await post({ chatable_type: 'server', chatable_id: serverId, message: 'x'.repeat(2001) })).status).toBe(422);
    expect((await post({ chatable_type: 'server', chatable_id: '0123456789abcdef01234567', message: 'uptime' })).status).toBe(404);
    const otherToken = await bosun.token('other-org');
    const foreign = await bosun.api.post('/api/v1/conversations').set(bearer(otherToken)).send({ chatable_type: 'server', chatable_id: serverId, message: 'uptime' });
    expect(foreign.status).toBe(404);
    expect((await bosun.api.get('/api/v1/conversations').set(bearer(token))).body.meta.total).toBe(before);
  });
});

describe('migration plans', () => {
  let bosun: SharedBosun;
  let token: string;
  let source: string;
  let target: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('movers');
    source = await userWithToken(bosun, token).addServer({ host: '127.0.0.2' });
    target = await userWithToken(bosun, token).addServer({ host: '127.0.0.3' });
  });
  afterAll(() => bosun.stop());

  test('a plan names two servers of the organization; conversations about it run on the one each step names', async () => {
    const created = await bosun.api.post('/api/v1/migration-plans').set(bearer(token)).send({ title: 'web to new box', source_server_id: source, target_server_id: target, notes: 'nginx + app' });
    expect(created.status).toBe(201);
    const plan = created.body.data;
    expect(plan).toMatchObject({ title: 'web to new box', source_server_id: source, target_server_id: target, notes: 'nginx + app', source: { id: source }, target: { id: target } });
    expect((await bosun.api.get('/api/v1/migration-plans').set(bearer(token))).body).toMatchObject({ data: [{ id: plan.id }], meta: { total: 1 } });

    const start = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'migration_plan', chatable_id: plan.id, message: 'show the hostname on both servers' });
    expect(start.status).toBe(201);
    const done = await eventually(
      async () => (await bosun.api.get(`/api/v1/conversations/${start.body.data.id}`).set(bearer(token))).body.data,
      (c) => c.status === 'completed',
      60_000,
    );
    expect(done.steps.map((s: { target: string; server_id: string; status: string }) => [s.target, s.server_id, s.status])).toEqual([
      ['source', source, 'completed'],
      ['target', target, 'completed'],
    ]);
    expect((await bosun.api.get(`/api/v1/conversations?chatable_type=migration_plan&chatable_id=${plan.id}`).set(bearer(token))).body.meta.total).toBe(1);
    expect((await bosun.api.delete(`/api/v1/migration-plans/${plan.id}`).set(bearer(token))).status).toBe(204);
    expect((await bosun.api.get(`/api/v1/migration-plans/${plan.id}`).set(bearer(token))).status).toBe(404);
  });

  test('the same server twice, or another organization’s server, is refused', async () => {
    const post = (t: string, body: object) => bosun.api.post('/api/v1/migration-plans').set(bearer(t)).send(body);
    expect((await post(token, { title: 'x', source_server_id: source, target_server_id: source })).body.error.details).toEqual([
      { path: 'target_server_id', message: 'the target must be another server than the source' },
    ]);
    const other = await bosun.token('other-movers');
    expect((await post(other, { title: 'x', source_server_id: source, target_server_id: target })).body.error.details).toEqual([
      { path: 'source_server_id', message: 'No such server' },
      { path: 'target_server_id', message: 'No such server' },
    ]);
  });
});
