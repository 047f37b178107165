import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fetchFailure, isHostKeyRefusal, RepositoryError, summarize } from './git-errors';
import { offeredHostKey, parseHostKey } from './git-host-key';
import { checkedPath, checkedRef, repositoryAddress, type RepositoryAddress } from './git-location';
import { run, type RunOptions } from './git-process';
import { transportFor, type FetchSession, type RepositoryCredentials } from './git-transport';
import { definitionFiles, type Git } from './git-tree';
import type { ConfigFile } from './types';

export { RepositoryError, type OfferedHostKey, type RepositoryErrorCode } from './git-errors';
export { parseHostKey } from './git-host-key';
export { repositoryAddress } from './git-location';
export { MAX_FILE_BYTES, MAX_FILES } from './git-tree';
export type { RepositoryCredentials } from './git-transport';

/*
 * Reading a sync source's definitions (issue 38): one shallow fetch of one ref into a fresh bare
 * repository that is removed afterwards, with the `git` binary. The repository is someone else's
 * input: nothing of it runs (no hooks, no checkout, no submodules, no config of its own), and the
 * worker's own git and ssh configuration has no say either.
 */

export interface FetchRepositoryOptions {
  /** ssh://user@host:port/path, user@host:path, https://… or git://… */
  url: string;
  /** A branch, a tag or a full commit sha. */
  ref: string;
  /** The folder (or file) of definitions inside the repository; '' or '/' for all of it. */
  path: string;
  credentials: RepositoryCredentials | null;
  /** The host's pinned public key line (`ssh-ed25519 AAAA…`) for ssh URLs; null: refused with what the host offers. */
  hostKey: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface FetchedRepository {
  /** The fetched commit's sha. */
  revision: string;
  /** Every `.yaml` and `.yml` file under the path, its path from the repository's root. */
  files: ConfigFile[];
}

/** Options every git command runs with, before the repository's (empty) and the user's (ignored) config. */
function safeOptions(transport: RepositoryAddress['transport']): string[] {
  const settings = {
    'protocol.allow': 'never',
    [`protocol.${transport}.allow`]: 'always',
    'core.hooksPath': '/dev/null',
    'core.fsmonitor': 'false',
    'submodule.recurse': 'false',
    'fetch.recurseSubmodules': 'false',
    'fetch.writeCommitGraph': 'false',
    'transfer.fsckObjects': 'true',
    'http.followRedirects': 'false',
    'credential.helper': '',
    // A background gc would still be writing in the folder as it is removed.
    'gc.auto': '0',
    'maintenance.auto': 'false',
  };
  return Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
}

/** git's environment: no system or global config, no prompt, nothing inherited but PATH. */
function baseEnv(dir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

/** Why ssh refused the host: the key it offers now, against the one pinned. */
async function hostKeyMismatch(address: RepositoryAddress, session: FetchSession, hostKey: string | null): Promise<RepositoryError> {
  const offered = await offeredHostKey(address, session).catch(() => null);
  const pinned = hostKey === null ? null : parseHostKey(hostKey);
  const where = `${address.host}:${address.port}`;
  return new RepositoryError(
    'host_key_mismatch',
    `Host key of ${where} is not the pinned one: expected ${pinned?.fingerprint ?? 'the pinned key'}, got ${offered?.fingerprint ?? 'another'}. ` +
      'This may be a man-in-the-middle attack; if the repository host changed its key, pin the new one.',
    offered && { key: offered.key, fingerprint: offered.fingerprint },
  );
}

/** The commit `ref` names at `url`, and the definition files under `path` in it. */
export async function fetchRepositoryFiles(options: FetchRepositoryOptions): Promise<FetchedRepository> {
  const address = repositoryAddress(options.url);
  const ref = checkedRef(options.ref);
  const inside = checkedPath(options.path);
  const deadline = Date.now() + options.timeoutMs;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bosun-git-'));
  try {
    const session: FetchSession = { dir, deadline, signal: options.signal, env: baseEnv(dir) };
    const transport = await transportFor(address, session, options.credentials, options.hostKey);
    const repository = path.join(dir, 'repository.git');
    const runOptions: RunOptions = { env: { ...session.env, ...transport.env }, deadline, signal: options.signal };
    const timedOut = () =>
      new RepositoryError('timed_out', `Fetching ${ref} from ${options.url} took longer than ${Math.round(options.timeoutMs / 1000)} s`);
    const runGit = (args: string[], extra?: Partial<RunOptions>) =>
      run('git', [...safeOptions(address.transport), '--git-dir', repository, ...args], { ...runOptions, ...extra });
    const git: Git = async (args, extra) => {
      const finished = await runGit(args, extra);
      if (finished.timedOut) throw timedOut();
      if (finished.code !== 0) throw new Error(`git ${args[0]} failed: ${summarize(finished.stderr, transport.secrets)}`);
      return finished.stdout;
    };
    await git(['init', '--bare', '--quiet', '--template=']);
    const fetched = await runGit(['fetch', '--quiet', '--depth=1', '--no-tags', '--no-recurse-submodules', '--end-of-options', options.url, ref]);
    if (fetched.timedOut) throw timedOut();
    if (fetched.code !== 0) {
      if (isHostKeyRefusal(fetched.stderr)) throw await hostKeyMismatch(address, session, options.hostKey);
      throw fetchFailure(fetched.stderr, { url: options.url, ref, secrets: transport.secrets });
    }
    const revision = (await git(['rev-parse', '--verify', '--end-of-options', 'FETCH_HEAD^{commit}'])).toString('utf8').trim();
    return { revision, files: await definitionFiles(git, revision, inside) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
