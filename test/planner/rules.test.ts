import { CATALOGUE, RulesPlanner } from '../../src/domain/planner/rules';
import type { PlanContext, ServerContext } from '../../src/domain/planner/types';

const server = (os: string, username = 'deploy'): ServerContext => ({ title: os, username, os: { name: os, version: '1', kernel: '6.1' } });
const debian = server('Debian GNU/Linux');
const rocky = server('Rocky Linux');
const alpine = server('Alpine Linux', 'root');
const on = (s: ServerContext): PlanContext => ({ kind: 'server', server: s });
const planner = new RulesPlanner();

async function commands(instruction: string, context: PlanContext) {
  const result = await planner.plan(instruction, context);
  if (!result.ok) throw new Error(result.reason);
  return result.steps.map((s) => s.command);
}

describe('the built-in rules planner', () => {
  it('knows at least 30 kinds of request', () => {
    expect(CATALOGUE.length).toBeGreaterThanOrEqual(30);
  });

  // instruction → the command on Debian (login "deploy"), Rocky Linux (login "deploy"), Alpine (login root)
  const table: Array<[string, string, string, string]> = [
    ['how much disk space is left?', 'df -h -x tmpfs -x devtmpfs', 'df -h -x tmpfs -x devtmpfs', 'df -h -x tmpfs -x devtmpfs'],
    ['show memory usage', 'free -h', 'free -h', 'free -h'],
    ['what is the uptime and load', 'uptime', 'uptime', 'uptime'],
    ['top processes by cpu', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 11', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 11', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n 11'],
    ['which processes use the most memory', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 11', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 11', 'ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n 11'],
    ['list listening ports', 'ss -tulpn', 'ss -tulpn', 'ss -tulpn'],
    ['who is on port 8080', "ss -tulpn 'sport = :8080'", "ss -tulpn 'sport = :8080'", "ss -tulpn 'sport = :8080'"],
    ['restart nginx', 'sudo -n systemctl restart nginx', 'sudo -n systemctl restart nginx', 'rc-service nginx restart'],
    ['stop the redis service', 'sudo -n systemctl stop redis', 'sudo -n systemctl stop redis', 'rc-service redis stop'],
    ['start postgresql', 'sudo -n systemctl start postgresql', 'sudo -n systemctl start postgresql', 'rc-service postgresql start'],
    ['status of sshd', 'systemctl status sshd --no-pager --lines=20', 'systemctl status sshd --no-pager --lines=20', 'rc-service sshd status'],
    ['enable docker', 'sudo -n systemctl enable docker', 'sudo -n systemctl enable docker', 'rc-update add docker'],
    ['install htop', 'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y htop', 'sudo -n dnf install -y htop', 'apk add htop'],
    ['remove the package telnet', 'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get remove -y telnet', 'sudo -n dnf remove -y telnet', 'apk del telnet'],
    ['update all packages', 'sudo -n sh -c "apt-get update && env DEBIAN_FRONTEND=noninteractive apt-get upgrade -y"', 'sudo -n dnf upgrade -y', 'sh -c "apk update && apk upgrade"'],
    ['show pending updates', 'apt list --upgradable 2>/dev/null', 'dnf check-update; test $? -ne 1', "apk version -l '<'"],
    ['tail /var/log/syslog', 'tail -n 100 -- /var/log/syslog', 'tail -n 100 -- /var/log/syslog', 'tail -n 100 -- /var/log/syslog'],
    ['last 20 lines of /var/log/nginx/error.log', 'tail -n 20 -- /var/log/nginx/error.log', 'tail -n 20 -- /var/log/nginx/error.log', 'tail -n 20 -- /var/log/nginx/error.log'],
    ['search for "timeout" in /var/log/app.log', 'grep -n -i -e timeout -- /var/log/app.log | tail -n 200', 'grep -n -i -e timeout -- /var/log/app.log | tail -n 200', 'grep -n -i -e timeout -- /var/log/app.log | tail -n 200'],
    ['check https://example.com/health', "curl -sS -o /dev/null --max-time 15 -w 'HTTP %{http_code} in %{time_total} s\\n' -- https://example.com/health", "curl -sS -o /dev/null --max-time 15 -w 'HTTP %{http_code} in %{time_total} s\\n' -- https://example.com/health", "curl -sS -o /dev/null --max-time 15 -w 'HTTP %{http_code} in %{time_total} s\\n' -- https://example.com/health"],
    ['show the file /etc/hosts', 'head -c 65536 -- /etc/hosts', 'head -c 65536 -- /etc/hosts', 'head -c 65536 -- /etc/hosts'],
    ['free space in /var/lib', 'df -h -- /var/lib', 'df -h -- /var/lib', 'df -h -- /var/lib'],
    ['size of /var/log', 'du -sh -- /var/log', 'du -sh -- /var/log', 'du -sh -- /var/log'],
    ['logs of nginx', 'journalctl -u nginx -n 100 --no-pager', 'journalctl -u nginx -n 100 --no-pager', 'tail -n 2000 /var/log/messages | grep -i -- nginx | tail -n 100'],
    ['is curl installed', "dpkg-query -W -f='${Package} ${Version} ${Status}\\n' curl", 'rpm -q curl', 'apk info -e curl'],
    ['kernel version', 'uname -a', 'uname -a', 'uname -a'],
    ['who is logged in', 'who', 'who', 'who'],
    ['show ip addresses', 'ip -brief address', 'ip -brief address', 'ip -brief address'],
    ['ping example.org', 'ping -c 4 -W 2 -- example.org', 'ping -c 4 -W 2 -- example.org', 'ping -c 4 -W 2 -- example.org'],
    ['list failed services', 'systemctl --failed --no-pager', 'systemctl --failed --no-pager', 'systemctl --failed --no-pager'],
  ];

  it.each(table)('plans "%s" for each OS family', async (instruction, onDebian, onRocky, onAlpine) => {
    expect(await commands(instruction, on(debian))).toEqual([onDebian]);
    expect(await commands(instruction, on(rocky))).toEqual([onRocky]);
    expect(await commands(instruction, on(alpine))).toEqual([onAlpine]);
  });

  it('gives several steps for several requests in one sentence, and knows what "its" means', async () => {
    const result = await planner.plan('restart nginx and show its status, then show me the last errors', on(debian));
    expect(result).toEqual({
      ok: true,
      steps: [
        { title: 'Restart nginx', command: 'sudo -n systemctl restart nginx', target: 'server', risk: 'change' },
        { title: 'Status of nginx', command: 'systemctl status nginx --no-pager --lines=20', target: 'server', risk: 'read' },
        { title: 'Last 50 errors of nginx', command: 'journalctl -u nginx -p err -n 50 --no-pager', target: 'server', risk: 'read' },
      ],
    });
  });

  it('quotes what it takes from the sentence, so nothing in it runs as shell', async () => {
    expect(await commands('show the file /tmp/$(reboot)', on(debian))).toEqual(["head -c 65536 -- '/tmp/$(reboot)'"]);
    // A second command after ";" is a request of its own, and "rm" is none the planner knows.
    expect((await planner.plan('show the file /tmp/a;rm -rf /', on(debian))).ok).toBe(false);
    expect(await commands('search for "$(reboot)" in /var/log/x.log', on(debian))).toEqual(["grep -n -i -e '$(reboot)' -- /var/log/x.log | tail -n 200"]);
  });

  it('on an unknown OS, uses whichever package manager the server has', async () => {
    const [command] = await commands('install jq', on(server('Mystery OS')));
    expect(command).toContain('if command -v apt-get >/dev/null 2>&1; then sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y jq');
    expect(command).toContain('elif command -v dnf >/dev/null 2>&1; then sudo -n dnf install -y jq');
  });

  it('runs a migration plan’s steps on the target unless the sentence names the source or both', async () => {
    const plan: PlanContext = { kind: 'migration_plan', title: 'move', notes: '', source: debian, target: rocky };
    const result = await planner.plan('show disk usage on both servers and install nginx and show memory on the source', plan);
    expect(result.ok && result.steps.map((s) => [s.target, s.command])).toEqual([
      ['source', 'df -h -x tmpfs -x devtmpfs'],
      ['target', 'df -h -x tmpfs -x devtmpfs'],
      ['target', 'sudo -n dnf install -y nginx'],
      ['source', 'free -h'],
    ]);
  });

  it('says what it understands, and how to configure an LLM, when it cannot plan a sentence', async () => {
    const result = await planner.plan('write me a poem about kubernetes', on(debian));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toContain('could not turn "write me a poem about kubernetes" into a command');
    expect(result.reason).toContain('LLM_BASE_URL');
    expect(result.reason).toContain('disk usage');
  });
});
