import { logsHaveTimes, packageCommand, privileged, serviceCommand, serviceLogCommand } from './os-family';
import { MIGRATION_INTENTS } from './migration-intents';
import { NAME, PATH, trimSentenceEnd } from './phrases';
import { shellQuote as q } from '../shell';
import type { PlanContext, PlannedStep, Planner, PlanResult, Risk, ServerContext, StepTarget } from './types';

const SERVICE_WORDS = new Set(['service', 'the', 'it', 'its', 'server', 'machine', 'system', 'all', 'a', 'an', 'please', 'them', 'that', 'this', 'status', 'logs', 'log']);

/** Names already mentioned, so "restart nginx and show its status" knows what "its" is. */
interface Memory {
  service: string | null;
  path: string | null;
}

interface Intent {
  id: string;
  /** What it is for, listed when a sentence cannot be planned. */
  label: string;
  risk: Risk;
  pattern: RegExp;
  /** The step for a matching clause (the whole clause too: counts such as "top 5" live anywhere in it), or null when it cannot be planned. */
  build(match: RegExpMatchArray, server: ServerContext, memory: Memory, clause: string): { title: string; command: string } | null;
}

const serviceName = (raw: string | undefined, memory: Memory): string | null => {
  const name = raw?.toLowerCase();
  if (name && !SERVICE_WORDS.has(name)) {
    memory.service = name.replace(/\.service$/, '');
    return memory.service;
  }
  return memory.service;
};

const pathOf = (raw: string | undefined, memory: Memory): string | null => {
  // A sentence's full stop, or the ")" closing a remark, is not part of the path.
  if (raw) memory.path = trimSentenceEnd(raw);
  return memory.path;
};

const count = (raw: string | undefined, fallback: number, max = 10_000) => Math.min(max, Math.max(1, Number(raw ?? fallback) || fallback));

const TIME_UNIT = '(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)';

/** How many the clause asks for ("top 5", "the 10 largest", "last 200 lines", "20 processes"), or the fallback; "the last 2 hours" is a time, not a count. */
function wanted(clause: string, fallback: number, max: number): number {
  const asked =
    new RegExp(`\\b(?:top|first|last|latest|largest|biggest|busiest)\\s+(\\d{1,6})\\b(?!\\s*${TIME_UNIT}\\b)`, 'i').exec(clause) ??
    /\b(\d{1,6})\s+(?:largest|biggest|busiest|heaviest|most|top|processes|files|directories|folders|lines|entries|errors|messages)\b/i.exec(clause);
  return count(asked?.[1], fallback, max);
}

/** A time window the clause asks for ("in the last 2 hours", "since yesterday", "today"): as said, and as journalctl's --since/--until. */
interface TimeWindow {
  said: string;
  since: string;
  until?: string;
}

function timeWindow(clause: string): TimeWindow | null {
  const units: Record<string, string> = { sec: 'second', min: 'minute', hr: 'hour' };
  const relative = new RegExp(`\\b(?:(?:in|from|for|over|during|within)\\s+)?(?:the\\s+)?(?:last|past)\\s+(?:(\\d{1,4})\\s+)?(${TIME_UNIT})\\b`, 'i').exec(clause);
  if (relative) {
    const n = Number(relative[1] ?? 1);
    const word = relative[2]!.toLowerCase().replace(/s$/, '');
    const unit = units[word] ?? word;
    return { said: relative[0].trim(), since: `${n} ${unit}${n === 1 ? '' : 's'} ago` };
  }
  const since = /\bsince\s+(yesterday|today|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?)\b/i.exec(clause);
  if (since) return { said: since[0], since: since[1]!.toLowerCase() };
  if (/\btoday\b/i.test(clause)) return { said: 'today', since: 'today' };
  if (/\byesterday\b/i.test(clause)) return { said: 'yesterday', since: 'yesterday', until: 'today' };
  return null;
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
const INTENTS: Intent[] = [
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

/** Splits a sentence into clauses, one request each: "restart nginx and show its status". */
export const clauses = (sentence: string) =>
  sentence
    .split(/\s*(?:[;\n]|,\s*(?:and\s+)?(?:then\s+)?|\band\s+then\b|\bthen\b|\band\s+also\b|\balso\b|\band\b(?!\s+restore\b)|\bafterwards\b)\s*/i)
    .map((c) => c.trim().replace(/[.!?]+$/, ''))
    .filter((c) => c.length > 0 && !/^(?:please|thanks?|thank you|ok|okay)$/i.test(c));

/** "on the source", "on the target", "on both": where a migration plan's step runs (the target by default). */
function targetsOf(clause: string, context: PlanContext): StepTarget[] {
  if (context.kind === 'server') return ['server'];
  if (/\b(?:on|from|at)\s+both\b|\bboth\s+servers\b|\beach\s+server\b/i.test(clause)) return ['source', 'target'];
  if (/\b(?:on|from|at|of)\s+(?:the\s+)?(?:source|old)\b/i.test(clause)) return ['source'];
  return ['target'];
}

const serverFor = (target: StepTarget, context: PlanContext): ServerContext =>
  context.kind === 'server' ? context.server : target === 'source' ? context.source : context.target;

/** What the built-in planner understands, for the message when a sentence is not among it. */
export const CATALOGUE = [...INTENTS, ...MIGRATION_INTENTS].map((i) => ({ id: i.id, label: i.label, risk: i.risk }));

/**
 * The built-in planner: no network, a catalogue of common operations matched clause by clause,
 * with names, paths, ports and URLs taken from the sentence (each quoted for the shell) and
 * commands adapted to the server's OS family.
 */
export class RulesPlanner implements Planner {
  readonly name = 'rules';

  async plan(instruction: string, context: PlanContext): Promise<PlanResult> {
    const steps: PlannedStep[] = [];
    const memory: Memory = { service: null, path: null };
    for (const clause of clauses(instruction)) {
      const migration = MIGRATION_INTENTS.find((i) => i.pattern.test(clause));
      if (migration) {
        const built = context.kind === 'migration_plan' ? migration.build(clause.match(migration.pattern)!, context) : null;
        if (!built) return { ok: false, reason: unplannable(clause, context.kind === 'server' ? `"${migration.label}" needs a migration plan (a conversation about its two servers).` : null) };
        steps.push({ ...built, title: `${built.title}${unused(clause, built, context.kind === 'migration_plan' ? context.target : context.server)}`, target: 'target', risk: migration.risk });
        continue;
      }
      const intent = INTENTS.find((i) => i.pattern.test(clause));
      const match = intent && clause.match(intent.pattern);
      const targets = targetsOf(clause, context);
      // Asked to destroy something no intent names exactly: refused for what it is, never planned as something else.
      if ((!intent || intent.risk !== 'destructive') && DESTRUCTIVE_VERB.test(clause)) return { ok: false, reason: refusedDestructive(clause), risk: 'destructive' };
      const built = intent && match ? targets.map((target) => ({ target, step: intent.build(match, serverFor(target, context), memory, clause) })) : [];
      if (!intent || built.some((b) => b.step === null)) return { ok: false, reason: unplannable(clause) };
      for (const { target, step } of built) {
        // "uptime and load" is one request said twice.
        if (steps.some((s) => s.command === step!.command && s.target === target)) continue;
        const where = context.kind === 'migration_plan' ? ` on the ${target}` : '';
        steps.push({ title: `${step!.title}${where}${unused(clause, step!, serverFor(target, context))}`, command: step!.command, target, risk: intent.risk });
      }
    }
    if (!steps.length) return { ok: false, reason: unplannable(instruction) };
    return { ok: true, steps };
  }
}

/** Words that ask to destroy something: never read as another request ("delete the nginx logs" is not "show the nginx logs"). */
const DESTRUCTIVE_VERB = /\b(?:delete|erase|wipe|destroy|truncate|shred|purge|format|drop|rm)\b/i;

function refusedDestructive(clause: string): string {
  return [
    `Refused as destructive: "${clause}" asks to delete or destroy something, and the built-in planner plans that only for a path it can name exactly ("delete /var/log/old.log", "delete everything in /tmp/build"), which the organization's command policy then judges.`,
    'It never guesses at a destructive command. Name the path, or configure an LLM planner (LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; see docs/conversations.md).',
  ].join('\n');
}

function unplannable(clause: string, why: string | null = null): string {
  return [
    `Not understood: the built-in planner could not turn "${clause}" into a command.${why ? ` ${why}` : ''}`,
    `It understands ${CATALOGUE.length} operations: ${INTENTS.map((i) => i.label).join(', ')}; and for migration plans: ${MIGRATION_INTENTS.map((i) => i.label).join(', ')}.`,
    'Rephrase the instruction, or configure an LLM planner (LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; see docs/conversations.md).',
  ].join('\n');
}

/** Words after "of", "for", "named"... that name nothing a command could use ("the status of the server", "for me"). */
const NOT_NAMES = new Set([
  ...SERVICE_WORDS, 'me', 'us', 'you', 'my', 'our', 'your', 'last', 'past', 'next', 'whole', 'entire', 'every', 'each', 'now', 'today', 'yesterday',
  'host', 'box', 'user', 'users', 'process', 'processes', 'directory', 'folder', 'file', 'files', 'disk', 'disks', 'usage', 'memory', 'ram', 'cpu',
  'source', 'target', 'both', 'old', 'new', 'real', 'example', 'errors', 'error', 'minutes', 'hours', 'days', 'details', 'info', 'information', 'these', 'those',
]);

/**
 * A number, a path, a time window or a name of the clause that the step does not use (neither its
 * command nor its title mentions it): said in the title, so a person sees the step does not do what
 * was asked ("uptime of web-2" run on web-1, "containers named web", "ping 127.0.0.1 10 times").
 */
function unused(clause: string, step: { title: string; command: string }, server: ServerContext): string {
  const said = `${step.title} ${step.command}`.toLowerCase();
  const pathPattern = new RegExp(PATH, 'g');
  const paths = [...clause.matchAll(pathPattern)].map((m) => trimSentenceEnd(m[1]!)).filter((p) => p.length > 1);
  const rest = clause.replace(pathPattern, ' ').replace(/\bhttps?:\/\/\S+/gi, ' ');
  const window = timeWindow(rest);
  const withoutWindow = window ? rest.replace(window.said, ' ') : rest;
  // Whole numbers and dotted addresses, not the digits inside a name such as web-2.
  const numbers = [...withoutWindow.matchAll(/(?<![\w.@-])(\d+(?:\.\d+)*)(?![\w@-]|\.\w)/g)].map((m) => m[1]!);
  const names = [...withoutWindow.matchAll(/\b(?:of|for|named|called|matching|as|to|on)\s+(?:the\s+)?(?:user\s+|service\s+|interface\s+|host\s+|server\s+)?([a-z0-9][a-z0-9@._-]*)/gi)]
    .map((m) => m[1]!)
    .filter((name) => !NOT_NAMES.has(name.toLowerCase()) && !/^\d+(?:\.\d+)*$/.test(name) && name.toLowerCase() !== server.title.toLowerCase());
  // Said as a whole: "3" is not said by "8443", nor "/var" by "/var/log".
  const mentions = (value: string) => new RegExp(`(?<![\\w.-])${value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-]|\\.\\w)`).test(said);
  const dropped = [...new Set([...paths, ...(window ? [window.said] : []), ...numbers, ...names])].filter((value) => !mentions(value));
  return dropped.length ? ` (this command does not use ${dropped.map((v) => `"${v}"`).join(', ')})` : '';
}
