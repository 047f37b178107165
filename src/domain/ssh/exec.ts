import { randomBytes } from 'node:crypto';
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
 *
 * With `outputFile` (its random name), the command runs with BOSUN_OUTPUT (outputFileStep).
 *
 * The login shell may be any (bash, zsh, fish, csh), so the script runs in `sh`, which the login shell
 * execs. Where the login shell is sh itself (`inLoginShell`: its path /bin/sh or /usr/bin/sh, which the
 * connection's first wrapper told with `reportShell`: sshd sets SHELL to the shell it starts) the script
 * runs in it as it is, without that second start of a shell — about 0.6 ms of the server's CPU per
 * command, a fifth of what a command costs its sshd (docs/performance.md). Either way the script's
 * shell is `sh` (its name in error messages) and the command the same.
 */
export const inProcessGroup = (
  command: string,
  {
    mergeStderr,
    environment = {},
    outputFile,
    watchChannel = false,
    inLoginShell = false,
    reportShell = false,
  }: { mergeStderr: boolean; environment?: Record<string, string>; outputFile?: string; watchChannel?: boolean; inLoginShell?: boolean; reportShell?: boolean },
) => {
  const names = Object.keys(environment);
  for (const name of names) if (!ENVIRONMENT_NAME.test(name)) throw new Error(`Not an environment variable name: ${name}`);
  const exported = names.map((name, index) => `export ${name}="\${${index + 1}}"; `).join('');
  const evaluated = outputFile ? outputFileStep(outputFile) : `${mergeStderr ? 'exec 2>&1; ' : ''}eval "$__bosun_command"`;
  const run = `__bosun_command=$1; shift; ${exported}set --; echo "bosun-pgid:$$${reportShell ? ' shell:$SHELL' : ''}" >&2; ${watchChannel ? channelWatch(evaluated) : evaluated}`;
  const script =
    `__bosun_group=; { read -r _ _ _ _ __bosun_group _ < /proc/$$/stat; } 2>/dev/null; ` +
    `if [ "$__bosun_group" != "$$" ]; then exec setsid -w sh -c ${doubleQuote(run)} sh "$@"; fi; ${run}`;
  const args = [command, ...names.map((name) => environment[name]!)].map(shellQuote).join(' ');
  return inLoginShell ? `set -- ${args}; ${script}` : `exec sh -c ${shellQuote(script)} sh ${args}`;
};

/** The login shells the wrapper runs in as they are (inProcessGroup's `inLoginShell`). */
const SH_LOGIN_SHELLS = new Set(['/bin/sh', '/usr/bin/sh']);
/** Per SSH connection (its login shell fixed at its login): whether that shell is sh; unknown until its first wrapper reported it. */
const loginShellIsSh = new WeakMap<object, boolean>();

/**
 * A step's command with BOSUN_OUTPUT. The file is named in a directory of the login's alone,
 * `${TMPDIR:-/tmp}/bosun-output-<login>` (LOGNAME as sshd sets it; made mode 0700 the first time;
 * used only while it is a directory, not a link, and the login's own, which in a sticky /tmp nobody
 * else can replace), and the command makes the file when it first writes to it: a step that writes
 * no output costs no process but a subshell. Otherwise (no login name, the directory not ours) a new
 * file of the user's alone is made beforehand in TMPDIR (mode 0600 under umask 077, in a subshell so
 * the command keeps its umask; noclobber opens it O_EXCL and its name is random, so nothing planted
 * there is followed). The command runs in a subshell (its `exit`, `exec` or traps cannot skip what
 * follows) without fd 3, the wrapper's own stderr; once it ends, a file written goes to fd 3 after
 * the line `bosun-output:<name>` (when it holds something) and is removed, and the wrapper exits
 * with the command's status. A TERM, HUP, INT or PIPE (Bosun's kill of the group, a lost channel)
 * removes the file and ends the wrapper by the same signal.
 */
function outputFileStep(name: string) {
  const traps = ['TERM', 'HUP', 'INT', 'PIPE'].map((signal) => `trap '__bosun_gone ${signal}' ${signal}; `).join('');
  const ours = '[ -d "$__bosun_dir" ] && [ ! -L "$__bosun_dir" ] && [ -O "$__bosun_dir" ]';
  return (
    `exec 3>&2 2>&1; __bosun_login=\${LOGNAME:-$USER}; __bosun_dir="\${TMPDIR:-/tmp}/bosun-output-$__bosun_login"; ` +
    `case "$__bosun_login" in ''|*/*) false;; *) ${ours} || { mkdir -m 700 -- "$__bosun_dir" 2>/dev/null && ${ours}; };; esac ` +
    `&& BOSUN_OUTPUT="$__bosun_dir/${name}" || { ` +
    `BOSUN_OUTPUT="\${TMPDIR:-/tmp}/${name}"; ` +
    `if ! (umask 077; set -C; true 2>/dev/null > "$BOSUN_OUTPUT"); then echo "--- could not create the file for BOSUN_OUTPUT ($BOSUN_OUTPUT) ---"; exit 1; fi; }; ` +
    `__bosun_gone() { rm -f -- "$BOSUN_OUTPUT"; trap - "$1"; kill -"$1" $$; }; ${traps}` +
    `export BOSUN_OUTPUT; (eval "$__bosun_command") 3>&-; __bosun_status=$?; ` +
    `if [ -e "$BOSUN_OUTPUT" ]; then if [ -s "$BOSUN_OUTPUT" ]; then echo "bosun-output:${name}" >&3; cat -- "$BOSUN_OUTPUT" >&3; fi; rm -f -- "$BOSUN_OUTPUT"; fi; exit $__bosun_status`
  );
}

/**
 * A command that outlives its SSH channel stops: the channel's stdin stays open while the command
 * runs (Bosun sends no EOF), and a background subshell of the group waits on it; when
 * sshd closes it — the connection lost, the worker that held it killed — the subshell ends the whole
 * group (TERM), as a kill of Bosun's own would. Without it a command that writes nothing (no SIGPIPE;
 * no tty, so no SIGHUP) ran on unseen, and could finish on its own beside the attempt that runs it
 * again. The command reads /dev/null (it read an immediate EOF before); the watcher is killed (a
 * builtin) when the wrapper exits, holds none of the channel's output, and kills nothing once the
 * wrapper is gone (what a step started in the background on purpose stays).
 */
function channelWatch(evaluated: string) {
  // An asynchronous list's stdin is /dev/null in sh: the watcher reads the channel through fd 4.
  return (
    `exec 4<&0 </dev/null; { while read -r _ <&4; do :; done; kill -0 $$ && kill -TERM -$$; } >/dev/null 2>&1 & __bosun_watch=$!; exec 4<&-; ` +
    `trap 'kill $__bosun_watch 2>/dev/null' EXIT; ${evaluated}`
  );
}

const PGID_LINE = /(?:^|\n)bosun-pgid:(\d+)(?: shell:([^\n]*))?\n/;

/** The process group id the wrapper reported on stderr (and the login shell, when asked), and the stderr around its line; null until the line is whole. */
export function processGroupLine(stderr: string): { pgid: number; rest: string; shell?: string } | null {
  const match = PGID_LINE.exec(stderr);
  if (!match) return null;
  const before = stderr.slice(0, match.index + (match[0].startsWith('\n') ? 1 : 0));
  return { pgid: Number(match[1]), rest: before + stderr.slice(match.index + match[0].length), ...(match[2] !== undefined ? { shell: match[2] } : {}) };
}

export interface RemoteResult {
  exitCode: number | null;
  signal: string | null;
  /** With `outputFile`: what the command wrote to BOSUN_OUTPUT (empty when nothing), cut at its limit (`overflow`). */
  outputFile?: { text: string; overflow: boolean };
}

export interface RemoteCommandOptions {
  /** Exported to the command (names ENVIRONMENT_NAME). */
  environment?: Record<string, string>;
  /** Give the command BOSUN_OUTPUT, and read back at most `limitBytes` of what it wrote there. */
  outputFile?: { limitBytes: number };
  onOutput: (text: string) => void;
  onProcessGroup: (pgid: number) => void;
}

/** What the wrapper sends on stderr after the process group's line: BOSUN_OUTPUT's file after its own line, anything else is output. */
class StderrAfterGroup {
  private pending = Buffer.alloc(0);
  private file: Buffer[] | null = null;
  private bytes = 0;
  private overflow = false;
  private readonly marker: Buffer | null;
  private readonly limitBytes: number;

  constructor(
    private readonly onOutput: (text: string) => void,
    outputFile: { name: string; limitBytes: number } | null,
  ) {
    this.marker = outputFile ? Buffer.from(`bosun-output:${outputFile.name}\n`) : null;
    this.limitBytes = outputFile?.limitBytes ?? 0;
  }

  push(chunk: Buffer) {
    if (!this.marker) return this.onOutput(chunk.toString('utf8'));
    if (this.file) return this.keep(chunk);
    this.pending = Buffer.concat([this.pending, chunk]);
    const at = this.pending.indexOf(this.marker);
    if (at < 0) return;
    if (at > 0) this.onOutput(this.pending.subarray(0, at).toString('utf8'));
    this.file = [];
    this.keep(this.pending.subarray(at + this.marker.length));
    this.pending = Buffer.alloc(0);
  }

  private keep(chunk: Buffer) {
    const room = this.limitBytes - this.bytes;
    if (chunk.length > room) this.overflow = true;
    const kept = chunk.subarray(0, Math.max(0, room));
    this.file!.push(kept);
    this.bytes += kept.length;
  }

  /** At the channel's close: what was held back is output after all; the file read, when one was asked for. */
  end(): RemoteResult['outputFile'] {
    if (this.pending.length) this.onOutput(this.pending.toString('utf8'));
    if (!this.marker) return undefined;
    return { text: Buffer.concat(this.file ?? []).toString('utf8'), overflow: this.overflow };
  }
}

/**
 * Runs a command in its own process group, streaming its combined output as text (never buffered
 * whole: a step may print gigabytes). A channel that closes without an exit status means the
 * connection was lost, which is a transport failure, not a result.
 */
export function runInProcessGroup(ssh: NodeSSH, command: string, options: RemoteCommandOptions): Promise<RemoteResult> {
  const connection = ssh.connection;
  if (!connection) return Promise.reject(new SshError('transport', 'Not connected'));
  const outputFile = options.outputFile ? { name: `bosun-output.${randomBytes(12).toString('hex')}`, limitBytes: options.outputFile.limitBytes } : null;
  return new Promise((resolve, reject) => {
    const shellKnown = loginShellIsSh.get(connection);
    const wrapped = inProcessGroup(command, {
      mergeStderr: true,
      environment: options.environment,
      outputFile: outputFile?.name,
      watchChannel: true,
      inLoginShell: shellKnown === true,
      reportShell: shellKnown === undefined,
    });
    connection.exec(wrapped, (error, channel) => {
      if (error) return reject(new SshError('transport', `Could not start the command: ${error.message}`));
      const stdout = new StringDecoder('utf8');
      const afterGroup = new StderrAfterGroup(options.onOutput, outputFile);
      // Bytes as latin1 characters, one for one: what follows the group's line is cut from them exactly.
      let stderrText = '';
      let pgidSeen = false;
      let exit: RemoteResult | null = null;
      channel.on('data', (chunk: Buffer) => {
        const text = stdout.write(chunk);
        if (text) options.onOutput(text);
      });
      channel.stderr.on('data', (chunk: Buffer) => {
        if (pgidSeen) return afterGroup.push(chunk);
        stderrText += chunk.toString('latin1');
        // Anything the login shell printed first (a locale warning, say) is output like the rest.
        const found = processGroupLine(stderrText);
        if (!found) return;
        pgidSeen = true;
        if (found.shell !== undefined) loginShellIsSh.set(connection, SH_LOGIN_SHELLS.has(found.shell));
        options.onProcessGroup(found.pgid);
        if (found.rest) afterGroup.push(Buffer.from(found.rest, 'latin1'));
      });
      // No EOF is sent, then or at the exit: sshd stops writing to the command's stdin when it exits,
      // and closes the channel (its close answered by ssh2's) — one packet less per command each way.
      channel.on('exit', (code: number | null, signal?: string) => {
        exit = { exitCode: code ?? null, signal: signal ?? null };
      });
      channel.on('close', () => {
        const tail = stdout.end();
        if (tail) options.onOutput(tail);
        const file = afterGroup.end();
        // setsid itself failed (not installed?): whatever it said is the output.
        if (!pgidSeen && stderrText) options.onOutput(Buffer.from(stderrText, 'latin1').toString('utf8'));
        if (exit) resolve(file ? { ...exit, outputFile: file } : exit);
        else reject(new SshError('transport', 'The connection was lost while the command ran'));
      });
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
