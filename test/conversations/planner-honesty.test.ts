import { CATALOGUE } from '../../src/domain/planner/rules';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { userWithToken } from '../support/client';

type Step = { title: string; command: string; status: string; risk: string; execution_log: string };
type Conversation = { id: string; status: string; error: string | null; steps: Step[] };

/** What a conversation shows a person: the numbers asked for reach the command; "refused as destructive" is not "not understood". */
describe('conversations show what the planner did with an instruction', () => {
  let bosun: SharedBosun;
  let token: string;
  let serverId: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('honest-planner');
    serverId = await userWithToken(bosun, token).addServer({ host: '127.0.0.6' });
  });
  afterAll(() => bosun.stop());

  const say = (message: string) => userWithToken(bosun, token).converse<Conversation>(serverId, message);

  test('"the top 5 processes by memory" shows five processes', async () => {
    const done = await say('show the top 5 processes by memory');
    expect(done.status).toBe('completed');
    expect(done.steps).toHaveLength(1);
    expect(done.steps[0]).toMatchObject({ title: 'Top 5 processes by memory', command: 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 6' });
    const lines = done.steps[0]!.execution_log.split('\n').filter((line) => line.trim() && !line.startsWith('---'));
    expect(lines[0]).toMatch(/^\s*PID\s+USER/);
    expect(lines).toHaveLength(6);
  });

  test('"memory usage of sshd" shows the sshd processes, not the whole server', async () => {
    const done = await say('memory usage of sshd');
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => s.title)).toEqual(['Memory and CPU of processes named sshd']);
    const lines = done.steps[0]!.execution_log.split('\n').filter((line) => line.trim() && !line.startsWith('---'));
    expect(lines[0]).toMatch(/^\s*PID\s+USER\s+%CPU\s+%MEM\s+RSS/);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(1)) expect(line).toMatch(/sshd/);
  });

  test('a name the command does not use is said in the step’s title', async () => {
    const done = await say('show the uptime of web-9');
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => [s.title, s.command])).toEqual([['Uptime and load (this command does not use "web-9")', 'uptime']]);
  });

  test('a destructive instruction is refused as destructive, by the policy, naming the step', async () => {
    const done = await say('delete everything in /var/log');
    expect(done.status).toBe('failed');
    expect(done.steps.map((s) => [s.title, s.status, s.risk])).toEqual([['Delete everything in /var/log', 'failed', 'destructive']]);
    expect(done.steps[0]!.execution_log).toMatch(/^Refused by the organization's command policy: this command is destructive/);
    expect(done.error).toMatch(/^Step "Delete everything in \/var\/log" \(1\/1\) was refused by the organization's command policy: this command is destructive/);
  });

  test('a destructive instruction the planner cannot name exactly is refused as destructive, not "not understood"', async () => {
    const done = await say('delete the nginx logs');
    expect(done.status).toBe('failed');
    expect(done.steps.map((s) => [s.title, s.status, s.risk])).toEqual([['Plan the instruction', 'failed', 'destructive']]);
    expect(done.steps[0]!.execution_log).toMatch(/^Refused as destructive: "delete the nginx logs"/);
    expect(done.error).toMatch(/^Could not plan "delete the nginx logs": Refused as destructive/);
  });

  test('an instruction not understood says so, with the number of operations the planner knows', async () => {
    const done = await say('write a haiku about the cloud');
    expect(done.status).toBe('failed');
    expect(done.steps.map((s) => [s.title, s.status, s.risk])).toEqual([['Plan the instruction', 'failed', 'read']]);
    expect(done.steps[0]!.execution_log).toMatch(new RegExp(`^Not understood: .*\\nIt understands ${CATALOGUE.length} operations: `));
    expect(done.error).toMatch(/^Could not plan "write a haiku about the cloud": Not understood/);
  });
});
