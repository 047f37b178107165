import { logsHaveTimes, packageCommand, privileged, serviceCommand, serviceLogCommand } from './os-family';
import { NAME, PATH, trimSentenceEnd } from './phrases';
import { shellQuote as q } from '../shell';
import type { Risk, ServerContext } from './types';

import { count, pathOf, SERVICE_WORDS, serviceName, timeWindow, wanted, type Memory } from './clause';

/* The built-in planner's catalogue: what each kind of request looks like, and the step it becomes. */

export interface Intent {
  id: string;
  /** What it is for, listed when a sentence cannot be planned. */
  label: string;
  risk: Risk;
  pattern: RegExp;
  /** The step for a matching clause (the whole clause too: counts such as "top 5" live anywhere in it), or null when it cannot be planned. */
  build(match: RegExpMatchArray, server: ServerContext, memory: Memory, clause: string): { title: string; command: string } | null;
}

/** A log step's title and command, with the time window asked for when the server's log has times (else the title says it is not applied). */
function logStep(server: ServerContext, service: string | null, errorsOnly: boolean, clause: string, fallback: number): { title: string; command: string } {
  const lines = wanted(clause, fallback, 10_000);
  const window = timeWindow(clause);
  const applied = window && logsHaveTimes(server) ? window : null;
  const what = errorsOnly ? (service ? `errors of ${service}` : 'errors in the system log') : service ? `log lines of ${service}` : 'lines of the system log';
  const when = applied ? ` (${applied.said})` : '';
  const command = serviceLogCommand(server, service ? q(service) : null, { errorsOnly, lines, since: applied?.since ?? null, until: applied?.until ?? null });
  return { title: `Last ${lines} ${what}${when}`, command };
}

/** "memory usage of the server" is the whole server's, not a process named "server". */
const NOT_THE_SERVER = '(?!(?:the|server|machine|host|box|system|it|all|everything|processes|process|this|that|them)\\b)';

/** Words that name no package: "remove everything in /tmp" is not `apt remove everything`. */
const NOT_A_PACKAGE = new Set(['everything', 'all', 'files', 'file', 'logs', 'log', 'directory', 'folder', 'contents', 'the', 'it', 'them', 'data']);

function serviceIntent(action: 'start' | 'stop' | 'restart' | 'reload' | 'enable' | 'disable', verbs: string): Intent {
  return {
    id: `service_${action}`,
    label: `${action} a service`,
    risk: 'change',
    pattern: new RegExp(`\\b(?:${verbs})\\s+(?:the\\s+)?(?:service\\s+)?${NAME}(?:\\s+service)?\\b`, 'i'),
    build: (m, server, memory) => {
      const name = serviceName(m[1], memory);
      return name ? { title: `${action[0]!.toUpperCase()}${action.slice(1)} ${name}`, command: serviceCommand(server, action, q(name)) } : null;
    },
  };
}

/** The catalogue, most specific first: the first intent whose pattern matches a clause plans it. */
export const INTENTS: Intent[] = [
  {
    id: 'reboot', label: 'reboot the server', risk: 'destructive',
    pattern: /\b(?:reboot|restart)\s+(?:the\s+)?(?:server|machine|host|box|system)\b|^\s*reboot\b/i,
    build: (_m, server) => ({ title: 'Reboot the server', command: privileged(server, 'reboot') }),
  },
  {
    // Recognised so that it is refused as what it is (destructive, unless the organization allows
    // destructive commands), never planned as something else or reported as not understood.
    id: 'delete_files', label: 'delete files or a directory (destructive)', risk: 'destructive',
    pattern: new RegExp(`\\b(?:delete|remove|rm|wipe|erase|empty|clear|purge)\\s+(?:(everything|all(?:\\s+the)?(?:\\s+files)?|the\\s+(?:contents|files)|files|the\\s+directory|the\\s+folder)\\s+(?:in|under|inside|from|of)\\s+)?(?:the\\s+)?(?:file\\s+|directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: (m, server, memory, clause) => {
      const path = pathOf(m[2], memory)!;
      const contents = (!!m[1] && !/directory|folder/i.test(m[1])) || /^\s*(?:wipe|empty|clear|purge)\b/i.test(clause.replace(/^(?:please\s+)?/i, ''));
      return contents
        ? { title: `Delete everything in ${path}`, command: privileged(server, `find ${q(path)} -mindepth 1 -delete`) }
        : { title: `Delete ${path}`, command: privileged(server, `rm -rf -- ${q(path)}`) };
    },
  },
  {
    id: 'port_owner', label: 'who is on port N', risk: 'read',
    pattern: /\bport\s+(\d{1,5})\b/i,
    build: (m) => {
      const port = Number(m[1]);
      return port >= 1 && port <= 65535 ? { title: `What is listening on port ${port}`, command: `ss -tulpn 'sport = :${port}'` } : null;
    },
  },
  {
    id: 'listening_ports', label: 'listening ports', risk: 'read',
    pattern: /\b(?:listening|open)\s+ports\b|\bwhat(?:'s| is)\s+listening\b|\bports?\s+(?:in use|open)\b/i,
    build: () => ({ title: 'Listening ports', command: 'ss -tulpn' }),
  },
  {
    id: 'failed_services', label: 'failed services', risk: 'read',
    pattern: /\bfailed\s+(?:services|units)\b|\bwhich\s+services\s+(?:have\s+)?failed\b/i,
    build: () => ({ title: 'Failed services', command: 'systemctl --failed --no-pager' }),
  },
  {
    id: 'tail_file', label: 'tail a log file', risk: 'read',
    pattern: new RegExp(`\\b(?:tail(?:\\s+-n)?(?:\\s+(\\d+))?(?:\\s+lines\\s+(?:of|from))?|(?:last|final)\\s+(\\d+)\\s+lines\\s+(?:of|from|in)|end\\s+of)\\s+(?:the\\s+)?(?:log\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: (m, _s, memory) => {
      const path = pathOf(m[3], memory)!;
      const lines = count(m[1] ?? m[2], 100);
      return { title: `Last ${lines} lines of ${path}`, command: `tail -n ${lines} -- ${q(path)}` };
    },
  },
  {
    id: 'grep_file', label: 'search a file for a word', risk: 'read',
    pattern: new RegExp(`\\b(?:grep|search|look)\\s+(?:for\\s+)?(?:"([^"]+)"|'([^']+)'|(\\S+))\\s+in\\s+(?:the\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: (m, _s, memory, clause) => {
      const pattern = m[1] ?? m[2] ?? m[3]!;
      const path = pathOf(m[4], memory)!;
      const lines = wanted(clause, 200, 10_000);
      return { title: `Search ${path} for "${pattern}" (the last ${lines} matching lines)`, command: `grep -n -i -e ${q(pattern)} -- ${q(path)} | tail -n ${lines}` };
    },
  },
  {
    id: 'service_errors', label: 'recent errors (of a service)', risk: 'read',
    pattern: /\berrors?\b(?:\s+(?:of|for|from|in)\s+(?:the\s+)?([a-z0-9][a-z0-9@._-]*))?/i,
    build: (m, server, memory, clause) => {
      const name = m[1] && !['log', 'logs', 'journal', 'system', 'the'].includes(m[1].toLowerCase()) ? serviceName(m[1], memory) : memory.service;
      return logStep(server, name, true, clause, 50);
    },
  },
  {
    id: 'service_logs', label: 'logs of a service', risk: 'read',
    pattern: /\b(?:logs?|journal)\s+(?:of|for|from)\s+(?:the\s+)?([a-z0-9][a-z0-9@._-]*)|\b([a-z0-9][a-z0-9@._-]*)\s+logs?\b|\b(?:its|their)\s+logs?\b/i,
    build: (m, server, memory, clause) => {
      const raw = m[1] ?? m[2];
      const name = raw && !SERVICE_WORDS.has(raw.toLowerCase()) && !['system', 'error', 'the'].includes(raw.toLowerCase()) ? serviceName(raw, memory) : memory.service;
      return logStep(server, name, false, clause, 100);
    },
  },
  {
    id: 'largest_files', label: 'largest files in a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:largest|biggest)\\s+(?:\\d{1,6}\\s+)?(?:files|directories|folders)(?:\\s+(?:in|under)\\s+${PATH})?`, 'i'),
    build: (m, _s, memory, clause) => {
      const path = pathOf(m[1], memory) ?? '/';
      const n = wanted(clause, 20, 1000);
      return { title: `${n} largest files and directories under ${path}`, command: `du -ahx -- ${q(path)} 2>/dev/null | sort -rh | head -n ${n}` };
    },
  },
  {
    id: 'dir_size', label: 'size of a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:size\\s+of|how\\s+big\\s+is|disk\\s+usage\\s+of|space\\s+used\\s+by)\\s+(?:the\\s+)?(?:directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: (m, _s, memory) => {
      const path = pathOf(m[1], memory)!;
      return { title: `Size of ${path}`, command: `du -sh -- ${q(path)}` };
    },
  },
  {
    id: 'free_space_in', label: 'free space in a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:free|available|left)\\s+(?:disk\\s+)?space\\s+(?:in|on|of|for|at)\\s+${PATH}`, 'i'),
    build: (m, _s, memory) => {
      const path = pathOf(m[1], memory)!;
      return { title: `Free space in ${path}`, command: `df -h -- ${q(path)}` };
    },
  },
  {
    id: 'disk_usage', label: 'disk usage', risk: 'read',
    pattern: /\b(?:disk|disks|storage|filesystems?)\b|\bfree\s+space\b|\bhow\s+full\b|\bdf\b/i,
    build: () => ({ title: 'Disk usage', command: 'df -h -x tmpfs -x devtmpfs' }),
  },
  {
    // Before the other memory/CPU intents: "memory usage of nginx" is about nginx, not the whole server.
    id: 'process_usage', label: 'memory and CPU of a named process', risk: 'read',
    pattern: new RegExp(
      `\\b(?:memory|ram|cpu)\\s+(?:usage\\s+|use\\s+|used\\s+)?(?:of|by|for)\\s+(?:the\\s+)?(?:process(?:es)?\\s+|service\\s+)?${NOT_THE_SERVER}${NAME}|\\bhow\\s+much\\s+(?:memory|ram|cpu)\\s+(?:does|do|is)\\s+(?:the\\s+)?${NOT_THE_SERVER}${NAME}\\s+(?:use|using|take|taking)\\b`,
      'i',
    ),
    build: (m) => {
      const name = (m[1] ?? m[2])!.toLowerCase();
      return {
        title: `Memory and CPU of processes named ${name}`,
        command: `pids=$(pgrep -d, -- ${q(name)}) && ps -o pid,user,%cpu,%mem,rss,etime,args -p "$pids" || echo ${q(`no process named ${name}`)}`,
      };
    },
  },
  {
    id: 'top_memory', label: 'processes using the most memory', risk: 'read',
    pattern: /\b(?:processes?|what)\b.*\b(?:memory|ram)\b|\b(?:memory|ram)\s+hogs?\b/i,
    build: (_m, _s, _memory, clause) => {
      const n = wanted(clause, 10, 1000);
      return { title: `Top ${n} processes by memory`, command: `ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n ${n + 1}` };
    },
  },
  {
    id: 'memory', label: 'memory usage', risk: 'read',
    pattern: /\b(?:memory|ram|swap)\b/i,
    build: () => ({ title: 'Memory usage', command: 'free -h' }),
  },
  {
    id: 'top_cpu', label: 'top processes', risk: 'read',
    pattern: /\b(?:top|busiest|heaviest)\s+(?:\d{1,6}\s+)?processes\b|\bprocesses?\b.*\bcpu\b|\busing\s+(?:the\s+)?(?:most\s+)?cpu\b|\bcpu\s+hogs?\b/i,
    build: (_m, _s, _memory, clause) => {
      const n = wanted(clause, 10, 1000);
      return { title: `Top ${n} processes by CPU`, command: `ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n ${n + 1}` };
    },
  },
  {
    id: 'cpu_info', label: 'CPU details', risk: 'read',
    pattern: /\bcpus?\b|\bcores?\b|\bprocessors?\b/i,
    build: () => ({ title: 'CPU details', command: 'lscpu' }),
  },
  {
    id: 'uptime', label: 'uptime and load', risk: 'read',
    pattern: /\buptime\b|\bload(?:\s+average)?\b|\bhow\s+long\b.*\bup\b|\bbeen\s+up\b/i,
    build: () => ({ title: 'Uptime and load', command: 'uptime' }),
  },
  {
    id: 'check_url', label: 'check a URL', risk: 'read',
    pattern: /\b(https?:\/\/[^\s,;"'`]+)/i,
    build: (m) => {
      let url: URL;
      try {
        url = new URL(trimSentenceEnd(m[1]!));
      } catch {
        return null;
      }
      return { title: `Check ${url.href}`, command: `curl -sS -o /dev/null --max-time 15 -w 'HTTP %{http_code} in %{time_total} s\\n' -- ${q(url.href)}` };
    },
  },
  {
    id: 'package_installed', label: 'is a package installed', risk: 'read',
    pattern: new RegExp(`\\bis\\s+(?:the\\s+)?(?:package\\s+)?${NAME}\\s+installed\\b`, 'i'),
    build: (m, server) => ({ title: `Is ${m[1]} installed`, command: packageCommand(server, 'installed', q(m[1]!.toLowerCase())) }),
  },
  {
    id: 'upgradable', label: 'pending package updates', risk: 'read',
    pattern: /\b(?:pending|available|list|show|which)\b.*\b(?:updates|upgrades|upgradable|upgradeable)\b|\bupgradable\b/i,
    build: (_m, server) => ({ title: 'Pending package updates', command: packageCommand(server, 'upgradable') }),
  },
  {
    id: 'update_packages', label: 'update all packages', risk: 'change',
    pattern: /\b(?:update|upgrade|patch)\s+(?:all\s+)?(?:the\s+)?(?:system|packages|os|server|everything)\b/i,
    build: (_m, server) => ({ title: 'Update all packages', command: packageCommand(server, 'upgrade') }),
  },
  {
    id: 'install_package', label: 'install a package', risk: 'change',
    pattern: new RegExp(`\\binstall\\s+(?:the\\s+)?(?:package\\s+)?${NAME}`, 'i'),
    build: (m, server) => ({ title: `Install ${m[1]!.toLowerCase()}`, command: packageCommand(server, 'install', q(m[1]!.toLowerCase())) }),
  },
  {
    id: 'remove_package', label: 'remove a package', risk: 'change',
    pattern: new RegExp(`\\b(?:uninstall|remove)\\s+(?:the\\s+)?(?:package\\s+)?${NAME}`, 'i'),
    build: (m, server) => (NOT_A_PACKAGE.has(m[1]!.toLowerCase()) ? null : { title: `Remove ${m[1]!.toLowerCase()}`, command: packageCommand(server, 'remove', q(m[1]!.toLowerCase())) }),
  },
  serviceIntent('restart', 'restart|bounce'),
  serviceIntent('reload', 'reload'),
  serviceIntent('start', 'start'),
  serviceIntent('stop', 'stop'),
  serviceIntent('enable', 'enable'),
  serviceIntent('disable', 'disable'),
  {
    id: 'service_active', label: 'check that a service runs', risk: 'read',
    pattern: new RegExp(`\\b(?:check|verify|confirm|make\\s+sure|ensure)\\s+(?:that\\s+)?(?:the\\s+)?(?:service\\s+)?${NAME}\\s+(?:service\\s+)?(?:is\\s+)?(?:running|runs|up|active|alive|started)\\b`, 'i'),
    build: (m, server, memory) => {
      const name = serviceName(m[1], memory);
      return name ? { title: `Check that ${name} runs`, command: serviceCommand(server, 'is-active', q(name)) } : null;
    },
  },
  {
    id: 'service_running', label: 'is a process running', risk: 'read',
    pattern: new RegExp(`\\b(?:is|are)\\s+${NAME}\\s+(?:running|up|alive)\\b|\\bprocesses\\s+(?:named|called|matching)\\s+${NAME}`, 'i'),
    build: (m) => ({ title: `Processes named ${m[1] ?? m[2]}`, command: `pgrep -a -- ${q((m[1] ?? m[2])!)} || echo 'no such process running'` }),
  },
  {
    id: 'service_status', label: 'status of a service', risk: 'read',
    pattern: new RegExp(`\\bstatus\\s+of\\s+(?:the\\s+)?(?:service\\s+)?${NAME}|\\b(?!(?:the|its|their|a|an|show|check|get|what)\\b)${NAME}\\s+status\\b|\\b(?:its|their)\\s+status\\b|\\bstatus\\b`, 'i'),
    build: (m, server, memory) => {
      const name = serviceName(m[1] ?? m[2], memory);
      return name ? { title: `Status of ${name}`, command: serviceCommand(server, 'status', q(name)) } : null;
    },
  },
  {
    id: 'kill_process', label: 'stop a process by PID', risk: 'change',
    pattern: /\bkill\s+(?:process\s+)?(?:pid\s+)?(\d{2,10})\b/i,
    build: (m, server) => ({ title: `Stop process ${m[1]}`, command: privileged(server, `kill ${m[1]}`) }),
  },
  {
    id: 'show_file', label: 'show a file', risk: 'read',
    pattern: new RegExp(`\\b(?:show|cat|print|display|read|open|contents\\s+of)\\s+(?:me\\s+)?(?:the\\s+)?(?:contents\\s+of\\s+)?(?:the\\s+)?(?:file\\s+)?${PATH}`, 'i'),
    build: (m, _s, memory) => {
      const path = pathOf(m[1], memory)!;
      return { title: `Contents of ${path}`, command: `head -c 65536 -- ${q(path)}` };
    },
  },
  {
    id: 'list_dir', label: 'list a directory', risk: 'read',
    pattern: new RegExp(`\\b(?:list|ls)\\s+(?:the\\s+)?(?:files\\s+in\\s+|directory\\s+|folder\\s+)?${PATH}`, 'i'),
    build: (m, _s, memory) => {
      const path = pathOf(m[1], memory)!;
      return { title: `Files in ${path}`, command: `ls -la -- ${q(path)}` };
    },
  },
  {
    id: 'os_version', label: 'OS version', risk: 'read',
    pattern: /\b(?:os|operating\s+system|distribution|distro|release)\b/i,
    build: () => ({ title: 'Operating system', command: 'cat /etc/os-release' }),
  },
  {
    id: 'kernel', label: 'kernel version', risk: 'read',
    pattern: /\bkernel\b/i,
    build: () => ({ title: 'Kernel', command: 'uname -a' }),
  },
  {
    id: 'logged_in', label: 'who is logged in', risk: 'read',
    pattern: /\bwho\s+is\s+(?:logged\s+in|on)\b|\blogged[-\s]in\s+users\b|\bwho(?:'s)?\s+logged\b|\bsessions\b/i,
    build: () => ({ title: 'Logged-in users', command: 'who' }),
  },
  {
    id: 'hostname', label: 'hostname', risk: 'read',
    pattern: /\bhostname\b|\bhost\s+name\b/i,
    build: () => ({ title: 'Hostname', command: 'hostname' }),
  },
  {
    id: 'server_time', label: 'time on the server', risk: 'read',
    pattern: /\b(?:date|time|clock|timezone)\b/i,
    build: () => ({ title: 'Time on the server', command: 'date; date -u' }),
  },
  {
    id: 'ip_addresses', label: 'IP addresses', risk: 'read',
    pattern: /\bip\s+(?:address(?:es)?|addrs?)\b|\bnetwork\s+interfaces\b|\binterfaces\b/i,
    build: () => ({ title: 'IP addresses', command: 'ip -brief address' }),
  },
  {
    id: 'routes', label: 'routing table', risk: 'read',
    pattern: /\broutes?\b|\brouting\s+table\b|\bdefault\s+gateway\b/i,
    build: () => ({ title: 'Routing table', command: 'ip route' }),
  },
  {
    id: 'resolve', label: 'resolve a host name', risk: 'read',
    pattern: /\b(?:resolve|dns\s+(?:lookup\s+)?(?:for|of)|look\s*up)\s+([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\b/i,
    build: (m) => ({ title: `Resolve ${m[1]}`, command: `getent ahosts ${q(m[1]!.toLowerCase())}` }),
  },
  {
    id: 'ping', label: 'ping a host', risk: 'read',
    pattern: /\bping\s+([a-z0-9][a-z0-9.:-]*)\b/i,
    build: (m) => ({ title: `Ping ${m[1]}`, command: `ping -c 4 -W 2 -- ${q(m[1]!.toLowerCase())}` }),
  },
  {
    id: 'containers', label: 'running containers', risk: 'read',
    pattern: /\bcontainers?\b|\bdocker\s+ps\b/i,
    build: () => ({ title: 'Containers', command: 'docker ps --all' }),
  },
  {
    id: 'cron', label: 'cron jobs', risk: 'read',
    pattern: /\bcron(?:tab)?\b|\bscheduled\s+jobs\b/i,
    build: () => ({ title: 'Cron jobs', command: "crontab -l 2>/dev/null || echo 'no crontab for this user'; ls /etc/cron.d" }),
  },
];
