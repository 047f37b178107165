import type { LlmConfig } from '../../src/config';
import { LlmPlanner } from '../../src/domain/planner/llm';
import { DEFAULT_POLICY, judgeStep } from '../../src/domain/planner/policy';
import type { PlanContext, PlanOptions, ServerContext } from '../../src/domain/planner/types';
import { LlmServer } from '../support/llm-server';

const KEY = 'sk-test-0123456789abcdef';
const ubuntu: ServerContext = { title: 'web-1', username: 'deploy', os: { name: 'Ubuntu', version: '24.04', kernel: '6.8.0-31-generic' } };
const rocky: ServerContext = { title: 'web-2', username: 'root', os: { name: 'Rocky Linux', version: '9.4', kernel: '5.14.0' } };
const onServer: PlanContext = { kind: 'server', server: ubuntu };
const migration: PlanContext = { kind: 'migration_plan', title: 'Move the shop', notes: 'Site files live in /var/www/shop.', source: ubuntu, target: rocky };
const policy: PlanOptions = {
  refusal: (step) => {
    const verdict = judgeStep(step, DEFAULT_POLICY);
    return verdict.allowed ? null : verdict.reason;
  },
};

const json = (value: unknown) => JSON.stringify(value);
// Loosely typed: tests also send what the schema forbids.
const step = (command: string, extra: Record<string, unknown> = {}) => ({ title: `Run ${command}`, command, target: 'server', risk: 'read', transfer: null, ...extra });
const messagesOf = (llm: LlmServer, request: number) => llm.requests[request]!.body.messages.map((m) => `${m.role}: ${String(m.content)}`).join('\n');

describe('the LLM planner', () => {
  let llm: LlmServer;
  let config: LlmConfig;
  beforeEach(async () => {
    llm = await LlmServer.start();
    config = { baseUrl: llm.baseUrl, apiKey: KEY, model: 'test-model', maxAttempts: 3, maxReplans: 2, timeoutMs: 5000 };
  });
  afterEach(() => llm.close());

  test('returns the steps the model gives, asking with the model, the key, a strict JSON schema and the server it is about', async () => {
    llm.reply(json({ steps: [step('df -h'), step('sudo -n systemctl restart nginx', { title: 'Restart nginx', risk: 'change' })], cannot_plan: null }));
    const planner = new LlmPlanner(config);

    const result = await planner.plan('free space, then restart nginx', onServer, policy);

    expect(result).toEqual({
      ok: true,
      steps: [
        { title: 'Run df -h', command: 'df -h', target: 'server', risk: 'read' },
        { title: 'Restart nginx', command: 'sudo -n systemctl restart nginx', target: 'server', risk: 'change' },
      ],
    });
    expect(planner.maxReplans).toBe(2);
    expect(llm.requests).toHaveLength(1);
    const [request] = llm.requests;
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toMatchObject({ model: 'test-model', temperature: 0, response_format: { type: 'json_schema', json_schema: { strict: true } } });
    expect(request!.body.response_format).toMatchObject({ json_schema: { schema: { required: ['steps', 'cannot_plan'], additionalProperties: false } } });
    const system = messagesOf(llm, 0);
    expect(system).toMatch(/OS Ubuntu 24\.04/);
    expect(system).toMatch(/login user deploy \(not root\)/);
    expect(system).toMatch(/sudo -n/);
    expect(system).toMatch(/user: free space, then restart nginx/);
  });

  test('reads JSON an endpoint without structured output fenced, with the optional keys left out', async () => {
    llm.reply('```json\n{"steps":[{"title":"Uptime","command":"uptime","target":"server","risk":"read"}]}\n```');
    const result = await new LlmPlanner(config).plan('uptime?', onServer);
    expect(result).toEqual({ ok: true, steps: [{ title: 'Uptime', command: 'uptime', target: 'server', risk: 'read' }] });
  });

  test('a malformed answer is sent back with what was wrong, and the next answer is used', async () => {
    llm.reply('Sure! Here is the plan: df -h', json({ steps: [step('df -h')], cannot_plan: null }));

    const result = await new LlmPlanner(config).plan('disk space', onServer);

    expect(result.ok).toBe(true);
    expect(llm.requests).toHaveLength(2);
    const retry = llm.requests[1]!.body.messages;
    expect(retry.slice(-2)).toEqual([
      { role: 'assistant', content: 'Sure! Here is the plan: df -h' },
      { role: 'user', content: expect.stringMatching(/^Bosun could not use your answer: the answer was not a JSON object\./) },
    ]);
  });

  test('an answer that is always malformed gives up after LLM_MAX_ATTEMPTS with a reason naming the model and the endpoint, not the key', async () => {
    const empty = json({ steps: [step('', { title: 'Clean up' })] });
    llm.reply(empty, empty, empty);

    const result = await new LlmPlanner(config).plan('do something', onServer);

    expect(llm.requests).toHaveLength(3);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe(
      `The LLM planner (test-model at ${llm.baseUrl}) gave no usable plan in 3 attempts.\n` +
        'Its last answer was not usable: steps[0] ("Clean up"): command is empty.',
    );
    expect(result.reason).not.toContain(KEY);
  });

  test('a schema violation is described by its path', async () => {
    llm.reply(json({ steps: [step('ls', { risk: 'harmless' })] }), json({ steps: [step('ls')] }));

    await new LlmPlanner(config).plan('list', onServer);

    expect(messagesOf(llm, 1)).toMatch(/the JSON does not match the schema \(steps\[0\]\.risk: Invalid option/);
  });

  test('a step the command policy refuses is sent back with the reason, and a safe alternative is used', async () => {
    llm.reply(
      json({ steps: [step('rm -rf /', { title: 'Free space', risk: 'change' })], cannot_plan: null }),
      json({ steps: [step('sudo -n journalctl --vacuum-size=200M', { title: 'Trim the journal', risk: 'change' })], cannot_plan: null }),
    );

    const result = await new LlmPlanner(config).plan('free some disk space', onServer, policy);

    expect(result).toEqual({ ok: true, steps: [{ title: 'Trim the journal', command: 'sudo -n journalctl --vacuum-size=200M', target: 'server', risk: 'change' }] });
    const correction = llm.requests[1]!.body.messages.at(-1)!.content as string;
    expect(correction).toMatch(/^Step 1 \("Free space": rm -rf \/\) is refused\. Refused by the organization's command policy: this command is destructive \(recursive rm of a system path \(\/\)\)/);
    expect(correction).toMatch(/safe alternative/);
  });

  test('a model that keeps asking for refused steps gets no plan, and the reason says why', async () => {
    const unsafe = json({ steps: [step('ls /tmp'), step('rm -rf /', { risk: 'change' })], cannot_plan: null });
    llm.reply(unsafe, unsafe, unsafe);

    const result = await new LlmPlanner(config).plan('clean up', onServer, policy);

    expect(llm.requests).toHaveLength(3);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toMatch(/^The LLM planner \(test-model at http:\/\/127\.0\.0\.1:\d+\/v1\) gave no usable plan in 3 attempts\.\n/);
      expect(result.reason).toMatch(/Its last answer asked for steps the command policy refuses: step 2 \("Run rm -rf \/": rm -rf \/\): Refused by the organization's command policy/);
    }
  });

  test('cannot_plan ends planning at once with the model\'s reason', async () => {
    llm.reply(json({ steps: null, cannot_plan: 'Ordering pizza is not something a shell command can do.' }));

    const result = await new LlmPlanner(config).plan('order a pizza', onServer);

    expect(result).toEqual({ ok: false, reason: 'The LLM planner (test-model) could not plan this instruction: Ordering pizza is not something a shell command can do.' });
    expect(llm.requests).toHaveLength(1);
  });

  test('a migration plan: both servers in the prompt, steps on either, transfers with the line Bosun writes for them', async () => {
    llm.reply(
      json({
        steps: [
          step('du -sh /var/www/shop', { target: 'source' }),
          { title: 'Copy the site', command: '', target: 'target', risk: 'change', transfer: { kind: 'copy', from: '/var/www/shop', to: '/srv/shop' } },
          { title: 'Move the database', command: 'echo harmless', target: 'target', risk: 'change', transfer: { kind: 'pipe', source_command: 'pg_dump shop', target_command: 'psql shop' } },
          { title: 'Compare', command: '', target: 'target', risk: 'read', transfer: { kind: 'compare', source_command: 'ls /var/www/shop', target_command: 'ls /srv/shop' } },
        ],
        cannot_plan: null,
      }),
    );

    const result = await new LlmPlanner(config).plan('copy the shop to the new server', migration, policy);

    expect(result).toEqual({
      ok: true,
      steps: [
        { title: 'Run du -sh /var/www/shop', command: 'du -sh /var/www/shop', target: 'source', risk: 'read' },
        { title: 'Copy the site', command: 'copy /var/www/shop (source) → /srv/shop (target)', target: 'target', risk: 'change', transfer: { kind: 'copy', from: '/var/www/shop', to: '/srv/shop' } },
        { title: 'Move the database', command: 'pg_dump shop | psql shop', target: 'target', risk: 'change', transfer: { kind: 'pipe', source_command: 'pg_dump shop', target_command: 'psql shop' } },
        { title: 'Compare', command: 'diff <(ls /var/www/shop) <(ls /srv/shop)', target: 'target', risk: 'read', transfer: { kind: 'compare', source_command: 'ls /var/www/shop', target_command: 'ls /srv/shop' } },
      ],
    });
    const system = messagesOf(llm, 0);
    expect(system).toMatch(/A migration plan: "Move the shop"/);
    expect(system).toMatch(/Its notes: Site files live in \/var\/www\/shop\./);
    expect(system).toMatch(/The source server: "web-1": login user deploy \(not root\), OS Ubuntu 24\.04/);
    expect(system).toMatch(/The target server: "web-2": login user root, OS Rocky Linux 9\.4/);
    expect(system).toMatch(/"kind":"copy"/);
  });

  test('a transfer hides no destructive command from the policy', async () => {
    const sneaky = json({ steps: [{ title: 'Sync', command: 'echo ok', target: 'target', risk: 'read', transfer: { kind: 'pipe', source_command: 'cat /etc/hosts', target_command: 'sh -c "rm -rf /"' } }] });
    llm.reply(sneaky, sneaky, sneaky);

    const result = await new LlmPlanner(config).plan('sync hosts', migration, policy);

    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/step 1 \("Sync": cat \/etc\/hosts \| sh -c "rm -rf \/"\): Refused/);
  });

  test('targets must fit the context: "server" for a server, "source"/"target" for a migration plan, transfers only in plans', async () => {
    llm.reply(
      json({ steps: [step('uptime', { target: 'source' }), step('', { title: 'Copy', target: 'target', transfer: { kind: 'copy', from: '/a', to: '/b' } })] }),
      json({ steps: [step('uptime')] }),
      json({ steps: [step('uptime')] }),
      json({ steps: [step('uptime', { target: 'target' })] }),
    );
    const planner = new LlmPlanner(config);

    expect((await planner.plan('uptime', onServer)).ok).toBe(true);
    expect(messagesOf(llm, 1)).toMatch(
      /steps\[0\] \("Run uptime"\): target must be "server" \(this conversation is about one server\), not "source"; steps\[1\] \("Copy"\): target must be "server" .*; steps\[1\] \("Copy"\): transfer is only for migration plans; use null\./,
    );
    expect((await planner.plan('uptime', migration)).ok).toBe(true);
    expect(messagesOf(llm, 3)).toMatch(/steps\[0\] \("Run uptime"\): target must be "source" or "target" in a migration plan, not "server"/);
  });

  test('an endpoint answering 500 is retried by the client, then plan() throws (for the activity to retry) without the key', async () => {
    llm.reply(500, 500, 500);

    const error = await new LlmPlanner(config).plan('uptime', onServer).catch((e: Error) => e);

    expect(llm.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toHaveProperty('name', 'LlmConfigurationError');
    expect((error as Error).message).toBe(`The LLM endpoint test-model at ${llm.baseUrl} failed to answer in 3 tries (500 scripted status 500).`);
    expect(JSON.stringify(error) + String((error as Error).stack)).not.toContain(KEY);
  });

  test('an endpoint that is down makes plan() throw', async () => {
    await llm.close();
    const error = await new LlmPlanner(config).plan('uptime', onServer).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/^The LLM endpoint test-model at http:\/\/127\.0\.0\.1:\d+\/v1 failed to answer in 3 tries \(Connection error\. ECONNREFUSED\)\.$/);
    llm = await LlmServer.start();
  });

  test('a rejected key is an LlmConfigurationError, not retried', async () => {
    llm.reply(401);

    const error = await new LlmPlanner(config).plan('uptime', onServer).catch((e: Error) => e);

    expect(llm.requests).toHaveLength(1);
    expect(error).toHaveProperty('name', 'LlmConfigurationError');
    expect((error as Error).message).toBe(`The LLM endpoint test-model at ${llm.baseUrl} refused the planner's request (401 scripted status 401): check LLM_API_KEY.`);
  });

  test('an unknown model is an LlmConfigurationError too', async () => {
    llm.reply(404);
    await expect(new LlmPlanner(config).plan('uptime', onServer)).rejects.toMatchObject({ name: 'LlmConfigurationError', message: expect.stringMatching(/check LLM_MODEL/) });
  });

  test('a local server without a key gets no Authorization header', async () => {
    llm.reply(json({ steps: [step('uptime')] }));
    await new LlmPlanner({ ...config, apiKey: undefined }).plan('uptime', onServer);
    expect(llm.requests[0]!.authorization).toBeUndefined();
  });

  test('replan tells the model what ran and how the failed step\'s log ends', async () => {
    llm.reply(json({ steps: [step('sudo -n systemctl start nginx', { title: 'Start nginx', risk: 'change' })] }));
    const longLog = `${'x'.repeat(5000)}\nnginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)\n`;

    const result = await new LlmPlanner(config).replan(
      'restart nginx',
      onServer,
      [
        { title: 'Test the configuration', command: 'sudo -n nginx -t', target: 'server', status: 'completed', log: 'syntax is ok' },
        { title: 'Restart nginx', command: 'sudo -n systemctl restart nginx', target: 'server', status: 'failed', log: longLog },
      ],
      policy,
    );

    expect(result.ok).toBe(true);
    const report = llm.requests[0]!.body.messages.at(-1)!.content as string;
    expect(report).toMatch(/^Bosun ran these steps for the instruction:\n1\. \[completed\] Test the configuration \(on server\): sudo -n nginx -t\n/);
    expect(report).toMatch(/2\. \[failed\] Restart nginx \(on server\): sudo -n systemctl restart nginx\n {3}Its log ends:\n…x+\nnginx: \[emerg\] bind\(\) to 0\.0\.0\.0:80 failed/);
    expect(report.length).toBeLessThan(2600);
    expect(report).toMatch(/The last step failed\. Give the steps to run instead of the rest of the plan/);
    expect(messagesOf(llm, 0)).toMatch(/user: restart nginx/);
  });
});
