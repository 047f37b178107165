import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** SIGTERM, then SIGKILL after the grace period. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * On Linux, util-linux's `setpriv --pdeathsig` makes the kernel send the service SIGTERM when Bosun
 * dies, however it dies (even a SIGKILL, which runs no handler): no service outlives the process that
 * started it. setpriv then execs the service, so the pid is the service's own.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => process.platform === 'linux' && existsSync(candidate));

/**
 * Starts a service in its own process group, its output appended to a log file: Ctrl-C in the
 * terminal reaches Bosun alone, which then stops the services in order. If Bosun dies without
 * stopping it, the service is sent SIGTERM (see SETPRIV; elsewhere the next start reaps it).
 */
export function startProcess(name: string, file: string, args: string[], logFile: string): ManagedProcess {
  const log = openSync(logFile, 'a');
  const [command, commandArgs] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'TERM', '--', file, ...args]] : [file, args];
  const child = spawn(command, commandArgs, { detached: true, stdio: ['ignore', log, log] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  return {
    name,
    child,
    logFile,
    async stop(graceMs = 15_000) {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts a service and waits until ready() says so. onSpawn learns the pid at once, before readiness,
 * so a crash meanwhile does not leave the service untracked; a service that never gets ready is stopped.
 */
export async function startService(options: {
  name: string;
  file: string;
  args: string[];
  logFile: string;
  ready: () => Promise<boolean>;
  timeoutMs: number;
  onSpawn?: (pid: number) => void;
}): Promise<ManagedProcess> {
  const proc = startProcess(options.name, options.file, options.args, options.logFile);
  options.onSpawn?.(proc.child.pid!);
  try {
    await waitUntil(proc, options.ready, options.timeoutMs);
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return proc;
}

/** Polls until ready() resolves true, or fails with what went wrong (including an early exit). */
async function waitUntil(
  what: ManagedProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (what.child.exitCode !== null) {
      throw new Error(`${what.name} exited with code ${what.child.exitCode}; see ${what.logFile}`);
    }
    try {
      if (await ready()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what.name} was not ready after ${timeoutMs} ms (${(lastError as Error)?.message ?? 'no answer'}); see ${what.logFile}`);
}
