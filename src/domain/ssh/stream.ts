import { Transform, type TransformCallback } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { NodeSSH } from 'node-ssh';
import { SshError } from './errors';
import { inProcessGroup, killProcessGroup, processGroupLine } from './exec';
import { sshBestEffort, type CommandRecorder } from '../audit/commands';

const TEXT_LIMIT = 64 * 1024;

export interface ChannelExit {
  exitCode: number | null;
  signal: string | null;
  /** The first 64 KiB of what the command wrote to stderr. */
  stderr: string;
}

/** "<what> failed (exit N): <the last lines of its stderr>", for a log. */
export const commandFailure = (what: string, exit: ChannelExit) =>
  `${what} failed (exit ${exit.exitCode ?? exit.signal})${exit.stderr.trim() ? `: ${exit.stderr.trim().split('\n').slice(-5).join(' / ')}` : ''}`;

/** A command's output was larger than its reader accepts: what was read is not all of it. */
export class OutputLimitExceeded extends Error {
  override name = 'OutputLimitExceeded';
}

interface Running {
  ssh: NodeSSH;
  pgid: number | null;
  stopped: boolean;
  closed: boolean;
  /** Where the kill of its process group is recorded, if it is stopped. */
  record?: CommandRecorder;
  /** Its kill, once stopped: null, or the trail's failure to record it (thrown by whoever awaits the command). */
  killed: Promise<unknown>;
}
const running = new WeakMap<ClientChannel, Running>();

/**
 * Starts a command; its exit is watched from the callback on (ssh2 may deliver a quick command's
 * exit and close in the same read as the channel's opening, before any later listener exists).
 */
function openChannel(ssh: NodeSSH, command: string, signal?: AbortSignal, record?: CommandRecorder): Promise<{ channel: ClientChannel; exit: Promise<ChannelExit> }> {
  const connection = ssh.connection;
  if (!connection) return Promise.reject(new SshError('transport', 'Not connected'));
  if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('Aborted'));
  return new Promise((resolve, reject) => {
    // In a process group of its own, so stopping it stops everything it started, even a command that
    // reads and writes nothing for a while; stdin, stdout and stderr stay apart.
    connection.exec(inProcessGroup(command, { mergeStderr: false }), (error, channel) => {
      if (error) return reject(new SshError('transport', `Could not start a command: ${error.message}`));
      running.set(channel, { ssh, pgid: null, stopped: false, closed: false, record, killed: Promise.resolve(null) });
      const exit = exitOf(channel);
      exit.catch(() => undefined);
      // A write after the far end closed must not crash the process: the exit (or its absence) tells the story.
      channel.on('error', () => undefined);
      resolve({ channel, exit });
    });
  });
}

/** Keeps the first 64 KiB of a stream as text (the rest is read and dropped, so the channel can close). */
function keepText(stream: NodeJS.ReadableStream, kept = { text: '' }) {
  stream.on('data', (chunk: Buffer) => {
    if (kept.text.length < TEXT_LIMIT) kept.text += chunk.toString('utf8').slice(0, TEXT_LIMIT - kept.text.length);
  });
  return kept;
}

/**
 * Stops a command on purpose: its process group is killed, and its channel drained and closed (ssh2
 * closes a channel only once its readable side has ended, which a paused, unpiped one never does).
 */
function stop(channel: ClientChannel): void {
  const state = running.get(channel);
  if (!state || state.stopped || state.closed) return;
  state.stopped = true;
  // A kill over a connection that is gone has nothing left to stop; one the trail could not record is thrown later.
  if (state.pgid !== null) state.killed = sshBestEffort(killProcessGroup(state.ssh, state.pgid, 1, state.record), () => undefined).then(() => null, (error: unknown) => error);
  channel.unpipe();
  channel.resume();
  channel.close();
}

/**
 * Resolves with the command's exit once its channel closes; a channel closed without one means the
 * connection was lost (unless this process stopped it: then its signal is "stopped").
 */
function exitOf(channel: ClientChannel): Promise<ChannelExit> {
  const state = running.get(channel)!;
  const stderr = { text: '' };
  let head = '';
  let headDone = false;
  const onStderr = (chunk: Buffer) => {
    head += chunk.toString('utf8');
    const found = processGroupLine(head);
    // Whatever a login shell printed first comes before the line; a wrapper that never reports gives up the group.
    if (!found && head.length < TEXT_LIMIT) return;
    headDone = true;
    channel.stderr.off('data', onStderr);
    if (found) state.pgid = found.pgid;
    stderr.text = (found ? found.rest : head).slice(0, TEXT_LIMIT);
    keepText(channel.stderr, stderr);
  };
  channel.stderr.on('data', onStderr);
  let exit: { exitCode: number | null; signal: string | null } | null = null;
  channel.on('exit', (code: number | null, signal?: string) => {
    exit = { exitCode: code ?? null, signal: signal ?? null };
  });
  return new Promise((resolve, reject) => {
    channel.on('close', () => {
      state.closed = true;
      // No process group line ever came (setsid missing, say): what stderr said is the message.
      if (!headDone) stderr.text = head.slice(0, TEXT_LIMIT);
      if (exit) resolve({ ...exit, stderr: stderr.text });
      else if (state.stopped) resolve({ exitCode: null, signal: 'stopped', stderr: stderr.text });
      else reject(new SshError('transport', 'The connection was lost while the command ran'));
    });
  });
}

/** A stopped command's kill, once done: a kill the trail could not record fails the command's caller. */
async function stopped(channel: ClientChannel): Promise<void> {
  const failed = await running.get(channel)?.killed;
  if (failed) throw failed;
}

/** Stops the channels when the signal aborts (at once, if it already has). */
const abortWith = (signal: AbortSignal | undefined, channels: ClientChannel[]) => {
  const onAbort = () => channels.forEach(stop);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort);
  return () => signal?.removeEventListener('abort', onAbort);
};

/**
 * Runs a command with `stdin` as its input and collects its stdout; more than `maxBytes` stops it and
 * throws OutputLimitExceeded (never a silently shortened answer).
 */
export async function capture(
  ssh: NodeSSH,
  command: string,
  { stdin, maxBytes, signal, record }: { stdin?: Buffer; maxBytes: number; signal?: AbortSignal; record?: CommandRecorder },
) {
  const { channel, exit: exited } = await openChannel(ssh, command, signal, record);
  const detach = abortWith(signal, [channel]);
  const chunks: Buffer[] = [];
  let size = 0;
  channel.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
    else stop(channel);
  });
  channel.end(stdin);
  try {
    const exit = await exited.finally(() => stopped(channel));
    if (size > maxBytes) throw new OutputLimitExceeded(`The output of \`${command.slice(0, 80)}\` exceeded ${maxBytes} bytes`);
    return { ...exit, stdout: Buffer.concat(chunks) };
  } finally {
    detach();
  }
}

/**
 * Lets bytes through no faster than a rate (a migration must not saturate a production link): a
 * token bucket holding at most a second's worth, so a pause earns no later burst beyond that.
 */
class Throttle extends Transform {
  private nextFree = Date.now();

  constructor(private readonly bytesPerSecond: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const now = Date.now();
    this.nextFree = Math.max(this.nextFree, now - 1000) + (chunk.length / this.bytesPerSecond) * 1000;
    setTimeout(() => done(null, chunk), Math.max(0, this.nextFree - now));
  }
}

/**
 * One command's stdout fed to another's stdin, possibly on another server, through this process
 * (with backpressure: neither side buffers more than a window here). `stdin` feeds the first command.
 */
export async function streamBetween(
  from: { ssh: NodeSSH; command: string; stdin?: Buffer; audit?: CommandRecorder },
  to: { ssh: NodeSSH; command: string; audit?: CommandRecorder },
  { onBytes, signal, bytesPerSecond = 0 }: { onBytes: (bytes: number) => void; signal?: AbortSignal; bytesPerSecond?: number },
): Promise<{ bytes: number; source: ChannelExit; target: ChannelExit; targetOutput: string }> {
  const { channel: target, exit: targetExit } = await openChannel(to.ssh, to.command, signal, to.audit);
  // What the target prints (a restore's messages) is kept for the log; reading it also lets its channel close.
  const targetOutput = keepText(target);
  let source: ClientChannel | null = null;
  let sourceEnded = false;
  // The target gave up (it failed): stop the source too, unless it had already sent everything.
  target.once('close', () => source && !sourceEnded && stop(source));
  const opened = await openChannel(from.ssh, from.command, signal, from.audit).catch(async (error) => {
    stop(target);
    await stopped(target);
    throw error;
  });
  source = opened.channel;
  const sourceExit = opened.exit;
  source.once('end', () => (sourceEnded = true));
  if (running.get(target)!.closed) stop(source);
  const detach = abortWith(signal, [source, target]);
  let bytes = 0;
  source.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    onBytes(bytes);
  });
  (bytesPerSecond > 0 ? source.pipe(new Throttle(bytesPerSecond)) : source).pipe(target);
  source.end(from.stdin);
  try {
    const [sourceResult, targetResult] = await Promise.all([sourceExit, targetExit]);
    await Promise.all([stopped(source), stopped(target)]);
    return { bytes, source: sourceResult, target: targetResult, targetOutput: targetOutput.text };
  } catch (error) {
    stop(source);
    stop(target);
    await Promise.all([stopped(source), stopped(target)]);
    throw error;
  } finally {
    detach();
  }
}
