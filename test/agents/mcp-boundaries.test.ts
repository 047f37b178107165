import { randomBytes } from 'node:crypto';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken, type User } from '../support/client';
import { agentAccount, agentOverHttp, type Agent } from '../support/mcp';

type Json = any;

/*
 * What the API guards, the MCP door guards the same way, because each tool is an API call as the
 * agent: another organization's things do not exist for it, secrets never reach it or the trail in
 * clear, and its calls count against the same rate limit.
 */
describe('the MCP door keeps the API’s boundaries', () => {
  let bosun: Bosun;
  let ops: User;
  let opsToken: string;
  let serverId: string;
  let agentId: string;
  let agent: Agent;
  const secret = `s3cr3t-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    bosun = await startBosun({ rateLimitPerMinute: 60 });
    opsToken = await bosun.token('owners', ['admin'], 'ops');
    ops = userWithToken(bosun, opsToken);
    serverId = await ops.addServer({ title: 'db-1' });
    expect((await ops.request('put', '/secrets/db_password', { value: secret })).status).toBeLessThan(300);
    const account = await agentAccount(ops, 'claude');
    agentId = account.id;
    agent = await agentOverHttp(bosun.url, account.token);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await bosun.stop();
  });

  test('another organization’s servers, conversations and deployments are not found, and are listed nowhere', async () => {
    const conversation = (await ops.startConversation(serverId, 'show uptime')).id;
    const deployment = (await ops.defineDeployment(serverId, [{ name: 'hello', command: 'echo hello' }])).id;
    const strangers = userWithToken(bosun, await bosun.token('strangers', ['admin'], 'root'));
    const theirs = await agentAccount(strangers, 'their-agent');
    const stranger = await agentOverHttp(bosun.url, theirs.token);
    try {
      const calls = [
        await stranger.call('get_server', { server_id: serverId }),
        await stranger.call('get_conversation', { conversation_id: conversation }),
        await stranger.call('run_commands', { server_id: serverId, commands: ['uptime'], reason: 'look' }),
        await stranger.call('ask', { server_id: serverId, instruction: 'show uptime' }),
        await stranger.call('plan_deployment', { deployment_id: deployment }),
        await stranger.call('run_deployment', { deployment_id: deployment }),
      ];
      expect(calls.map((c) => [c.isError, c.data.error?.status, c.data.error?.code])).toEqual(calls.map(() => [true, 404, 'not_found']));
      expect((await stranger.call('list_servers')).data.servers).toEqual([]);
      expect((await stranger.call('list_deployments')).data.deployments).toEqual([]);
      expect((await stranger.call('run_commands', { tags: ['web'], commands: ['uptime'], reason: 'look' })).data.error.code).toBe('not_found');
    } finally {
      await stranger.close();
    }
  });

  test('a secret in a command is redacted in the step’s output and in the trail’s record of the tool call', async () => {
    const started = await agent.call('run_commands', { server_id: serverId, commands: [`echo ${secret}`], reason: `check ${secret} is set` });
    const id = started.data.conversations[0].conversation_id;
    const done = await eventually(() => agent.call('wait', { conversation_id: id, timeout_seconds: 10 }), (w) => w.data.status === 'completed');
    expect(done.text).not.toContain(`${secret}\n`);
    expect(done.data.untrusted_server_output.items[0].value).toContain('[redacted]');

    const trail = await eventually(
      async () => ((await bosun.api.get(`/api/v1/audit?per_page=100&action=mcp.tool_call&actor=${agentId}`).set(bearer(opsToken))).body.data ?? []) as Json[],
      (list) => list.some((e) => e.details.tool === 'run_commands' && e.outcome === 'ok'),
    );
    const call = trail.find((e) => e.details.tool === 'run_commands')!;
    expect(call.details.arguments).toEqual({ server_id: serverId, commands: ['echo [redacted]'], reason: 'check [redacted] is set' });
    expect(JSON.stringify(trail)).not.toContain(secret);
  });

  test('deployment parameters are masked in the trail', async () => {
    const deployment = (await ops.request('post', '/deployments', { name: `p-${randomBytes(3).toString('hex')}`, server_id: serverId, parameters: [{ name: 'version' }], steps: [{ name: 'x', command: 'true' }] })).body.data;
    const planned = await agent.call('plan_deployment', { deployment_id: deployment.id, parameters: { version: 'v-private-1' } });
    expect(planned.isError).toBe(false);
    const trail = await eventually(
      async () => ((await bosun.api.get(`/api/v1/audit?per_page=100&action=mcp.tool_call&actor=${agentId}`).set(bearer(opsToken))).body.data ?? []) as Json[],
      (list) => list.some((e) => e.details.tool === 'plan_deployment'),
    );
    expect(trail.find((e) => e.details.tool === 'plan_deployment').details.arguments).toEqual({ deployment_id: deployment.id, parameters: { version: '********' } });
  });

  test('the agent’s calls count against the same per-token rate limit as the API: past it, they are refused (429), and so is the API', async () => {
    const limited = await agentAccount(ops, `busy-${randomBytes(3).toString('hex')}`);
    const busy = await agentOverHttp(bosun.url, limited.token);
    let refused: unknown;
    try {
      // Each list_servers is one /mcp request and one API request: 60 a minute are spent within 30 calls.
      for (let i = 0; i < 40 && !refused; i += 1) {
        try {
          const listed = await busy.call('list_servers');
          if (listed.isError) refused = listed.data.error;
        } catch (error) {
          refused = error;
        }
      }
    } finally {
      await busy.close().catch(() => undefined);
    }
    expect(String((refused as Error)?.message ?? JSON.stringify(refused))).toMatch(/429|rate_limited|Too many requests/);
    const direct = await bosun.api.get('/api/v1/servers').set(bearer(limited.token));
    expect(direct.status).toBe(429);
  });
});
