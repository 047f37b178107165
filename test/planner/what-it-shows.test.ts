import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CATALOGUE, RulesPlanner } from '../../src/domain/planner/rules';
import type { PlanContext } from '../../src/domain/planner/types';

const context: PlanContext = { kind: 'server', server: { title: 'web-1', username: 'root', os: { name: 'Debian GNU/Linux', version: '12', kernel: '6.1' } } };
const planner = new RulesPlanner();
const plan = (instruction: string) => planner.plan(instruction, context);
const steps = async (instruction: string) => {
  const result = await plan(instruction);
  if (!result.ok) throw new Error(result.reason);
  return result.steps.map(({ title, command, risk }) => ({ title, command, risk }));
};

/** What the built-in planner shows a person must be what it does. */
describe('the built-in planner says what it does', () => {
  test.each([
    ['show the top 5 processes by memory', 'Top 5 processes by memory', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 6'],
    ['top 3 processes by cpu', 'Top 3 processes by CPU', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 4'],
    ['show the 3 busiest processes', 'Top 3 processes by CPU', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 4'],
    ['which processes use the most memory', 'Top 10 processes by memory', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 11'],
    ['the 10 largest files in /var', '10 largest files and directories under /var', 'du -ahx -- /var 2>/dev/null | sort -rh | head -n 10'],
    ['last 200 lines of nginx logs', 'Last 200 log lines of nginx', 'journalctl -u nginx -n 200 --no-pager'],
    ['last 20 errors of nginx', 'Last 20 errors of nginx', 'journalctl -u nginx -p err -n 20 --no-pager'],
    ['last 30 lines of /var/log/syslog', 'Last 30 lines of /var/log/syslog', 'tail -n 30 -- /var/log/syslog'],
  ])('numbers reach the command: %s', async (instruction, title, command) => {
    expect(await steps(instruction)).toEqual([{ title, command, risk: 'read' }]);
  });

  test('a number or a path the command does not use is said in the step’s title', async () => {
    expect(await steps('show memory usage of /srv')).toEqual([{ title: 'Memory usage (this command does not use "/srv")', command: 'free -h', risk: 'read' }]);
    expect((await steps('show uptime for the last 3 days'))[0]!.title).toBe('Uptime and load (this command does not use "for the last 3 days")');
    expect((await steps('ping 127.0.0.1 10 times'))[0]!.title).toBe('Ping 127.0.0.1 (this command does not use "10")');
    expect((await steps('listening ports on 127.0.0.2'))[0]!.title).toBe('Listening ports (this command does not use "127.0.0.2")');
    expect((await steps('check https://example.com:8443/x 3 times'))[0]!.title).toBe('Check https://example.com:8443/x (this command does not use "3")');
  });

  test('a name the command does not use is said in the step’s title (but not the server’s own name)', async () => {
    expect((await steps('uptime of web-2'))[0]!.title).toBe('Uptime and load (this command does not use "web-2")');
    expect((await steps('uptime of web-1'))[0]!.title).toBe('Uptime and load');
    expect((await steps('containers named web'))[0]!.title).toBe('Containers (this command does not use "web")');
    expect((await steps('cron jobs of user deploy'))[0]!.title).toBe('Cron jobs (this command does not use "deploy")');
    expect((await steps('ip address of eth0'))[0]!.title).toBe('IP addresses (this command does not use "eth0")');
    expect((await steps('who is logged in as deploy'))[0]!.title).toBe('Logged-in users (this command does not use "deploy")');
    expect((await steps('memory usage of the server'))[0]!.title).toBe('Memory usage');
    // Migration plans' own intents too.
    const server = context.kind === 'server' ? context.server : null;
    const migration: PlanContext = { kind: 'migration_plan', title: 'move', notes: '', source: { ...server!, title: 'old-1' }, target: { ...server!, title: 'new-1' } };
    const compared = await planner.plan('compare the packages of nginx', migration);
    expect(compared.ok && compared.steps[0]!.title).toBe('Compare the installed packages of the source and the target (this command does not use "nginx")');
    const copied = await planner.plan('copy /var/www to the target at /srv/www', migration);
    expect(copied.ok && copied.steps[0]!.title).toBe('Copy /var/www from the source to /srv/www on the target');
  });

  test('the memory and CPU of a named process are that process’s, not the whole server’s', async () => {
    const nginx = { title: 'Memory and CPU of processes named nginx', command: `pids=$(pgrep -d, -- nginx) && ps -o pid,user,%cpu,%mem,rss,etime,args -p "$pids" || echo 'no process named nginx'`, risk: 'read' };
    expect(await steps('memory usage of nginx')).toEqual([nginx]);
    expect(await steps('cpu usage of nginx')).toEqual([nginx]);
    expect((await steps('how much memory does postgres use'))[0]!.title).toBe('Memory and CPU of processes named postgres');
  });

  test('a time window reaches the journal, and is not read as a count', async () => {
    expect(await steps('nginx logs from the last 2 hours')).toEqual([
      { title: 'Last 100 log lines of nginx (from the last 2 hours)', command: "journalctl -u nginx --since '2 hours ago' -n 100 --no-pager", risk: 'read' },
    ]);
    expect(await steps('last 20 errors of nginx in the last 10 minutes')).toEqual([
      { title: 'Last 20 errors of nginx (in the last 10 minutes)', command: "journalctl -u nginx -p err --since '10 minutes ago' -n 20 --no-pager", risk: 'read' },
    ]);
    expect((await steps('show errors since yesterday'))[0]!.command).toBe('journalctl -p err --since yesterday -n 50 --no-pager');
    expect((await steps('errors of nginx yesterday'))[0]!.command).toBe('journalctl -u nginx -p err --since yesterday --until today -n 50 --no-pager');
    // OpenRC's /var/log/messages has no time filter: the title says the window is not applied.
    const alpine: PlanContext = { kind: 'server', server: { title: 'edge-1', username: 'root', os: { name: 'Alpine Linux', version: '3.20', kernel: '6.6' } } };
    const result = await planner.plan('nginx logs from the last 2 hours', alpine);
    expect(result.ok && result.steps[0]!.title).toBe('Last 100 log lines of nginx (this command does not use "from the last 2 hours")');
  });

  test('other phrasings keep their numbers and names', async () => {
    expect((await steps('tail 50 lines of /var/log/syslog'))[0]!.command).toBe('tail -n 50 -- /var/log/syslog');
    expect((await steps('tail -n 50 /var/log/syslog'))[0]!.command).toBe('tail -n 50 -- /var/log/syslog');
    expect((await steps('top 5 processes'))[0]!.command).toBe('ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 6');
    expect((await steps('largest 5 files in /var'))[0]!.command).toBe('du -ahx -- /var 2>/dev/null | sort -rh | head -n 5');
    expect(await steps("grep 'foo bar' in /etc/hosts")).toEqual([
      { title: 'Search /etc/hosts for "foo bar" (the last 200 matching lines)', command: "grep -n -i -e 'foo bar' -- /etc/hosts | tail -n 200", risk: 'read' },
    ]);
    expect((await steps('show the status of the service nginx'))[0]!.title).toBe('Status of nginx');
  });

  test('a destructive request it can name is planned as destructive (for the policy to judge), never as something else', async () => {
    expect(await steps('delete everything in /var/log')).toEqual([{ title: 'Delete everything in /var/log', command: 'find /var/log -mindepth 1 -delete', risk: 'destructive' }]);
    expect(await steps('remove everything in /tmp/build')).toEqual([{ title: 'Delete everything in /tmp/build', command: 'find /tmp/build -mindepth 1 -delete', risk: 'destructive' }]);
    expect(await steps('delete /tmp/old.log')).toEqual([{ title: 'Delete /tmp/old.log', command: 'rm -rf -- /tmp/old.log', risk: 'destructive' }]);
    // "remove <name>" is still a package.
    expect((await steps('remove the package telnet'))[0]!.title).toBe('Remove telnet');
  });

  test('a destructive request it cannot name is refused as destructive; an instruction it does not know is "not understood"', async () => {
    const refused = await plan('delete the nginx logs');
    expect(refused).toMatchObject({ ok: false, risk: 'destructive', reason: expect.stringMatching(/^Refused as destructive: "delete the nginx logs"/) });
    const unknown = await plan('write a haiku about the cloud');
    expect(unknown.ok).toBe(false);
    expect(unknown).not.toHaveProperty('risk');
    expect(!unknown.ok && unknown.reason).toMatch(new RegExp(`^Not understood: .*\\nIt understands ${CATALOGUE.length} operations: `));
  });

  test('the documented count of operations is the planner’s', () => {
    const readme = readFileSync(path.join(__dirname, '..', '..', 'docs', 'conversations.md'), 'utf8');
    const said = /a catalogue of (\d+) common operations/.exec(readme);
    expect(said).not.toBeNull();
    expect(Number(said![1])).toBe(CATALOGUE.length);
  });
});
