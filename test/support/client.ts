import { randomBytes } from 'node:crypto';
import supertest from 'supertest';
import type { DeploymentRunUpdatedEvent } from '../../src/domain/events';
import { bearer, conversationEnded, runEnded } from './http';
import type { Scope } from '../../src/domain/access/scopes';
import { eventually } from './eventually';
import { sharedServices } from './shared';
import { connectSocket, watchConversation, watchRun, type BosunSocket } from './socket';
import type { SshdInfo } from './sshd';

/*
 * The test client: what a user of Bosun does, one call each, through the public API, so a test reads
 * as the story it tells. Every call fails with the response's status and body when the answer is not
 * the one the story expects; the raw requests stay available as `bosun.api` for tests about HTTP.
 */

export interface StepDefinition {
  name: string;
  command: string;
  timeout_seconds?: number;
  retries?: number;
  continue_on_error?: boolean;
}

export interface AddServer {
  host?: string;
  auth_method?: 'private_key' | 'password';
  title?: string;
  /** A private sshd of the test's own (to stop or re-key it); the shared one otherwise. */
  sshd?: SshdInfo;
  tags?: string[];
  /** Jump hosts it is reached through. */
  via?: string[];
}

// The API's JSON, as the tests read it.
type Json = any;

function expectStatus(res: { status: number; body: Json }, status: number, what: string): Json {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** What the client needs of a Bosun: requests to its API, where it listens (for sockets), the sshd servers are added on by default. */
export interface BosunAt {
  api: ReturnType<typeof supertest>;
  url: string;
  sshd: SshdInfo;
}

/** A Bosun a test has at hand (its own, or its jest worker's): and a token of any organization of it. */
export interface TestBosun extends BosunAt {
  token(org: string, scopes?: Scope[], name?: string): Promise<string>;
}

/** A user of an organization of a test's Bosun, with an admin token unless another is given. */
export async function asUser(bosun: TestBosun, org: string, token?: string) {
  return userWithToken(bosun, token ?? (await bosun.token(org)));
}

/** A user of the Bosun process whose API is at `base` (as its banner prints it, `…/api/v1`), servers added on the tests' shared sshd. */
export function userAt(base: string, token: string): User {
  const url = base.replace(/\/api\/v1\/?$/, '');
  return userWithToken({ api: supertest(url), url, sshd: sharedServices().sshd }, token);
}

export function userWithToken(bosun: BosunAt, token: string) {
  const auth = bearer(token);
  const runPath = (deploymentId: string, runId: string) => `/api/v1/deployments/${deploymentId}/runs/${runId}`;
  const sockets: BosunSocket[] = [];

  const user = {
    token,

    /**
     * Adds a server — on the tests' shared sshd unless another is given, at a loopback address of its
     * own — and waits until it is verified; its id.
     */
    async addServer({ host = '127.0.0.1', auth_method = 'private_key', title = `srv-${host}`, sshd = bosun.sshd, tags, via }: AddServer = {}): Promise<string> {
      const { port, username, privateKey, password } = sshd;
      const credentials = auth_method === 'private_key' ? { auth_method, private_key: privateKey } : { auth_method, password };
      const created = expectStatus(await bosun.api.post('/api/v1/servers').set(auth).send({ title, host, port, username, ...credentials, ...(tags ? { tags } : {}), ...(via ? { via } : {}) }), 201, 'add a server');
      const id = created.data.id as string;
      await eventually(async () => (await bosun.api.get(`/api/v1/servers/${id}`).set(auth)).body.data.status, (status) => status === 'verified');
      return id;
    },

    /** The ids of the runs waiting for this user's approval (GET /me/approvals), the longest waiting first. */
    async waitingForMe(): Promise<string[]> {
      return expectStatus(await bosun.api.get('/api/v1/me/approvals').set(auth), 200, 'list what waits for my approval').data.map((run: Json) => run.id);
    },

    /** The organization's runs this user may read (GET /runs with a query string), one page. */
    async organizationRuns(query = ''): Promise<Json> {
      return expectStatus(await bosun.api.get(`/api/v1/runs${query ? `?${query}` : ''}`).set(auth), 200, 'list the organization’s runs');
    },

    async listDeployments(): Promise<Json> {
      return expectStatus(await bosun.api.get('/api/v1/deployments?per_page=100').set(auth), 200, 'list deployments').data;
    },

    async getServer(serverId: string): Promise<Json> {
      return expectStatus(await bosun.api.get(`/api/v1/servers/${serverId}`).set(auth), 200, 'read the server').data;
    },

    /** Renames or re-tags a server; the server as changed. */
    async patchServer(serverId: string, body: Json): Promise<Json> {
      return expectStatus(await bosun.api.patch(`/api/v1/servers/${serverId}`).set(auth).send(body), 200, 'change the server').data;
    },

    /** The organization's servers matching a query string (`tag=web&status=verified`), one page. */
    async listServers(query = ''): Promise<Json> {
      return expectStatus(await bosun.api.get(`/api/v1/servers${query ? `?${query}` : ''}`).set(auth), 200, 'list the servers');
    },

    /** Defines a deployment of `steps` on a server; the deployment as the API shows it. */
    async defineDeployment(serverId: string, steps: StepDefinition[], name = `d-${randomBytes(4).toString('hex')}`): Promise<Json> {
      return expectStatus(await bosun.api.post('/api/v1/deployments').set(auth).send({ name, server_id: serverId, steps }), 201, 'define a deployment').data;
    },

    /** Triggers a run, as CI does; the trigger's answer (`run_id`, `status`, `message`). */
    async trigger(deploymentId: string, idempotencyKey?: string): Promise<Json> {
      const req = bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(auth);
      return expectStatus(await (idempotencyKey ? req.set('Idempotency-Key', idempotencyKey) : req), 202, 'trigger');
    },

    /** Defines a deployment from a whole definition (`targets`, `strategy`, `parameters`…); the deployment as the API shows it. */
    async define(definition: Json): Promise<Json> {
      const body = { name: `d-${randomBytes(4).toString('hex')}`, ...definition };
      return expectStatus(await bosun.api.post('/api/v1/deployments').set(auth).send(body), 201, 'define a deployment').data;
    },

    /** Triggers a run with a body (its parameters); the trigger's answer. */
    async triggerWith(deploymentId: string, body: Json, idempotencyKey?: string): Promise<Json> {
      const req = bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(auth);
      return expectStatus(await (idempotencyKey ? req.set('Idempotency-Key', idempotencyKey) : req).send(body), 202, 'trigger');
    },

    /** What a trigger with this body would do. */
    async plan(deploymentId: string, body: Json = {}): Promise<Json> {
      return expectStatus(await bosun.api.post(`/api/v1/deployments/${deploymentId}/plan`).set(auth).send(body), 200, 'plan').data;
    },

    /** Retries what did not succeed in a run; the answer (`run_id`…). */
    async retry(deploymentId: string, runId: string): Promise<Json> {
      return expectStatus(await bosun.api.post(`${runPath(deploymentId, runId)}/retry`).set(auth), 202, 'retry');
    },

    /** One server of a run, with its steps' output. */
    async getTarget(deploymentId: string, runId: string, serverId: string): Promise<Json> {
      return expectStatus(await bosun.api.get(`${runPath(deploymentId, runId)}/targets/${serverId}`).set(auth), 200, 'read the target').data;
    },

    async getRun(deploymentId: string, runId: string): Promise<Json> {
      return expectStatus(await bosun.api.get(runPath(deploymentId, runId)).set(auth), 200, 'read the run').data;
    },

    async getDeployment(deploymentId: string): Promise<Json> {
      return expectStatus(await bosun.api.get(`/api/v1/deployments/${deploymentId}`).set(auth), 200, 'read the deployment').data;
    },

    /** What the deployments list and the deployment's own page say of its last run: [listed status, own status]. */
    async lastRunStatus(deploymentId: string): Promise<[string | null, string | null]> {
      const listed = ((await user.listDeployments()) as Json[]).find((d) => d.id === deploymentId);
      return [listed?.last_run_status ?? null, (await user.getDeployment(deploymentId)).last_run_status];
    },

    /** Polls a run until `done` (by default: until it ended), as CI does; the run as last read. */
    waitForRun: (deploymentId: string, runId: string, done: (run: Json) => boolean = runEnded, timeoutMs = 60_000) =>
      eventually(() => user.getRun(deploymentId, runId), done, timeoutMs),

    /** Triggers a run and polls it to its end. */
    async runToEnd(deploymentId: string, timeoutMs = 60_000): Promise<Json> {
      return user.waitForRun(deploymentId, (await user.trigger(deploymentId)).run_id, runEnded, timeoutMs);
    },

    /** A request of any route, as this user: the response itself (its status, its body). */
    request(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, body?: Json) {
      const req = bosun.api[method](`/api/v1${path}`).set(auth);
      return body === undefined ? req : req.send(body);
    },

    /** A decision between a fleet run's batches (approve, reject, pause, resume): the response itself. */
    decide(deploymentId: string, runId: string, decision: 'approve' | 'reject' | 'pause' | 'resume', body?: Json) {
      return user.request('post', `/deployments/${deploymentId}/runs/${runId}/${decision}`, body);
    },

    async cancelRun(deploymentId: string, runId: string): Promise<Json> {
      return expectStatus(await bosun.api.post(`${runPath(deploymentId, runId)}/cancel`).set(auth), 202, 'cancel the run').data;
    },

    /** Asks about a server in plain English; the conversation as started. */
    async startConversation(serverId: string, message: string, extra: Json = {}): Promise<Json> {
      const body = { chatable_type: 'server', chatable_id: serverId, message, ...extra };
      return expectStatus(await bosun.api.post('/api/v1/conversations').set(auth).send(body), 201, 'start a conversation').data;
    },

    async getConversation(id: string): Promise<Json> {
      return expectStatus(await bosun.api.get(`/api/v1/conversations/${id}`).set(auth), 200, 'read the conversation').data;
    },

    /** Polls a conversation until `done` (by default: until it ended). */
    waitForConversation: (id: string, done: (conversation: Json) => boolean = conversationEnded, timeoutMs = 60_000) =>
      eventually(() => user.getConversation(id), done, timeoutMs),

    /** Asks about a server and waits for the conversation to end; the conversation as it ended. */
    async converse<C = Json>(serverId: string, message: string, extra: Json = {}, timeoutMs = 60_000): Promise<C> {
      return user.waitForConversation((await user.startConversation(serverId, message, extra)).id, conversationEnded, timeoutMs);
    },

    async cancelConversation(id: string): Promise<Json> {
      return expectStatus(await bosun.api.post(`/api/v1/conversations/${id}/cancel`).set(auth), 202, 'cancel the conversation').data;
    },

    /** Approves a step waiting for approval; the answer. */
    async approveStep(conversationId: string, stepId: string): Promise<Json> {
      return expectStatus(await bosun.api.post(`/api/v1/conversations/${conversationId}/steps/${stepId}/approve`).set(auth), 202, 'approve the step');
    },

    /** Rejects a step waiting for approval (the conversation ends cancelled); the answer. */
    async rejectStep(conversationId: string, stepId: string): Promise<Json> {
      return expectStatus(await bosun.api.post(`/api/v1/conversations/${conversationId}/steps/${stepId}/reject`).set(auth), 202, 'reject the step');
    },

    /** Sets which steps of a conversation wait for approval; the policy as stored. */
    async setPolicy(policy: { allow_destructive: boolean; require_approval_for: string[] }): Promise<Json> {
      return expectStatus(await bosun.api.put('/api/v1/policy').set(auth).send(policy), 200, 'set the policy').data;
    },

    /** Plans a migration from one server to another; the plan. */
    async planMigration(sourceServerId: string, targetServerId: string, title = 'a migration'): Promise<Json> {
      const body = { title, source_server_id: sourceServerId, target_server_id: targetServerId };
      return expectStatus(await bosun.api.post('/api/v1/migration-plans').set(auth).send(body), 201, 'plan a migration').data;
    },

    /** Asks about a migration plan in plain English; the conversation as started. */
    async startMigration(planId: string, message: string): Promise<Json> {
      const body = { chatable_type: 'migration_plan', chatable_id: planId, message };
      return expectStatus(await bosun.api.post('/api/v1/conversations').set(auth).send(body), 201, 'start a migration conversation').data;
    },

    /**
     * Watches a run live over Socket.IO, as a client should (the subscription's snapshot, then every
     * later event in order); `until` waits for an event that satisfies a predicate.
     */
    async subscribe(runId: string) {
      const socket = await connectSocket(bosun.url, token);
      sockets.push(socket);
      const watched = await watchRun(socket, runId);
      return {
        ...watched,
        socket,
        until: (done: (event: DeploymentRunUpdatedEvent) => boolean, timeoutMs = 60_000) =>
          eventually(async () => watched.events.find(done) ?? null, (event) => event !== null, timeoutMs) as Promise<DeploymentRunUpdatedEvent>,
      };
    },

    /** Watches a conversation live over Socket.IO: the events after the subscription's snapshot. */
    async subscribeConversation(conversationId: string) {
      const socket = await connectSocket(bosun.url, token);
      sockets.push(socket);
      return { ...(await watchConversation(socket, conversationId)), socket };
    },

    /** Closes the sockets this user opened. */
    close() {
      for (const socket of sockets.splice(0)) socket.close();
    },
  };
  return user;
}

export type User = ReturnType<typeof userWithToken>;

/**
 * A person of the organization `admin` administers, with `role` over the servers tagged `tags` (or
 * all of them): that person, as a user with a token of their own.
 */
export async function addPerson(bosun: BosunAt, admin: User, name: string, role: string, tags?: string[]): Promise<User & { id: string }> {
  const { id, token } = await personToken(admin, name, role, tags);
  return Object.assign(userWithToken(bosun, token), { id });
}

/** A person added by `admin` with `role` (over the servers tagged `tags`, or all): the person's id and a token of theirs. */
export async function personToken(admin: User, name: string, role: string, tags?: string[]): Promise<{ id: string; token: string }> {
  const person = expectStatus(await admin.request('post', '/people', { name }), 201, 'add a person').data;
  expectStatus(await admin.request('post', '/role-bindings', { role, subject: { type: 'person', id: person.id }, ...(tags ? { servers: { tags } } : {}) }), 201, 'bind a role');
  const token = expectStatus(await admin.request('post', `/people/${person.id}/tokens`, { name: `${name.toLowerCase()}-token` }), 201, 'make a person’s token').data.token as string;
  return { id: person.id as string, token };
}
