import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CATALOGUE, RulesPlanner } from '../../src/planner/rules';
import type { PlanContext } from '../../src/planner/types';

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
    expect((await steps('show uptime for the last 3 days'))[0]!.title).toBe('Uptime and load (this command does not use "3")');
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

  test('the README’s count of operations is the planner’s', () => {
    const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const said = /a catalogue of (\d+) common operations/.exec(readme);
    expect(said).not.toBeNull();
    expect(Number(said![1])).toBe(CATALOGUE.length);
  });
});
