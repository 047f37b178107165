import { privileged } from './os-family';
import { trimSentenceEnd } from './phrases';
import { shellQuote as q } from '../shell';
import { wanted } from './clause';
import type { StepBuilder } from './intent';

/* The steps of the intents about the machine, its processes and its network; each reads the groups its pattern in intents.ts captures. */

export const reboot: StepBuilder = (_m, server) => ({ title: 'Reboot the server', command: privileged(server, 'reboot') });

/** port_owner: m[1] the port. */
export const portOwner: StepBuilder = (m) => {
  const port = Number(m[1]);
  return port >= 1 && port <= 65535 ? { title: `What is listening on port ${port}`, command: `ss -tulpn 'sport = :${port}'` } : null;
};

/** process_usage: m[1] or m[2] the process's name. */
export const processUsage: StepBuilder = (m) => {
  const name = (m[1] ?? m[2])!.toLowerCase();
  return {
    title: `Memory and CPU of processes named ${name}`,
    command: `pids=$(pgrep -d, -- ${q(name)}) && ps -o pid,user,%cpu,%mem,rss,etime,args -p "$pids" || echo ${q(`no process named ${name}`)}`,
  };
};

export const topMemory: StepBuilder = (_m, _s, _memory, clause) => {
  const n = wanted(clause, 10, 1000);
  return { title: `Top ${n} processes by memory`, command: `ps -eo pid,user,%cpu,%mem,etime,args --sort=-%mem | head -n ${n + 1}` };
};

export const topCpu: StepBuilder = (_m, _s, _memory, clause) => {
  const n = wanted(clause, 10, 1000);
  return { title: `Top ${n} processes by CPU`, command: `ps -eo pid,user,%cpu,%mem,etime,args --sort=-%cpu | head -n ${n + 1}` };
};

/** service_running: m[1] or m[2] the process's name. */
export const processesNamed: StepBuilder = (m) => ({ title: `Processes named ${m[1] ?? m[2]}`, command: `pgrep -a -- ${q((m[1] ?? m[2])!)} || echo 'no such process running'` });

/** kill_process: m[1] the PID. */
export const killProcess: StepBuilder = (m, server) => ({ title: `Stop process ${m[1]}`, command: privileged(server, `kill ${m[1]}`) });

/** check_url: m[1] the URL (null when it is none). */
export const checkUrl: StepBuilder = (m) => {
  let url: URL;
  try {
    url = new URL(trimSentenceEnd(m[1]!));
  } catch {
    return null;
  }
  return { title: `Check ${url.href}`, command: `curl -sS -o /dev/null --max-time 15 -w 'HTTP %{http_code} in %{time_total} s\\n' -- ${q(url.href)}` };
};

/** resolve: m[1] the host name. */
export const resolveHost: StepBuilder = (m) => ({ title: `Resolve ${m[1]}`, command: `getent ahosts ${q(m[1]!.toLowerCase())}` });

/** ping: m[1] the host. */
export const pingHost: StepBuilder = (m) => ({ title: `Ping ${m[1]}`, command: `ping -c 4 -W 2 -- ${q(m[1]!.toLowerCase())}` });
