import { StringDecoder } from 'node:string_decoder';
import type { NodeSSH } from 'node-ssh';
import { SshError } from './errors';
import { shellQuote } from '../shell';
import { runRecorded, type CommandPurpose, type CommandRecorder } from '../audit/commands';

/** POSIX double-quoting, for a script inside a single-quoted one. */
const doubleQuote = (text: string) => `"${text.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;

/** A name a remote environment variable may have (and a wrapper may write unquoted). */
export const ENVIRONMENT_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * The remote wrapper: the command and everything it starts share one process group we can kill;
 * its id is reported first on stderr, then the command is evaluated in that same shell with no
 * positional parameters, stderr merged into stdout so output keeps the order it was produced in.
 * OpenSSH starts the login shell as a session (and process group) leader and `exec sh` keeps its
 * pid, so the shell usually leads its group already, which /proc says (field 5 of its stat): then
 * no new session is needed. Otherwise (another SSH server, no /proc) `setsid` makes one.
 *
 * `environment` is exported to the command. Its values travel as positional arguments, quoted once
 * for the remote shell, and are only ever expanded inside double quotes: never parsed as code, so
 * `$(…)`, quotes or newlines in a value stay text (sshd's AcceptEnv would refuse them anyway).
 */
export const inProcessGroup = (command: string, { mergeStderr, environment = {} }: { mergeStderr: boolean; environment?: Record<string, string> }) => {
  const names = Object.keys(environment);
  for (const name of names) if (!ENVIRONMENT_NAME.test(name)) throw new Error(`Not an environment variable name: ${name}`);
  const exported = names.map((name, index) => `export ${name}="\${${index + 1}}"; `).join('');
  const run = `__bosun_command=$1; shift; ${exported}set --; echo "bosun-pgid:$$" >&2; ${mergeStderr ? 'exec 2>&1; ' : ''}eval "$__bosun_command"`;
  const script =
    `__bosun_group=; { read -r _ _ _ _ __bosun_group _ < /proc/$$/stat; } 2>/dev/null; ` +
    `if [ "$__bosun_group" != "$$" ]; then exec setsid -w sh -c ${doubleQuote(run)} bosun-step "$@"; fi; ${run}`;
  const args = [command, ...names.map((name) => environment[name]!)].map(shellQuote).join(' ');
  return `exec sh -c ${shellQuote(script)} bosun-step ${args}`;
};

const PGID_LINE = /(?:^|\n)bosun-pgid:(\d+)\n/;

/** The process group id the wrapper reported on stderr, and the stderr around its line; null until the line is whole. */
export function processGroupLine(stderr: string): { pgid: number; rest: string } | null {
  const match = PGID_LINE.exec(stderr);
  if (!match) return null;
  const before = stderr.slice(0, match.index + (match[0].startsWith('\n') ? 1 : 0));
  return { pgid: Number(match[1]), rest: before + stderr.slice(match.index + match[0].length) };
}

export interface RemoteResult {
  exitCode: number | null;
  signal: string | null;
}

export interface RemoteCommandOptions {
  /** Exported to the command (names ENVIRONMENT_NAME). */
  environment?: Record<string, string>;
  onOutput: (text: string) => void;
  onProcessGroup: (pgid: number) => void;
}

/**
 * Runs a command in its own process group, streaming its combined output as text (never buffered
 * whole: a step may print gigabytes). A channel that closes without an exit status means the
 * connection was lost, which is a transport failure, not a result.
 */
export function runInProcessGroup(ssh: NodeSSH, command: string, options: RemoteCommandOptions): Promise<RemoteResult> {
  const connection = ssh.connection;
  if (!connection) return Promise.reject(new SshError('transport', 'Not connected'));
  return new Promise((resolve, reject) => {
    connection.exec(inProcessGroup(command, { mergeStderr: true, environment: options.environment }), (error, channel) => {
      if (error) return reject(new SshError('transport', `Could not start the command: ${error.message}`));
      const stdout = new StringDecoder('utf8');
      let stderrText = '';
      let pgidSeen = false;
      let exit: RemoteResult | null = null;
      channel.on('data', (chunk: Buffer) => {
        const text = stdout.write(chunk);
        if (text) options.onOutput(text);
      });
      channel.stderr.on('data', (chunk: Buffer) => {
        if (pgidSeen) return options.onOutput(chunk.toString('utf8'));
        stderrText += chunk.toString('utf8');
        // Anything the login shell printed first (a locale warning, say) is output like the rest.
        const found = processGroupLine(stderrText);
        if (!found) return;
        pgidSeen = true;
        options.onProcessGroup(found.pgid);
        if (found.rest) options.onOutput(found.rest);
      });
      channel.on('exit', (code: number | null, signal?: string) => {
        exit = { exitCode: code ?? null, signal: signal ?? null };
      });
      channel.on('close', () => {
        const tail = stdout.end();
        if (tail) options.onOutput(tail);
        // setsid itself failed (not installed?): whatever it said is the output.
        if (!pgidSeen && stderrText) options.onOutput(stderrText);
        if (exit) resolve(exit);
        else reject(new SshError('transport', 'The connection was lost while the command ran'));
      });
      channel.end();
    });
  });
}

/**
 * Runs one command of Bosun's own (`execCommand`: collected, no process group), in the audit trail
 * through `record` when given: its entry before it starts, its exit after.
 */
export function execRecorded(ssh: NodeSSH, command: string, record?: CommandRecorder, purpose?: CommandPurpose) {
  return runRecorded(record, command, purpose, async () => {
    const { stdout, stderr, code, signal } = await ssh.execCommand(command);
    return { stdout, stderr, exitCode: code, signal: signal ?? null };
  });
}

/**
 * Stops a process group: TERM, then KILL after a grace period if anything is left. With `record`,
 * the kill is in the audit trail like any command (a kill goes ahead when the trail cannot be
 * written, and then fails: see runRecorded).
 */
export async function killProcessGroup(ssh: NodeSSH, pgid: number, graceSeconds = 2, record?: CommandRecorder): Promise<void> {
  // No `--`: dash's kill rejects it; a negative operand right after the signal names the process group.
  const command = `kill -TERM -${pgid} 2>/dev/null || exit 0; i=0; while [ $i -lt ${graceSeconds * 10} ] && kill -0 -${pgid} 2>/dev/null; do sleep 0.1; i=$((i+1)); done; kill -KILL -${pgid} 2>/dev/null; exit 0`;
  await execRecorded(ssh, command, record, 'stop_process_group');
}
