import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fetchRepositoryFiles, repositoryAddress, RepositoryError, type FetchRepositoryOptions } from '../../src/domain/config/git';
import { eventually } from '../support/eventually';
import { authorizeKey, GitServer, newDeployKey, type TestRepository } from '../support/git-server';
import { Sshd } from '../support/sshd';

const DEFINITIONS = {
  'bosun/deploy/web.yaml': 'kind: Deployment\nname: web-release\nspec:\n  steps: []\n',
  'bosun/teams.yml': 'kind: Team\nname: web\nspec: {}\n',
  'bosun/notes.txt': 'not a definition\n',
  'README.md': '# platform\n',
  'other/ignored.yaml': 'kind: Team\nname: other\nspec: {}\n',
};

/** What a fetch threw: a RepositoryError, whose code the tests read. */
async function refusal(fetching: Promise<unknown>): Promise<RepositoryError> {
  const error = await fetching.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof RepositoryError)) throw new Error(`Expected a RepositoryError, got ${String(error)}`);
  return error;
}

/** Everything of an error a status page, a log or an API response could show. */
const shown = (error: Error) => `${error.message}\n${error.stack}\n${JSON.stringify(error)}`;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Command lines of this machine's processes (what `ps` shows any user). */
const commandLines = () =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    });

describe('fetching definitions from a Git repository', () => {
  let server: GitServer;
  let sshd: Sshd;
  let platform: TestRepository;
  let firstSha: string;
  const deployKey = newDeployKey();

  beforeAll(async () => {
    [server, sshd] = await Promise.all([GitServer.start(), Sshd.startPrivate()]);
    authorizeKey(sshd.info, deployKey.publicKey);
    platform = await server.repository('platform');
    firstSha = await platform.commit(DEFINITIONS, 'first definitions');
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), sshd?.stop()]);
  });

  const fetchOverGit = (repository: TestRepository, options: Partial<FetchRepositoryOptions> = {}) =>
    fetchRepositoryFiles({ url: repository.gitUrl, ref: 'main', path: 'bosun/', credentials: null, hostKey: null, timeoutMs: 30_000, ...options });

  const fetchOverSsh = (options: Partial<FetchRepositoryOptions> = {}) => {
    const { url, hostKey } = platform.overSsh(sshd.info);
    return fetchRepositoryFiles({ url, ref: 'main', path: 'bosun', credentials: { type: 'ssh_key', private_key: deployKey.privateKey }, hostKey, timeoutMs: 30_000, ...options });
  };

  test('git:// fetches a branch: the YAML files under the path, named from the repository root, at the commit fetched', async () => {
    const fetched = await fetchOverGit(platform);
    expect(fetched.revision).toBe(firstSha);
    expect(fetched.files).toEqual([
      { path: 'bosun/deploy/web.yaml', content: DEFINITIONS['bosun/deploy/web.yaml'] },
      { path: 'bosun/teams.yml', content: DEFINITIONS['bosun/teams.yml'] },
    ]);
  });

  test('a new commit is a new revision with its files; a force-push that rewrites history is fetched like any other', async () => {
    const moving = await server.repository('moving');
    await moving.commit(DEFINITIONS);
    const second = await moving.commit({ 'bosun/deploy/web.yaml': 'kind: Deployment\nname: web-release\nspec:\n  steps: [echo]\n', 'bosun/teams.yml': null });
    const afterCommit = await fetchOverGit(moving);
    expect(afterCommit).toEqual({ revision: second, files: [{ path: 'bosun/deploy/web.yaml', content: 'kind: Deployment\nname: web-release\nspec:\n  steps: [echo]\n' }] });

    const rewritten = await moving.forcePush({ 'bosun/rewritten.yaml': 'kind: Team\nname: rewritten\nspec: {}\n' });
    expect(await moving.shaOf(`${rewritten}~1`)).toBeNull();
    expect(await fetchOverGit(moving)).toEqual({ revision: rewritten, files: [{ path: 'bosun/rewritten.yaml', content: 'kind: Team\nname: rewritten\nspec: {}\n' }] });
  });

  test('a tag and a full commit sha are refs too; the path may be the whole repository or one file', async () => {
    const tagged = await server.repository('tagged');
    const first = await tagged.commit(DEFINITIONS);
    await tagged.tag('v1', first);
    await tagged.commit({ 'bosun/later.yaml': 'kind: Team\nname: later\nspec: {}\n' });

    const byTag = await fetchOverGit(tagged, { ref: 'v1' });
    expect(byTag.revision).toBe(first);
    expect(byTag.files.map((file) => file.path)).toEqual(['bosun/deploy/web.yaml', 'bosun/teams.yml']);
    const bySha = await fetchOverGit(tagged, { ref: first, path: '' });
    expect(bySha.revision).toBe(first);
    expect(bySha.files.map((file) => file.path)).toEqual(['bosun/deploy/web.yaml', 'bosun/teams.yml', 'other/ignored.yaml']);
    const oneFile = await fetchOverGit(tagged, { path: '/bosun/teams.yml' });
    expect(oneFile.files).toEqual([{ path: 'bosun/teams.yml', content: DEFINITIONS['bosun/teams.yml'] }]);
  });

  test('a ref or a path the repository lacks is refused as such, and a ref is never read as an option', async () => {
    const missingBranch = await refusal(fetchOverGit(platform, { ref: 'release' }));
    expect(missingBranch.code).toBe('ref_not_found');
    expect(missingBranch.message).toBe(`${platform.gitUrl} has no branch, tag or commit "release"`);
    expect((await refusal(fetchOverGit(platform, { ref: 'f'.repeat(40) }))).code).toBe('ref_not_found');
    const marker = path.join(os.tmpdir(), `bosun-git-injected-${process.pid}`);
    const injected = await refusal(fetchOverGit(platform, { ref: `--upload-pack=touch ${marker}` }));
    expect(injected.code).toBe('ref_not_found');
    expect(() => readFileSync(marker)).toThrow();

    const missingPath = await refusal(fetchOverGit(platform, { path: 'deploy/' }));
    expect(missingPath.code).toBe('path_not_found');
    expect(missingPath.message).toBe(`The repository has no "deploy" at ${firstSha.slice(0, 12)}`);
    expect((await refusal(fetchOverGit(platform, { path: 'bosun/../../etc' }))).code).toBe('path_not_found');
  });

  test('a definition file over 5 MiB, or more than 2,000 of them, is refused naming the limit', async () => {
    const big = await server.repository('big');
    await big.commit({ 'bosun/huge.yaml': `# ${'x'.repeat(5 * 1024 * 1024)}\n` });
    const tooBig = await refusal(fetchOverGit(big));
    expect(tooBig.code).toBe('too_large');
    expect(tooBig.message).toBe('bosun/huge.yaml is 5242883 bytes: a definition file may be at most 5242880 (5 MiB)');

    const many = await server.repository('many');
    await many.commit(Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`bosun/team-${i}.yaml`, `kind: Team\nname: team-${i}\nspec: {}\n`])));
    const tooMany = await refusal(fetchOverGit(many));
    expect(tooMany.code).toBe('too_large');
    expect(tooMany.message).toBe('bosun holds 2001 definition files: at most 2000 are read');
  });

  test('ssh with a deploy key and the pinned host key fetches the same files; a passphrase opens an encrypted deploy key', async () => {
    const fetched = await fetchOverSsh();
    expect(fetched.revision).toBe(firstSha);
    expect(fetched.files.map((file) => file.path)).toEqual(['bosun/deploy/web.yaml', 'bosun/teams.yml']);

    const encrypted = newDeployKey('correct passphrase 7');
    authorizeKey(sshd.info, encrypted.publicKey);
    const withPassphrase = await fetchOverSsh({ credentials: { type: 'ssh_key', private_key: encrypted.privateKey, passphrase: 'correct passphrase 7' } });
    expect(withPassphrase.revision).toBe(firstSha);

    const wrongPassphrase = await refusal(fetchOverSsh({ credentials: { type: 'ssh_key', private_key: encrypted.privateKey, passphrase: 'wrong passphrase 8' } }));
    expect(wrongPassphrase.code).toBe('authentication_failed');
    expect(shown(wrongPassphrase)).not.toContain('wrong passphrase 8');
  });

  test('a host key not pinned is refused with the key and fingerprint the host offers; another key than the pinned one is refused', async () => {
    const hostKeyFile = path.join(sshd.info.dir, 'host_ed25519.pub');
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', hostKeyFile], { encoding: 'utf8' }).split(' ')[1];
    const offered = { key: readFileSync(hostKeyFile, 'utf8').split(' ').slice(0, 2).join(' '), fingerprint };

    const unknown = await refusal(fetchOverSsh({ hostKey: null }));
    expect(unknown.code).toBe('host_key_unknown');
    expect(unknown.offered).toEqual(offered);
    expect(unknown.message).toContain(`offers host key ${fingerprint}`);

    const otherKey = newDeployKey().publicKey;
    const mismatch = await refusal(fetchOverSsh({ hostKey: otherKey }));
    expect(mismatch.code).toBe('host_key_mismatch');
    expect(mismatch.offered).toEqual(offered);
    const pinnedFingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', '-'], { input: otherKey, encoding: 'utf8' }).split(' ')[1];
    expect(mismatch.message).toContain(`expected ${pinnedFingerprint}, got ${fingerprint}`);
  });

  test('a deploy key the host does not accept is authentication_failed, and the key is nowhere in the error', async () => {
    const stranger = newDeployKey();
    const refused = await refusal(fetchOverSsh({ credentials: { type: 'ssh_key', private_key: stranger.privateKey } }));
    expect(refused.code).toBe('authentication_failed');
    expect(refused.message).toMatch(/refused the credentials: .*Permission denied \(publickey/);
    const keyLines = stranger.privateKey.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
    expect(keyLines.length).toBeGreaterThan(0);
    for (const line of keyLines) expect(shown(refused)).not.toContain(line);
    expect(shown(refused)).not.toContain('PRIVATE KEY');
  });

  test('a port nobody listens on is unreachable, over git:// and over ssh', async () => {
    const port = await closedPort();
    const overGit = await refusal(fetchRepositoryFiles({ url: `git://127.0.0.1:${port}/platform.git`, ref: 'main', path: '', credentials: null, hostKey: null, timeoutMs: 30_000 }));
    expect(overGit.code).toBe('unreachable');
    expect(overGit.message).toMatch(/Connection refused/);
    const { hostKey } = platform.overSsh(sshd.info);
    const sshUrl = `ssh://${sshd.info.username}@127.0.0.1:${port}${platform.dir}`;
    const credentials = { type: 'ssh_key' as const, private_key: deployKey.privateKey };
    const overSsh = await refusal(fetchRepositoryFiles({ url: sshUrl, ref: 'main', path: '', credentials, hostKey, timeoutMs: 30_000 }));
    expect(overSsh.code).toBe('unreachable');
    expect(overSsh.message).toMatch(/Connection refused/);
    expect((await refusal(fetchRepositoryFiles({ url: sshUrl, ref: 'main', path: '', credentials, hostKey: null, timeoutMs: 30_000 }))).code).toBe('unreachable');
  });

  test('file:// URLs, paths on this machine and plain http are refused before anything runs; scp-like addresses are ssh', async () => {
    for (const url of ['file:///srv/platform.git', '/srv/platform.git', './platform', 'platform.git', 'http://127.0.0.1/platform.git', 'ext::sh -c touch% /tmp/x', 'ssh://-oProxyCommand=touch/x']) {
      const refused = await refusal(fetchRepositoryFiles({ url, ref: 'main', path: '', credentials: null, hostKey: null, timeoutMs: 30_000 }));
      expect([url, refused.code]).toEqual([url, 'refused_url']);
    }
    expect(repositoryAddress('git@github.com:acme/platform.git')).toEqual({ transport: 'ssh', host: 'github.com', port: 22, user: 'git' });
    expect(repositoryAddress('ssh://deploy@[::1]:2222/srv/platform.git')).toEqual({ transport: 'ssh', host: '::1', port: 2222, user: 'deploy' });
  });

  test('a token travels by environment: never on a command line nor in the error; a fetch over its time limit is stopped with everything it started', async () => {
    const token = 'ghp_s3cretTokenValue0123456789';
    const connected: net.Socket[] = [];
    // Accepts and never answers: the fetch waits in its TLS handshake until the time limit.
    const silent = net.createServer((socket) => connected.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}/platform.git`;
    try {
      const fetching = refusal(fetchRepositoryFiles({ url, ref: 'main', path: '', credentials: { type: 'token', token }, hostKey: null, timeoutMs: 5_000 }));
      await eventually(async () => connected.length, (count) => count > 0, 10_000);
      const lines = commandLines();
      expect(lines.filter((line) => line.includes(url)).length).toBeGreaterThan(0);
      expect(lines.filter((line) => line.includes(token) || line.includes(Buffer.from(`x-access-token:${token}`).toString('base64')))).toEqual([]);

      const timedOut = await fetching;
      expect(timedOut.code).toBe('timed_out');
      expect(timedOut.message).toBe(`Fetching main from ${url} took longer than 5 s`);
      expect(shown(timedOut)).not.toContain(token);
      expect(commandLines().filter((line) => line.includes(url))).toEqual([]);
    } finally {
      connected.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('an abort stops the fetch with the signal’s reason; no temporary folder outlives a fetch, whatever its end', async () => {
    const previousTmp = process.env.TMPDIR;
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'bosun-git-fetch-test-'));
    const connected: net.Socket[] = [];
    const silent = net.createServer((socket) => connected.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    process.env.TMPDIR = tmp;
    try {
      await fetchOverGit(platform);
      await refusal(fetchOverGit(platform, { ref: 'release' }));
      const controller = new AbortController();
      const url = `git://127.0.0.1:${(silent.address() as net.AddressInfo).port}/platform.git`;
      const fetching = fetchRepositoryFiles({ url, ref: 'main', path: '', credentials: null, hostKey: null, timeoutMs: 30_000, signal: controller.signal });
      await eventually(async () => connected.length, (count) => count > 0, 10_000);
      const reason = new Error('sync cancelled');
      controller.abort(reason);
      await expect(fetching).rejects.toBe(reason);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      process.env.TMPDIR = previousTmp;
      connected.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
