import type { NodeSSH } from 'node-ssh';
import type { CommandRecorder } from '../src/domain/ssh/exec';
import { capture, streamBetween } from '../src/domain/ssh/stream';

/**
 * A server one side of a transfer runs commands on, each of them recorded in the audit trail when
 * `audit` is given: written before the command starts, its exit after (null: it did not end normally);
 * the kill of one stopped half-way too.
 */
export interface Side {
  ssh: NodeSSH;
  audit?: CommandRecorder;
}

/** `capture` on a side, in the trail. */
export async function captureOn(side: Side, command: string, options: Parameters<typeof capture>[2]): ReturnType<typeof capture> {
  const ended = await side.audit?.(command);
  try {
    const result = await capture(side.ssh, command, { ...options, record: side.audit });
    ended?.(result);
    return result;
  } catch (error) {
    ended?.(null);
    throw error;
  }
}

/** `streamBetween` two sides, both commands in the trail. */
export async function streamOn(
  from: Side & { command: string; stdin?: Buffer },
  to: Side & { command: string },
  options: Parameters<typeof streamBetween>[2],
): ReturnType<typeof streamBetween> {
  const [sourceEnded, targetEnded] = await Promise.all([from.audit?.(from.command), to.audit?.(to.command)]);
  try {
    const result = await streamBetween(from, to, options);
    sourceEnded?.(result.source);
    targetEnded?.(result.target);
    return result;
  } catch (error) {
    sourceEnded?.(null);
    targetEnded?.(null);
    throw error;
  }
}
