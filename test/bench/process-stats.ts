import { readdirSync, readFileSync } from 'node:fs';
import type { ManagedProcess } from '../../src/embedded/child-process';
import type { BenchMode } from './split-worker';

/*
 * What a bench's own processes cost, read from /proc by pid: CPU (utime + stime, and for a daemon
 * the children it has reaped) and peak RSS (VmRSS sampled). By pid, not by name: other engineers'
 * mongod and Temporal on the same machine are not the bench's.
 */

/** USER_HZ: /proc/<pid>/stat counts CPU in these ticks. */
const TICKS_PER_SECOND = 100;

export interface Watched {
  /** e.g. "node (API + worker)", "mongod", "temporal", "sshd + step shells". */
  name: string;
  /** The processes whose CPU counts (a daemon's are it and its live descendants, read each time). */
  pids: () => number[];
  /** Whether the CPU of reaped children counts too (a daemon's ended sessions). */
  withChildren: boolean;
}

/** The fields after the command name of /proc/<pid>/stat (field 3 onwards), or null when it is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU seconds of one process: utime + stime, and cutime + cstime when its reaped children count. */
function cpuOf(pid: number, withChildren: boolean): number {
  const f = statFields(pid);
  if (!f) return 0;
  const own = Number(f[11]) + Number(f[12]);
  return (withChildren ? own + Number(f[13]) + Number(f[14]) : own) / TICKS_PER_SECOND;
}

/** Every live process below these pids. */
export function descendantsOf(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (!f) continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number) => (children.get(pid) ?? []).forEach((child) => (found.push(child), walk(child)));
  roots.forEach(walk);
  return found;
}

/** CPU seconds of each watched process (group) now. */
export function cpuNow(watched: Watched[]): Map<string, number> {
  return new Map(watched.map((w) => [w.name, w.pids().reduce((sum, pid) => sum + cpuOf(pid, w.withChildren), 0)]));
}

/** CPU seconds each used between two readings. */
export const cpuBetween = (before: Map<string, number>, after: Map<string, number>) =>
  new Map([...after].map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)]));

/** VmRSS in bytes, or 0 when the process is gone. */
export function rssOf(pid: number): number {
  try {
    const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kib ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Samples the RSS of the watched processes (summed per group) every 200 ms until stopped: each one's peak. */
export function rssPeaks(watched: Watched[], everyMs = 200): { stop: () => Map<string, number> } {
  const peaks = new Map<string, number>();
  const sample = () => {
    for (const w of watched) peaks.set(w.name, Math.max(peaks.get(w.name) ?? 0, w.pids().reduce((sum, pid) => sum + rssOf(pid), 0)));
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

/** The global setup's services (test/support/global-setup.ts keeps them on globalThis for the teardown). */
interface BenchServices {
  mongo: { process: ManagedProcess };
  temporal: { process: ManagedProcess };
}

/**
 * Bosun's node process(es) as the bench runs them (split-worker.ts): this one with both roles; this one's API beside a worker
 * process (`pid`); or a process of its own with both roles (`pid`; this one's API, kept for the bench's tokens, not counted).
 * Then the bench's mongod and its Temporal dev server.
 */
export function bosunProcesses(mode: BenchMode, pid?: number): Watched[] {
  const services = (globalThis as { __bosunServices?: BenchServices }).__bosunServices;
  if (!services) throw new Error('the global setup has not started the services');
  const pidOf = (p: ManagedProcess) => () => [p.child.pid!];
  const node: Record<BenchMode, Watched[]> = {
    'in-process': [{ name: NODE_BOTH, pids: () => [process.pid], withChildren: false }],
    split: [
      { name: NODE_API, pids: () => [process.pid], withChildren: false },
      { name: NODE_WORKER, pids: () => [pid!], withChildren: false },
    ],
    process: [{ name: NODE_BOTH, pids: () => [pid!], withChildren: false }],
  };
  return [
    ...node[mode],
    { name: 'mongod', pids: pidOf(services.mongo.process), withChildren: false },
    { name: 'temporal', pids: pidOf(services.temporal.process), withChildren: false },
  ];
}

/** Private sshds and everything below them (sessions, the steps' shells; ended ones through the reaped children's CPU). */
export function sshdProcesses(daemonPids: () => number[]): Watched {
  return { name: 'sshd + step shells', pids: () => [...daemonPids(), ...descendantsOf(daemonPids())], withChildren: true };
}

/** The names under which Bosun's node process(es) are reported: one process with both roles, or each role's own. */
export const NODE_BOTH = 'node (API + worker)';
export const NODE_API = 'node (API)';
export const NODE_WORKER = 'node (worker)';

/**
 * CPU seconds used by the threads of this process (or of `pid`: the worker's): the main JS thread, Temporal's core (tokio), the
 * libuv pool, grouped by name; the threads Node names "node" (the workflow threads and V8's helpers
 * alike) one by one, so the workflow thread shows as the busiest of them.
 */
export function threadCpu(pid = process.pid): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = Number(tid) === pid ? 'main (JS)' : comm === 'node' ? `thread ${tid}` : comm.replace(/\d+$/, '#');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}
