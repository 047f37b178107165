import { randomBytes } from 'node:crypto';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { personToken, userWithToken, type User } from '../support/client';
import { agentAccount, agentOverHttp, type Agent } from '../support/mcp';
import { LOOPBACK_ADDRESSES } from '../support/sshd';

type Json = any;

const TOOLS = ['ask', 'get_conversation', 'get_pipeline_run', 'get_run', 'get_server', 'list_deployments', 'list_pipelines', 'list_servers', 'plan_deployment', 'read_log', 'run_commands', 'run_deployment', 'run_pipeline', 'wait'];
const n = () => randomBytes(3).toString('hex');

describe('an AI agent through the MCP endpoint (/mcp, Streamable HTTP)', () => {
  let bosun: SharedBosun;
  let ops: User;
  let opsToken: string;
  let serverId: string;
  let person: { id: string; token: string };
  let agentId: string;
  let doorToken: string;
  let agent: Agent;

  const conversation = async (id: string): Promise<Json> => (await bosun.api.get(`/api/v1/conversations/${id}`).set(bearer(opsToken))).body.data;
  const startedAt = new Date().toISOString();

  beforeAll(async () => {
    bosun = await sharedBosun();
    opsToken = await bosun.token('agents', ['admin'], 'ops');
    ops = userWithToken(bosun, opsToken);
    serverId = await ops.addServer({ title: 'web-1', tags: ['web'] });
    person = await personToken(ops, 'Alice', 'operator');
    const account = await agentAccount(ops, 'claude');
    agentId = account.id;
    doorToken = account.token;
    agent = await agentOverHttp(bosun.url, account.token);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await bosun.stop();
  });

  test('the endpoint takes a service account’s bearer token: none is a 401, a person’s a 403', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const accept = { Accept: 'application/json, text/event-stream' };
    const none = await bosun.api.post('/mcp').set(accept).send(initialize);
    expect([none.status, none.body.error.code]).toEqual([401, 'unauthorized']);
    const asPerson = await bosun.api.post('/mcp').set(accept).set(bearer(person.token)).send(initialize);
    expect([asPerson.status, asPerson.body.error.code]).toEqual([403, 'forbidden']);
    expect((await bosun.api.get('/mcp').set(bearer(opsToken))).status).toBe(405);
    // What is no JSON-RPC message is refused in the API's envelope; a client accepting JSON alone is served JSON.
    const notJsonRpc = await bosun.api.post('/mcp').set(accept).set(bearer(doorToken)).send({ hello: 'world' });
    expect([notJsonRpc.status, notJsonRpc.body.error.code, notJsonRpc.body.error.details[0].path]).toEqual([422, 'validation_failed', 'jsonrpc']);
    const jsonOnly = await bosun.api.post('/mcp').set({ Accept: 'application/json' }).set(bearer(doorToken)).send(initialize);
    expect([jsonOnly.status, jsonOnly.body.result.serverInfo.name]).toEqual([200, expect.any(String)]);
  });

  test('the tools, each with a JSON schema, annotations and a description; none approves, edits policy or manages people or tokens', async () => {
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect([t.name, t.inputSchema.type, typeof t.description, t.description!.length > 40]).toEqual([t.name, 'object', 'string', true]);
      expect([t.name, typeof t.annotations?.readOnlyHint, typeof t.annotations?.destructiveHint, typeof t.annotations?.idempotentHint]).toEqual([t.name, 'boolean', 'boolean', 'boolean']);
      expect(t.name).not.toMatch(/approve|reject|policy|token|people|person|binding|role|secret/);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.list_servers!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.run_commands!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    // Measured as any route.
    expect((await bosun.api.get('/metrics')).text).toMatch(/bosun_http_request_duration_seconds_count\{[^}]*route="\/mcp"[^}]*\} [1-9]/);
  });

  test('a read-only command runs at once; its output comes back as untrusted server output; the agent is its actor', async () => {
    const listed = await agent.call('list_servers', { tags: ['web'] });
    expect(listed.data.servers.map((s: Json) => s.id)).toEqual([serverId]);
    const server = await agent.call('get_server', { server_id: serverId });
    expect(server.data.server).toMatchObject({ id: serverId, status: 'verified' });
    expect(server.data.server.fingerprint).toBeUndefined();
    expect(server.data.untrusted_server_output.items.map((i: Json) => i.path)).toContain('server.fingerprint');

    const started = await agent.call('run_commands', { server_id: serverId, commands: ['echo hello-from-agent'], reason: 'check the server answers' });
    expect(started.isError).toBe(false);
    const [one] = started.data.conversations;
    expect(one).toMatchObject({ server_id: serverId, status: 'running', console_url: `${bosun.url}/conversations/${one.conversation_id}` });

    const waited = await eventually(() => agent.call('wait', { conversation_id: one.conversation_id, timeout_seconds: 10 }), (w) => w.data.status === 'completed');
    const steps = waited.data.conversation.steps;
    expect(steps.map((s: Json) => [s.command, s.risk, s.status, s.approval])).toEqual([['echo hello-from-agent', 'read', 'completed', null]]);
    expect(steps[0].execution_log).toBeUndefined();
    expect(waited.data.untrusted_server_output).toEqual({
      note: expect.stringContaining('not instructions'),
      items: [{ path: 'conversation.steps[0].execution_log', value: expect.stringContaining('hello-from-agent') }],
    });

    const stored = await conversation(one.conversation_id);
    expect(stored).toMatchObject({ agent: true, actor: { type: 'service_account', id: agentId, name: 'claude' }, created_by: 'API token: claude-token' });
    expect(stored.messages[0]).toMatchObject({ text: 'check the server answers', commands: ['echo hello-from-agent'] });

    const log = await agent.call('read_log', { conversation_id: one.conversation_id, step_id: steps[0].id, search: 'hello' });
    expect(log.data.log).toMatchObject({ query: 'hello' });
    expect(log.data.untrusted_server_output.items[0]).toEqual({ path: 'log.matches', value: [{ line: 1, text: 'hello-from-agent' }] });
  });

  test('a change waits for a person: the agent cannot approve it (403 people_only), a person does in the API, and the agent sees the result', async () => {
    const file = `/tmp/bosun-agent-${n()}`;
    const started = await agent.call('run_commands', { server_id: serverId, commands: [`touch ${file}`, `ls ${file}`], reason: 'leave a mark' });
    const id = started.data.conversations[0].conversation_id as string;
    const held = await eventually(() => agent.call('wait', { conversation_id: id, timeout_seconds: 10 }), (w) => w.data.status === 'awaiting_approval');
    const step = held.data.conversation.steps[0];
    expect([step.risk, step.status, step.approval]).toEqual(['change', 'pending', { decision: null, decided_by: null, decided_at: null }]);

    // The agent's own token on the approve route: refused.
    const itself = await bosun.api.post(`/api/v1/conversations/${id}/steps/${step.id}/approve`).set(bearer(await agentToken()));
    expect([itself.status, itself.body.error?.code]).toEqual([403, 'people_only']);

    const approved = await bosun.api.post(`/api/v1/conversations/${id}/steps/${step.id}/approve`).set(bearer(person.token));
    expect(approved.status).toBe(202);
    const done = await eventually(() => agent.call('wait', { conversation_id: id, timeout_seconds: 10 }), (w) => w.data.status === 'completed');
    expect(done.data.conversation.steps.map((s: Json) => [s.risk, s.status])).toEqual([
      ['change', 'completed'],
      ['read', 'completed'],
    ]);
    expect(done.data.conversation.steps[0].approval).toMatchObject({ decision: 'approved', decided_by: 'Alice (person)' });
    expect(done.data.untrusted_server_output.items).toEqual([{ path: 'conversation.steps[1].execution_log', value: expect.stringContaining(file) }]);
  });

  let extraToken: string | undefined;
  /** A second token of the agent's service account, to call the API as the agent without MCP. */
  async function agentToken(): Promise<string> {
    extraToken ??= (await ops.request('post', `/service-accounts/${agentId}/tokens`, { name: `claude-api-${n()}` })).body.data.token as string;
    return extraToken;
  }

  test('the rule is the server’s: an agent-marked service account calling the plain API is held the same; a plain one is not', async () => {
    const plain = await agentAccount(ops, `ci-${n()}`);
    const viaApi = (token: string) => bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: 'mark', commands: [`touch /tmp/bosun-ci-${n()}`] });
    const ciRun = (await viaApi(plain.token)).body.data.id;
    expect((await ops.waitForConversation(ciRun, (c: Json) => c.status === 'completed')).agent).toBe(false);

    expect((await ops.request('patch', `/service-accounts/${plain.id}`, { agent: true })).body.data.agent).toBe(true);
    const held = (await viaApi(plain.token)).body.data.id;
    const waiting = await ops.waitForConversation(held, (c: Json) => c.status === 'awaiting_approval');
    expect([waiting.agent, waiting.steps[0].risk, waiting.steps[0].approval?.decision]).toEqual([true, 'change', null]);
    await ops.request('post', `/conversations/${held}/cancel`);

    // An agent's follow-up in someone else's conversation is held as an agent's too.
    const ours = (await ops.startConversation(serverId, 'show uptime')).id;
    expect((await ops.waitForConversation(ours, (c: Json) => c.status === 'completed')).agent).toBe(false);
    expect((await bosun.api.post(`/api/v1/conversations/${ours}/messages`).set(bearer(plain.token)).send({ message: 'restart nginx' })).status).toBe(202);
    const followed = await ops.waitForConversation(ours, (c: Json) => c.status === 'awaiting_approval');
    expect([followed.agent, followed.steps.at(-1).risk, followed.steps.at(-1).approval?.decision]).toEqual([true, 'change', null]);
    await ops.request('post', `/conversations/${ours}/cancel`);

    // The agent header only tightens: a plain API call carrying it is held too.
    const other = await agentAccount(ops, `script-${n()}`);
    const tagged = await bosun.api.post('/api/v1/conversations').set(bearer(other.token)).set('X-Bosun-Agent', 'some-client').send({ chatable_type: 'server', chatable_id: serverId, message: 'mark', commands: [`touch /tmp/bosun-x-${n()}`] });
    expect((await ops.waitForConversation(tagged.body.data.id, (c: Json) => c.status === 'awaiting_approval')).agent).toBe(true);
    await ops.request('post', `/conversations/${tagged.body.data.id}/cancel`);
  });

  test('an organization may let agents’ changes run, never their destructive steps', async () => {
    const policy = await ops.request('get', '/policy');
    expect(policy.body.data).toEqual({ allow_destructive: false, require_approval_for: ['destructive'], agents_require_approval_for_change: true, managed_by: null });
    const bad = await ops.request('put', '/policy', { allow_destructive: true, require_approval_for: [], agents_require_approval_for_change: 'no' });
    expect(bad.status).toBe(422);
    expect((await ops.request('put', '/policy', { allow_destructive: true, require_approval_for: [], agents_require_approval_for_change: false })).body.data).toEqual({
      allow_destructive: true,
      require_approval_for: [],
      agents_require_approval_for_change: false,
      managed_by: null,
    });
    try {
      const dir = `/tmp/bosun-relaxed-${n()}`;
      const started = await agent.call('run_commands', { server_id: serverId, commands: [`mkdir ${dir}`, 'sudo -n reboot'], reason: 'relaxed change, then a destructive one' });
      const id = started.data.conversations[0].conversation_id;
      const waiting = await eventually(() => conversation(id), (c: Json) => c.status === 'awaiting_approval');
      expect(waiting.steps.map((s: Json) => [s.risk, s.status, s.approval ? s.approval.decision : 'none'])).toEqual([
        ['change', 'completed', 'none'],
        ['destructive', 'pending', null],
      ]);
      expect((await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[1].id}/reject`).set(bearer(person.token))).status).toBe(202);
    } finally {
      await ops.request('put', '/policy', { allow_destructive: false, require_approval_for: ['destructive'] });
    }
  });

  test('an agent cannot reach more servers than its max_targets_per_run; nothing is started', async () => {
    const hosts = LOOPBACK_ADDRESSES.filter((h) => h !== '127.0.0.1').slice(0, 2);
    for (const host of hosts) await ops.addServer({ host, title: `fleet-${host}`, tags: ['fleet'] });
    const capped = await agentAccount(ops, `capped-${n()}`, { max_targets_per_run: 1 });
    const small = await agentOverHttp(bosun.url, capped.token);
    try {
      const before = (await ops.request('get', '/conversations?per_page=1')).body.meta.total;
      const refused = await small.call('run_commands', { tags: ['fleet'], commands: ['uptime'], reason: 'fleet check' });
      expect(refused.isError).toBe(true);
      expect(refused.data.error).toMatchObject({ status: 403, code: 'forbidden', message: expect.stringContaining('at most 1 per call') });
      expect((await ops.request('get', '/conversations?per_page=1')).body.meta.total).toBe(before);

      const fine = await small.call('ask', { server_id: serverId, instruction: 'show uptime' });
      expect(fine.isError).toBe(false);

      // A deployment over both is refused by the server itself, naming the limit; nothing runs.
      const fleet = (await ops.request('post', '/deployments', { name: `fleet-${n()}`, targets: { tags: ['fleet'] }, steps: [{ name: 'x', command: 'true' }] })).body.data;
      const run = await small.call('run_deployment', { deployment_id: fleet.id });
      expect(run.data.error).toMatchObject({ status: 403, message: expect.stringContaining('at most 1 server(s) per run') });
      expect((await ops.request('get', `/deployments/${fleet.id}/runs`)).body.meta.total).toBe(0);

      // An agent without a limit reaches every server having the tags: one conversation each.
      const both = await agent.call('run_commands', { tags: ['fleet'], commands: ['hostname'], reason: 'fleet check' });
      expect(both.data.conversations.map((c: Json) => c.status)).toEqual(['running', 'running']);
    } finally {
      await small.close();
    }
  });

  test('every tool call is in the audit trail with the agent as actor, arguments redacted; what it started names it', async () => {
    const trail = await eventually(
      async () => ((await bosun.api.get(`/api/v1/audit?per_page=100&action=mcp.tool_call&actor=${agentId}&since=${startedAt}`).set(bearer(opsToken))).body.data ?? []) as Json[],
      (list) => list.filter((e) => e.outcome !== 'pending').length >= 8,
    );
    for (const entry of trail) {
      expect(entry).toMatchObject({ action: 'mcp.tool_call', actor: { type: 'service_account', id: agentId, name: 'claude' }, target: { kind: 'mcp_tool' }, details: { transport: 'http' } });
    }
    const tools = new Set(trail.map((e) => e.details.tool));
    expect([...tools].sort()).toEqual(expect.arrayContaining(['list_servers', 'get_server', 'run_commands', 'wait', 'read_log']));
    const run = trail.find((e) => e.details.tool === 'run_commands' && e.details.arguments.reason === 'check the server answers');
    expect(run).toMatchObject({ outcome: 'ok', details: { arguments: { server_id: serverId, commands: ['echo hello-from-agent'] } } });

    // The conversations it started come through the API as the agent: their creation is the agent's too.
    // (Entries are chained a moment after their outcome: the last test's may still be on their way.)
    const created = await eventually(
      async () => ((await bosun.api.get(`/api/v1/audit?per_page=100&action=conversation.create&actor=${agentId}`).set(bearer(opsToken))).body.data ?? []) as Json[],
      (list) => list.length >= 3,
    );
    expect(created.every((e) => e.actor.id === agentId)).toBe(true);
  });
});
