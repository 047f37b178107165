import { Transform, type TransformCallback } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { NodeSSH } from 'node-ssh';
import { SshError } from './errors';

const TEXT_LIMIT = 64 * 1024;

export interface ChannelExit {
  exitCode: number | null;
  signal: string | null;
  /** The first 64 KiB of what the command wrote to stderr. */
  stderr: string;
}

/**
 * Starts a command; its exit is watched from the callback on (ssh2 may deliver a quick command's
 * exit and close in the same read as the channel's opening, before any later listener exists).
 */
function openChannel(ssh: NodeSSH, command: string): Promise<{ channel: ClientChannel; exit: Promise<ChannelExit> }> {
  const connection = ssh.connection;
  if (!connection) return Promise.reject(new SshError('transport', 'Not connected'));
  return new Promise((resolve, reject) => {
    connection.exec(command, (error, channel) => {
      if (error) return reject(new SshError('transport', `Could not start a command: ${error.message}`));
      const exit = exitOf(channel);
      exit.catch(() => undefined);
      // A write after the far end closed must not crash the process: the exit (or its absence) tells the story.
      channel.on('error', () => undefined);
      resolve({ channel, exit });
    });
  });
}

/** Keeps the first 64 KiB of a stream as text (the rest is read and dropped, so the channel can close). */
function keepText(stream: NodeJS.ReadableStream) {
  const kept = { text: '' };
  stream.on('data', (chunk: Buffer) => {
    if (kept.text.length < TEXT_LIMIT) kept.text += chunk.toString('utf8').slice(0, TEXT_LIMIT - kept.text.length);
  });
  return kept;
}

/** Channels closed already (by either side). */
const closed = new WeakSet<ClientChannel>();

/** Channels this process closed on purpose: no exit status is expected from them. */
const stopped = new WeakSet<ClientChannel>();
const stop = (channel: ClientChannel) => {
  stopped.add(channel);
  channel.close();
};

/**
 * Resolves with the command's exit once its channel closes; a channel closed without one means the
 * connection was lost (unless this process stopped it: then its signal is "stopped").
 */
function exitOf(channel: ClientChannel): Promise<ChannelExit> {
  const stderr = keepText(channel.stderr);
  let exit: { exitCode: number | null; signal: string | null } | null = null;
  channel.on('exit', (code: number | null, signal?: string) => {
    exit = { exitCode: code ?? null, signal: signal ?? null };
  });
  return new Promise((resolve, reject) => {
    channel.on('close', () => {
      closed.add(channel);
      if (exit) resolve({ ...exit, stderr: stderr.text });
      else if (stopped.has(channel)) resolve({ exitCode: null, signal: 'stopped', stderr: stderr.text });
      else reject(new SshError('transport', 'The connection was lost while the command ran'));
    });
  });
}

const abortWith = (signal: AbortSignal | undefined, channels: ClientChannel[]) => {
  const onAbort = () => channels.forEach(stop);
  signal?.addEventListener('abort', onAbort);
  return () => signal?.removeEventListener('abort', onAbort);
};

/** Runs a command with `stdin` as its input and collects its stdout (at most `maxBytes`: more is an error). */
export async function capture(ssh: NodeSSH, command: string, { stdin, maxBytes, signal }: { stdin?: Buffer; maxBytes: number; signal?: AbortSignal }) {
  const { channel, exit: exited } = await openChannel(ssh, command);
  const detach = abortWith(signal, [channel]);
  const chunks: Buffer[] = [];
  let size = 0;
  channel.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
    else channel.close();
  });
  channel.end(stdin);
  try {
    const exit = await exited.catch((error) => {
      if (size > maxBytes) throw new Error(`The output of \`${command.slice(0, 80)}\` exceeded ${maxBytes} bytes`);
      throw error;
    });
    return { ...exit, stdout: Buffer.concat(chunks) };
  } finally {
    detach();
  }
}

/** Lets bytes through no faster than a rate (a migration must not saturate a production link). */
class Throttle extends Transform {
  private passed = 0;
  private readonly started = Date.now();

  constructor(private readonly bytesPerSecond: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.passed += chunk.length;
    const due = this.started + (this.passed / this.bytesPerSecond) * 1000;
    setTimeout(() => done(null, chunk), Math.max(0, due - Date.now()));
  }
}

/**
 * One command's stdout fed to another's stdin, possibly on another server, through this process
 * (with backpressure: neither side buffers more than a window here). `stdin` feeds the first command.
 */
export async function streamBetween(
  from: { ssh: NodeSSH; command: string; stdin?: Buffer },
  to: { ssh: NodeSSH; command: string },
  { onBytes, signal, bytesPerSecond = 0 }: { onBytes: (bytes: number) => void; signal?: AbortSignal; bytesPerSecond?: number },
): Promise<{ bytes: number; source: ChannelExit; target: ChannelExit; targetOutput: string }> {
  const { channel: target, exit: targetExit } = await openChannel(to.ssh, to.command);
  // What the target prints (a restore's messages) is kept for the log; reading it also lets its channel close.
  const targetOutput = keepText(target);
  let source: ClientChannel | null = null;
  let sourceEnded = false;
  let targetClosed = false;
  // The target gave up (it failed): stop the source too, unless it had already sent everything.
  target.once('close', () => {
    targetClosed = true;
    if (source && !sourceEnded) stop(source);
  });
  const opened = await openChannel(from.ssh, from.command).catch((error) => {
    stop(target);
    throw error;
  });
  source = opened.channel;
  const sourceExit = opened.exit;
  source.once('end', () => (sourceEnded = true));
  if (targetClosed || closed.has(target)) stop(source);
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
    return { bytes, source: sourceResult, target: targetResult, targetOutput: targetOutput.text };
  } catch (error) {
    stop(source);
    stop(target);
    throw error;
  } finally {
    detach();
  }
}
