import { hostname } from 'node:os';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConversationStepUpdatedEvent, ConversationUpdatedEvent } from '../../src/domain/events';
import { conversationEnded, eventually } from '../support/bosun';
import { externalServicesEnv, Fleet } from '../support/processes';
import { sharedServices } from '../support/shared';
import { connectSocket, type BosunSocket } from '../support/socket';
import { PrivateTemporal } from '../support/temporal';

type Step = { id: string; status: string; execution_success: boolean | null; execution_log: string; title: string; approval: { decision: string | null } | null };
type Conversation = { id: string; status: string; seq: number; steps: Step[] };

/**
 * A local web server that holds every request until released, so a "check <url>" step keeps its
 * curl running for as long as the test needs; never longer than curl's own 15 s limit allows.
 */
async function heldWebServer(maxHoldMs = 12_000) {
  const held: ServerResponse[] = [];
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    held.push(res);
    setTimeout(() => res.writableEnded || res.end('ok\n'), maxHoldMs).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    get requests() {
      return requests;
    },
    release: () => held.splice(0).forEach((res) => res.writableEnded || res.end('ok\n')),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Subscribes to a conversation and keeps the events that follow the snapshot. */
async function watchConversation(socket: BosunSocket, id: string) {
  const steps: ConversationStepUpdatedEvent[] = [];
  const updates: ConversationUpdatedEvent[] = [];
  socket.on('ConversationStepUpdated', (e) => e.conversation_id === id && steps.push(e));
  socket.on('ConversationUpdated', (e) => e.conversation_id === id && updates.push(e));
  const answer = await socket.emitWithAck('subscribe_conversation', { conversation_id: id });
  if (!answer.ok) throw new Error(answer.error.message);
  const seq = answer.data.seq;
  return {
    seq,
    steps: () => steps.filter((e) => e.seq > seq),
    updates: () => updates.filter((e) => e.seq > seq),
    /** Every seq an event after the snapshot carried, in order: a stream that missed nothing has no gap. */
    seqs: () => [...new Set([...steps, ...updates].filter((e) => e.seq > seq).map((e) => e.seq))].sort((a, b) => a - b),
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('conversations survive the death of the API and a restart of Temporal', () => {
  const sockets: BosunSocket[] = [];
  let temporal: PrivateTemporal;
  let fleet: Fleet;
  let token: string;
  let serverId: string;

  const launch = (role: 'api' | 'worker') => fleet.launch(role);
  const alive = (role: 'api' | 'worker') => fleet.alive(role)[0]!;
  const call = (base: string, method: string, route: string, body?: object) => fleet.call(base, method, route, body);
  const read = async (base: string, id: string) => (await call(base, 'GET', `/conversations/${id}`)).data as Conversation;
  const until = (base: string, id: string, done: (c: Conversation) => boolean, timeoutMs = 60_000) => eventually(() => read(base, id), done, timeoutMs);
  const ended = conversationEnded;
  const subscribe = async (base: string, id: string) => {
    const socket = await connectSocket(base.replace('/api/v1', ''), token);
    sockets.push(socket);
    return watchConversation(socket, id);
  };

  beforeAll(async () => {
    temporal = await PrivateTemporal.start();
    fleet = new Fleet({ ...externalServicesEnv('conversations'), TEMPORAL_ADDRESS: temporal.address });
    token = await fleet.createToken('chat-durable');
    const [worker, api] = [await launch('worker'), await launch('api')];
    const base = await api.ready();
    await worker.ready();
    const { port, username, privateKey } = sharedServices().sshd;
    serverId = (await call(base, 'POST', '/servers', { title: 'chatty', host: '127.0.0.7', port, username, auth_method: 'private_key', private_key: privateKey })).data.id;
    await eventually(async () => (await call(base, 'GET', `/servers/${serverId}`)).data.status, (s) => s === 'verified');
  }, 150_000);
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await fleet?.stop();
    await temporal?.destroy();
  });

  test('SIGKILL the API while a step runs: a new API shows the conversation finish, its live events continuing', async () => {
    const web = await heldWebServer();
    try {
      const first = alive('api');
      const base = await first.ready();
      const started = await call(base, 'POST', '/conversations', { chatable_type: 'server', chatable_id: serverId, message: `check ${web.url} and then show the hostname` });
      expect(started.httpStatus).toBe(201);
      const id = started.data.id as string;
      const before = await subscribe(base, id);

      // The curl of the first step is connected to our server and waits for its answer.
      await eventually(async () => web.requests, (n) => n === 1, 30_000);
      await until(base, id, (c) => c.steps[0]?.status === 'running');
      await eventually(async () => before.steps().some((e) => e.step.status === 'running'), Boolean, 10_000);
      await first.stop('SIGKILL');

      const base2 = await (await launch('api')).ready();
      const polled = await read(base2, id);
      expect(polled.status).toBe('running');
      expect(polled.steps.map((s) => s.status)).toEqual(['running', 'pending']);
      const after = await subscribe(base2, id);
      web.release();

      await eventually(async () => after.updates().at(-1)?.status, (s) => s === 'completed', 60_000);
      const done = await read(base2, id);
      expect(done.status).toBe('completed');
      expect(done.steps.map((s) => [s.title, s.status, s.execution_success])).toEqual([
        [`Check ${web.url}`, 'completed', true],
        ['Hostname', 'completed', true],
      ]);
      expect(done.steps[0]!.execution_log).toMatch(/^HTTP 200 in [\d.]+ s\n$/);
      expect(done.steps[1]!.execution_log).toBe(`${hostname()}\n`);
      expect(web.requests).toBe(1);

      // The new API relayed every change after its snapshot: the first step finishing, the second one, the end.
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
    const base = await alive('api').ready();
    // Every step waits for approval, so the conversation can be caught waiting without a command that changes anything.
    expect((await call(base, 'PUT', '/policy', { allow_destructive: false, require_approval_for: ['read', 'change'] })).httpStatus).toBe(200);
    const web = await heldWebServer();
    try {
      const started = await call(base, 'POST', '/conversations', { chatable_type: 'server', chatable_id: serverId, message: `check ${web.url} and then show the hostname` });
      const id = started.data.id as string;
      const waiting = await until(base, id, (c) => c.status === 'awaiting_approval');
      expect(waiting.steps.map((s) => [s.status, s.approval?.decision])).toEqual([['pending', null], ['pending', null]]);
      expect((await call(base, 'POST', `/conversations/${id}/steps/${waiting.steps[0]!.id}/approve`)).httpStatus).toBe(202);

      // Temporal goes away while the approved step's command runs on the server...
      await eventually(async () => web.requests, (n) => n === 1, 30_000);
      await until(base, id, (c) => c.steps[0]?.status === 'running');
      await temporal.stop();
      expect(await temporal.reachable()).toBe(false);
      // ...and the command finishes meanwhile: its result is stored, but the workflow cannot move on yet.
      web.release();
      const meanwhile = await until(base, id, (c) => c.steps[0]!.status !== 'running', 20_000);
      expect([meanwhile.status, ...meanwhile.steps.map((s) => s.status)]).toEqual(['running', 'completed', 'pending']);
      await temporal.resume();

      const second = await until(base, id, (c) => c.status === 'awaiting_approval');
      expect(second.steps.map((s) => s.status)).toEqual(['completed', 'pending']);
      // And again while the workflow sleeps on the next approval; the decision is given after the restart.
      await temporal.stop();
      expect(await temporal.reachable()).toBe(false);
      await temporal.resume();
      expect((await call(base, 'POST', `/conversations/${id}/steps/${second.steps[1]!.id}/approve`)).httpStatus).toBe(202);

      const done = await until(base, id, ended);
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
      await call(base, 'PUT', '/policy', { allow_destructive: false, require_approval_for: ['destructive'] });
    }
  }, 90_000);
});
