import { humanSize } from '../src/domain/ssh/fingerprint';
import { commandFailure as failure } from '../src/domain/ssh/stream';
import { captureOn, streamOn, type Side } from './audited-commands';
import { shellQuote as q } from '../src/domain/shell';

/** One entry of a directory tree; names are kept as latin1 strings so any byte sequence survives the round trip. */
interface Entry {
  type: 'f' | 'd' | 'l' | 'other';
  size: number;
  /** Whole seconds: what tar keeps. */
  mtime: number;
  /** Permission bits, octal. */
  mode: string;
  uid: number;
  gid: number;
}

type Tree = Map<string, Entry>;

const MANIFEST_LIMIT = 256 * 1024 * 1024;
const TAR_BLOCK = 512;

/** GNU find: type, size, mtime, mode, owner and path relative to the directory, NUL-terminated (names may hold newlines). */
const listing = (dir: string) => `cd -- ${q(dir)} && find . -mindepth 1 -printf '%y %s %T@ %m %U %G %P\\0'`;

function parseTree(raw: Buffer): Tree {
  const tree: Tree = new Map();
  for (const record of raw.toString('latin1').split('\0')) {
    const match = /^(\S) (\d+) (\d+)(?:\.\d*)? ([0-7]+) (\d+) (\d+) ([\s\S]+)$/.exec(record);
    if (!match) continue;
    const type = ['f', 'd', 'l'].includes(match[1]!) ? (match[1] as Entry['type']) : 'other';
    tree.set(match[7]!, { type, size: Number(match[2]), mtime: Number(match[3]), mode: match[4]!, uid: Number(match[5]), gid: Number(match[6]) });
  }
  return tree;
}

const display = (name: string) => Buffer.from(name, 'latin1').toString('utf8');
const names = (list: string[]) => Buffer.from(list.map((name) => `${name}\0`).join(''), 'latin1');
export class CopyFailed extends Error {}

export interface CopyReport {
  note(line: string): void;
  /** About how many bytes this attempt will move (tar headers included). */
  expect(bytes: number): void;
  /** Bytes moved so far by this attempt, for heartbeats and the progress line. */
  progress(bytes: number): void;
}

export interface CopyPlan {
  files: number;
  bytes: number;
  identical: string[];
  appends: Array<{ name: string; from: number; entry: Entry }>;
  full: string[];
  skipped: number;
}

/**
 * What must move: files the target already has with the same size and mtime are done; a shorter
 * file on the target is an interrupted copy, resumed from where it stopped once its bytes so far are
 * checked against the source's; the rest (and every directory, and missing links) goes in one tar stream.
 */
export function planCopy(source: Tree, target: Tree): CopyPlan {
  const plan: CopyPlan = { files: 0, bytes: 0, identical: [], appends: [], full: [], skipped: 0 };
  for (const [name, entry] of source) {
    const there = target.get(name);
    if (entry.type === 'other') plan.skipped += 1;
    else if (entry.type === 'd') plan.full.push(name);
    else if (entry.type === 'l') {
      if (!there) plan.full.push(name);
    } else {
      plan.files += 1;
      plan.bytes += entry.size;
      // Mode too: tar gives a file its mode only once its data is written, so an interrupted one may have all its bytes but not its mode.
      if (there?.type === 'f' && there.size === entry.size && there.mtime === entry.mtime && there.mode === entry.mode) plan.identical.push(name);
      else if (there?.type === 'f' && there.size > 0 && there.size < entry.size) plan.appends.push({ name, from: there.size, entry });
      else plan.full.push(name);
    }
  }
  return plan;
}

/** What a tar stream of these entries weighs: a header each, contents padded to blocks. */
const tarBytes = (list: string[], tree: Tree) =>
  list.reduce((sum, name) => sum + TAR_BLOCK + Math.ceil((tree.get(name)!.type === 'f' ? tree.get(name)!.size : 0) / TAR_BLOCK) * TAR_BLOCK, 2 * TAR_BLOCK);

/**
 * Copies a directory tree from one server to another through this process (the servers need not
 * reach each other), resuming what an interrupted attempt left, then compares SHA-256 checksums of
 * every file on both sides. Throws CopyFailed with the reason when the copy cannot be done.
 */
export async function copyTree(
  source: Side & { dir: string },
  target: Side & { dir: string },
  report: CopyReport,
  { signal, bytesPerSecond }: { signal: AbortSignal; bytesPerSecond: number },
): Promise<void> {
  // The source first: a copy that cannot start leaves nothing behind on the target, not even its folder.
  const sourceList = await captureOn(source, listing(source.dir), { maxBytes: MANIFEST_LIMIT, signal });
  if (sourceList.exitCode !== 0) throw new CopyFailed(failure(`Listing ${source.dir} on the source`, sourceList));
  const targetList = await captureOn(target, `mkdir -p -- ${q(target.dir)} && ${listing(target.dir)}`, { maxBytes: MANIFEST_LIMIT, signal });
  if (targetList.exitCode !== 0) throw new CopyFailed(failure(`Preparing ${target.dir} on the target`, targetList));
  signal.throwIfAborted();
  const sourceTree = parseTree(sourceList.stdout);
  const plan = planCopy(sourceTree, parseTree(targetList.stdout));
  report.note(`source ${source.dir}: ${plan.files} files, ${humanSize(plan.bytes)}${plan.skipped ? ` (${plan.skipped} sockets/devices/fifos not copied)` : ''}\n`);
  if (plan.identical.length) report.note(`already on the target, identical (size and mtime): ${plan.identical.length} files\n`);

  report.expect(plan.appends.reduce((sum, a) => sum + a.entry.size - a.from, 0) + tarBytes(plan.full, sourceTree));
  let moved = 0;
  const movingSince = Date.now();
  for (const { name, from, entry } of plan.appends) {
    const [sourceSum, targetSum] = await Promise.all([
      captureOn(source, `cd -- ${q(source.dir)} && head -c ${from} -- ${q(name)} | sha256sum`, { maxBytes: 4096, signal }),
      captureOn(target, `cd -- ${q(target.dir)} && sha256sum < ${q(name)}`, { maxBytes: 4096, signal }),
    ]);
    signal.throwIfAborted();
    const same = sourceSum.exitCode === 0 && targetSum.exitCode === 0 && sourceSum.stdout.toString().split(' ')[0] === targetSum.stdout.toString().split(' ')[0];
    if (!same) {
      plan.full.push(name);
      continue;
    }
    report.note(`resuming ${display(name)} from ${humanSize(from)} of ${humanSize(entry.size)}\n`);
    const base = moved;
    const appended = await streamOn(
      { ...source, command: `cd -- ${q(source.dir)} && tail -c +${from + 1} -- ${q(name)}` },
      // Then what tar would have set at the end: mode, owner (where the login may), mtime.
      {
        ...target,
        command: `cd -- ${q(target.dir)} && cat >> ${q(name)} && chmod ${entry.mode} -- ${q(name)} && { chown ${entry.uid}:${entry.gid} -- ${q(name)} 2>/dev/null || true; } && touch -m -d @${entry.mtime} -- ${q(name)}`,
      },
      { onBytes: (bytes) => report.progress(base + bytes), signal, bytesPerSecond },
    );
    if (appended.source.exitCode !== 0) throw new CopyFailed(failure(`Reading ${display(name)} on the source`, appended.source));
    if (appended.target.exitCode !== 0) throw new CopyFailed(failure(`Appending to ${display(name)} on the target`, appended.target));
    moved += appended.bytes;
  }

  const fullFiles = plan.full.filter((name) => sourceTree.get(name)!.type === 'f');
  if (fullFiles.length) report.note(`copying ${fullFiles.length} files (${humanSize(fullFiles.reduce((sum, n) => sum + sourceTree.get(n)!.size, 0))}) in one tar stream\n`);
  if (plan.full.length) {
    signal.throwIfAborted();
    const base = moved;
    const streamed = await streamOn(
      { ...source, command: `tar -C ${q(source.dir)} --null --no-recursion -T - -cf -`, stdin: names(plan.full) },
      { ...target, command: `tar -C ${q(target.dir)} -xpf -` },
      { onBytes: (bytes) => report.progress(base + bytes), signal, bytesPerSecond },
    );
    if (streamed.source.exitCode !== 0) throw new CopyFailed(failure('tar on the source', streamed.source));
    if (streamed.target.exitCode !== 0) throw new CopyFailed(failure('tar on the target', streamed.target));
    moved += streamed.bytes;
  }
  const seconds = (Date.now() - movingSince) / 1000;
  report.note(`transferred ${humanSize(moved)} in this attempt (${seconds.toFixed(1)} s, ${humanSize(moved / Math.max(seconds, 0.001))}/s)\n`);

  const files = [...sourceTree].filter(([, entry]) => entry.type === 'f').map(([name]) => name);
  report.note(`verifying SHA-256 checksums of ${files.length} files on both servers\n`);
  const checksums = (side: Side & { dir: string }) =>
    captureOn(side, `cd -- ${q(side.dir)} && xargs -0 -r sha256sum --`, { stdin: names(files), maxBytes: MANIFEST_LIMIT, signal });
  signal.throwIfAborted();
  const [sourceSums, targetSums] = await Promise.all([checksums(source), checksums(target)]);
  signal.throwIfAborted();
  if (sourceSums.exitCode !== 0) throw new CopyFailed(failure('Checksums on the source', sourceSums));
  const sourceLines = sourceSums.stdout.toString('latin1').split('\n');
  const targetLines = targetSums.stdout.toString('latin1').split('\n');
  const differing = files.filter((_, i) => sourceLines[i] !== targetLines[i]);
  if (differing.length || targetSums.exitCode !== 0) {
    const shown = differing.slice(0, 10).map(display).join(', ');
    throw new CopyFailed(`${differing.length || 'Some'} files differ between the servers after the copy${shown ? `: ${shown}${differing.length > 10 ? ', …' : ''}` : ''}`);
  }
  report.note(`verified: ${files.length} files, ${humanSize(plan.bytes)}, identical on both servers\n`);
}
