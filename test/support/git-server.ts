import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually';
import { portForProcess } from './ports';
import type { SshdInfo } from './sshd';

/*
 * Real Git repositories for the tests, on loopback: bare repositories served by `git daemon`
 * (git://) and, through the tests' sshd, over SSH as its login (git-upload-pack runs as that user).
 */

/**
 * Root's git refuses a repository another user owns, and the ssh login's git one root owns: the
 * repositories belong to the login, and the helper's own git (and the daemon's) trusts any owner.
 */
const TRUST_ANY_OWNER = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };

const AUTHOR = { GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' };

function git(args: string[], options: { cwd?: string; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd: options.cwd, env: { ...process.env, ...TRUST_ANY_OWNER, ...AUTHOR }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`git ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout.trim()),
    );
    // A command that reads no input may exit before it is written.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** Files of a commit by path; null removes a file. */
export type RepositoryFiles = Record<string, string | null>;

/** `git fast-import`'s commit of these files onto `parent` (none: a new root), with `deleteall` first when `replace`. */
function fastImportStream(branch: string, files: RepositoryFiles, message: string, parent: string | null, replace: boolean): string {
  // No blank line inside: fast-import ends a commit's file changes at one.
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}`;
  const lines = [
    `${parent ? '' : `reset refs/heads/${branch}\n`}commit refs/heads/${branch}`,
    `committer Ada <ada@example.com> ${Math.floor(Date.now() / 1000)} +0000`,
    data(message),
    parent ? `from ${parent}` : '',
    replace ? 'deleteall' : '',
    ...Object.entries(files).map(([file, content]) => (content === null ? `D ${file}` : `M 100644 inline ${file}\n${data(content)}`)),
  ];
  return lines.filter(Boolean).join('\n') + '\n';
}

/** One bare repository, its branch `main` the default. */
export class TestRepository {
  constructor(
    readonly dir: string,
    private readonly gitUrlBase: string,
  ) {}

  /** git://127.0.0.1:PORT/NAME.git */
  get gitUrl(): string {
    return `${this.gitUrlBase}/${path.basename(this.dir)}`;
  }

  /** The sha `ref` names now, or null when it names nothing. */
  async shaOf(ref: string): Promise<string | null> {
    return git(['--git-dir', this.dir, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => null);
  }

  /** A commit of these files (added, replaced or, null, removed) on top of the branch; its sha. */
  async commit(files: RepositoryFiles, message = 'change definitions', branch = 'main'): Promise<string> {
    const parent = await this.shaOf(`refs/heads/${branch}`);
    await git(['--git-dir', this.dir, 'fast-import', '--quiet'], { input: fastImportStream(branch, files, message, parent, false) });
    return (await this.shaOf(`refs/heads/${branch}`))!;
  }

  /** History rewritten, as after `git push --force`: the branch is one new root commit holding exactly these files. */
  async forcePush(files: Record<string, string>, message = 'rewrite history', branch = 'main'): Promise<string> {
    await git(['--git-dir', this.dir, 'fast-import', '--quiet', '--force'], { input: fastImportStream(branch, files, message, null, true) });
    return (await this.shaOf(`refs/heads/${branch}`))!;
  }

  /** An annotated tag on a commit. */
  async tag(name: string, sha: string): Promise<void> {
    await git(['--git-dir', this.dir, 'tag', '--annotate', '--message', name, name, sha]);
  }

  /** The repository by ssh through this sshd: its URL as its login, and the host key to pin (`ssh-ed25519 AAAA…`). */
  overSsh(sshd: SshdInfo): { url: string; hostKey: string } {
    // The login's git-upload-pack refuses a repository it does not own (safe.directory).
    if (process.getuid?.() === 0) chownAll(this.dir, sshd.username);
    return { url: `ssh://${sshd.username}@${sshd.host}:${sshd.port}${this.dir}`, hostKey: readFileSync(path.join(sshd.dir, 'host_ed25519.pub'), 'utf8').trim() };
  }
}

function chownAll(dir: string, login: string): void {
  const uid = Number(execFileSync('id', ['-u', login], { encoding: 'utf8' }).trim());
  const walk = (at: string) => {
    chownSync(at, uid, uid);
    if (statSync(at).isDirectory()) for (const entry of readdirSync(at)) walk(path.join(at, entry));
  };
  walk(dir);
}

/** A new ed25519 key pair, as a repository host's deploy key; its private half encrypted with `passphrase` when one is given. */
export function newDeployKey(passphrase = ''): { privateKey: string; publicKey: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-deploy-key-'));
  try {
    const file = path.join(dir, 'key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'deploy-key', '-f', file]);
    return { privateKey: readFileSync(file, 'utf8'), publicKey: readFileSync(`${file}.pub`, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The key may log in to this sshd (a test's own: Sshd.startPrivate), as a deploy key added to a repository. */
export function authorizeKey(sshd: SshdInfo, publicKey: string): void {
  appendFileSync(path.join(sshd.dir, 'authorized_keys'), publicKey.trim() + '\n');
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** `git daemon` on a loopback port, serving every bare repository made with repository(). */
export class GitServer {
  private constructor(
    readonly root: string,
    readonly port: number,
    private readonly daemon: ChildProcess,
  ) {}

  static async start(): Promise<GitServer> {
    const root = mkdtempSync(path.join(os.tmpdir(), 'bosun-git-server-'));
    // The ssh login reads the repositories from here too.
    chmodSync(root, 0o755);
    const port = await portForProcess();
    const daemon = spawn('git', ['daemon', '--listen=127.0.0.1', `--port=${port}`, '--export-all', '--reuseaddr', '--informative-errors', `--base-path=${root}`], {
      env: { ...process.env, ...TRUST_ANY_OWNER },
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise<never>((_, reject) => daemon.once('exit', (code) => reject(new Error(`git daemon exited (${code})`))));
    const server = new GitServer(root, port, daemon);
    await Promise.race([eventually(() => accepts(port), Boolean, 10_000), exited]);
    return server;
  }

  /** A new empty bare repository, readable by any login (git's `--shared=all`). */
  async repository(name: string): Promise<TestRepository> {
    const dir = path.join(this.root, `${name}.git`);
    await git(['init', '--quiet', '--bare', '--shared=all', '--initial-branch=main', dir]);
    return new TestRepository(dir, `git://127.0.0.1:${this.port}`);
  }

  async stop(): Promise<void> {
    if (this.daemon.exitCode === null) {
      const exited = new Promise((resolve) => this.daemon.once('exit', resolve));
      // Its group: the daemon and any upload-pack it forked.
      process.kill(-this.daemon.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}
