import type { NodeSSH } from 'node-ssh';
import { exitOutcome, runRecorded, type CommandRecorder } from '../src/domain/audit/commands';
import { capture, streamBetween } from '../src/domain/ssh/stream';

/**
 * A server one side of a transfer runs commands on, each of them recorded in the audit trail through
 * `audit`: written before the command starts, its exit after; the kill of one stopped half-way too.
 */
export interface Side {
  ssh: NodeSSH;
  audit: CommandRecorder;
}

/** `capture` on a side, in the trail. */
export function captureOn(side: Side, command: string, options: Parameters<typeof capture>[2]): ReturnType<typeof capture> {
  return runRecorded(side.audit, command, undefined, () => capture(side.ssh, command, { ...options, record: side.audit }));
}

/** `streamBetween` two sides, both commands in the trail: neither starts before both entries are written. */
export async function streamOn(
  from: Side & { command: string; stdin?: Buffer },
  to: Side & { command: string },
  options: Parameters<typeof streamBetween>[2],
): ReturnType<typeof streamBetween> {
  const [source, target] = [from.audit.record(from.command), to.audit.record(to.command)];
  await Promise.all([source.written(), target.written()]);
  let result;
  try {
    result = await streamBetween(from, to, options);
  } catch (error) {
    await Promise.all([source.end('interrupted'), target.end('interrupted')]);
    throw error;
  }
  await Promise.all([source.end(exitOutcome(result.source), result.source), target.end(exitOutcome(result.target), result.target)]);
  return result;
}
