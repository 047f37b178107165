import { RepositoryError } from './git-errors';
import type { RunOptions } from './git-process';
import type { ConfigFile } from './types';

/** The same limits a plan's files have: one file, and how many (the plan refuses more documents still). */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;
export const MAX_FILES = 2000;

const DEFINITION_FILE = /\.ya?ml$/;
/** A link's blob is the path it points to, not a file's text: links are not definitions. */
const SYMLINK_MODE = '120000';

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  size: number;
  path: string;
}

/** What `git` runs as in the fetched repository: its arguments, and how it finished. */
export type Git = (args: string[], options?: Partial<RunOptions>) => Promise<Buffer>;

/** `git ls-tree -r -l -z` output: `<mode> <type> <oid> <size>\t<path>` records, NUL-separated. */
function parseTree(listing: Buffer): TreeEntry[] {
  return listing
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((record) => {
      const match = /^(\d+) (\w+) ([0-9a-f]+) +(\d+|-)\t(.*)$/s.exec(record);
      if (!match) throw new Error(`Unexpected git ls-tree record: ${record.slice(0, 200)}`);
      const [, mode = '', type = '', oid = '', size = '', path = ''] = match;
      return { mode, type, oid, size: size === '-' ? 0 : Number(size), path };
    });
}

/** `git cat-file --batch` output: `<oid> blob <size>\n<content>\n` for each object asked for, in order. */
function parseBlobs(output: Buffer, count: number): string[] {
  const contents: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    const headerEnd = output.indexOf(0x0a, at);
    const size = Number(/ blob (\d+)$/.exec(output.subarray(at, headerEnd).toString('latin1'))?.[1] ?? NaN);
    if (headerEnd < 0 || !Number.isFinite(size)) throw new Error('Unexpected git cat-file output');
    contents.push(output.subarray(headerEnd + 1, headerEnd + 1 + size).toString('utf8'));
    at = headerEnd + 1 + size + 1;
  }
  return contents;
}

/**
 * The `.yaml` and `.yml` files under `path` at the fetched commit, paths from the repository's root,
 * read from git's objects (no checkout: nothing of the repository's runs or lands outside git's store).
 */
export async function definitionFiles(git: Git, revision: string, path: string): Promise<ConfigFile[]> {
  const entries = parseTree(await git(['ls-tree', '-r', '-l', '-z', '--full-tree', revision, '--', ...(path ? [path] : [])]));
  if (path && entries.length === 0) {
    throw new RepositoryError('path_not_found', `The repository has no "${path}" at ${revision.slice(0, 12)}`);
  }
  const wanted = entries.filter((entry) => entry.type === 'blob' && entry.mode !== SYMLINK_MODE && DEFINITION_FILE.test(entry.path));
  if (wanted.length > MAX_FILES) {
    throw new RepositoryError('too_large', `${path || 'The repository'} holds ${wanted.length} definition files: at most ${MAX_FILES} are read`);
  }
  const oversized = wanted.find((entry) => entry.size > MAX_FILE_BYTES);
  if (oversized) {
    throw new RepositoryError('too_large', `${oversized.path} is ${oversized.size} bytes: a definition file may be at most ${MAX_FILE_BYTES} (5 MiB)`);
  }
  if (wanted.length === 0) return [];
  const blobs = await git(['cat-file', '--batch'], { input: wanted.map((entry) => entry.oid).join('\n') + '\n' });
  const contents = parseBlobs(blobs, wanted.length);
  return wanted.map((entry, i) => ({ path: entry.path, content: contents[i] ?? '' }));
}
