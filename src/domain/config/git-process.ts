import { spawn } from 'node:child_process';

export interface Finished {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Killed at the deadline. */
  timedOut: boolean;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  /** When the command is killed (epoch ms). */
  deadline: number;
  signal?: AbortSignal;
  cwd?: string;
  input?: string;
}

/** Enough of git's stderr to say why it failed; a runaway remote cannot fill memory with it. */
const MAX_STDERR = 64 * 1024;

/**
 * Runs a command in a process group of its own, so that the deadline or an abort kills what it
 * started too (git's ssh, git's remote helpers), not only the command.
 */
export function run(command: string, args: string[], options: RunOptions): Promise<Finished> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(options.signal.reason);
      return;
    }
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, Math.max(0, options.deadline - Date.now()));
    options.signal?.addEventListener('abort', killGroup, { once: true });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString('utf8');
    });
    // A command that exits before reading all its input must not fail the run with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', killGroup);
      if (options.signal?.aborted) reject(options.signal.reason);
      else resolve({ code, stdout: Buffer.concat(stdout), stderr, timedOut });
    });
  });
}
