import { LlmPlanner } from '../../src/domain/planner/llm';
import { startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { LlmServer } from '../support/llm-server';

type Step = { status: string; execution_log: string; title: string; command: string };
type Conversation = { id: string; status: string; steps: Step[] };

const plan = (...steps: Array<{ title: string; command: string; risk?: string }>) =>
  JSON.stringify({ steps: steps.map((s) => ({ target: 'server', risk: 'read', transfer: null, ...s })), cannot_plan: null });

describe('conversations planned by an LLM (a local OpenAI-compatible endpoint)', () => {
  let llm: LlmServer;
  let bosun: Bosun;
  let token: string;
  let serverId: string;

  beforeAll(async () => {
    llm = await LlmServer.start();
    bosun = await startBosun({ planner: new LlmPlanner({ baseUrl: llm.baseUrl, apiKey: 'sk-e2e-secret-key-1234', model: 'ops-model', maxAttempts: 2, maxReplans: 1, timeoutMs: 5000 }) });
    token = await bosun.token('llm-users');
    serverId = await userWithToken(bosun, token).addServer();
  });
  afterAll(async () => {
    await bosun.stop();
    await llm.close();
  });

  const converse = (message: string) => userWithToken(bosun, token).converse<Conversation>(serverId, message);

  test('the model’s steps run on the server', async () => {
    llm.reply(plan({ title: 'Who am I', command: 'id -un' }, { title: 'Say hello', command: 'echo hello from the plan' }));
    const done = await converse('who runs my commands? then say hello');
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => [s.title, s.command, s.status])).toEqual([
      ['Who am I', 'id -un', 'completed'],
      ['Say hello', 'echo hello from the plan', 'completed'],
    ]);
    expect(done.steps[1]!.execution_log).toBe('hello from the plan\n');
  });

  test('after a failed step the model is asked for another way, once: its new steps replace the rest', async () => {
    const asked = llm.requests.length;
    llm.reply(
      plan({ title: 'Read the config', command: 'cat /etc/bosun-e2e-missing.conf' }, { title: 'Count its lines', command: 'wc -l /etc/bosun-e2e-missing.conf' }),
      plan({ title: 'Look for the config elsewhere', command: 'echo not found; ls /etc/hostname' }),
    );
    const done = await converse('show the app config');
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => [s.title, s.status])).toEqual([
      ['Read the config', 'failed'],
      ['Count its lines', 'failed'],
      ['Look for the config elsewhere', 'completed'],
    ]);
    expect(done.steps[1]!.execution_log).toBe('--- Not run: replaced by a new plan after "Read the config" failed ---\n');
    // The re-planning request told the model what failed and why.
    const replanning = JSON.stringify(llm.requests[asked + 1]!.body.messages);
    expect(replanning).toContain('cat /etc/bosun-e2e-missing.conf');
    expect(replanning).toContain('No such file or directory');

    // Once is the bound: a second failure ends the instruction.
    llm.reply(plan({ title: 'Fail', command: 'exit 3' }), plan({ title: 'Fail again', command: 'exit 4' }));
    const bounded = await converse('try something');
    expect(bounded.status).toBe('failed');
    expect(bounded.steps.map((s) => [s.title, s.status])).toEqual([
      ['Fail', 'failed'],
      ['Fail again', 'failed'],
    ]);
  });

  test('a plan the policy refuses is sent back; refused again, the conversation fails and nothing runs', async () => {
    const asked = llm.requests.length;
    llm.reply(plan({ title: 'Clean up', command: 'rm -rf / --no-preserve-root' }), plan({ title: 'Clean up', command: 'rm -rf /' }));
    const done = await converse('free some space');
    expect(done.status).toBe('failed');
    expect(done.steps).toHaveLength(1);
    expect(done.steps[0]!.title).toBe('Plan the instruction');
    expect(done.steps[0]!.execution_log).toMatch(/gave no usable plan in 2 attempts[\s\S]*Refused by the organization's command policy/);
    expect(llm.requests.length - asked).toBe(2);
    expect(JSON.stringify(llm.requests[asked + 1]!.body.messages)).toMatch(/refused/i);
  });

  test('a key the endpoint rejects fails the instruction at once, saying so, and the key appears nowhere', async () => {
    llm.reply(401);
    const done = await converse('uptime');
    expect(done.status).toBe('failed');
    expect(done.steps[0]!.execution_log).toMatch(/refused the planner's request \(401/);
    expect(JSON.stringify(done)).not.toContain('sk-e2e-secret-key-1234');
  });
});
