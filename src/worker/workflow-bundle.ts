import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import { DEFAULT_HEARTBEAT_TIMEOUT_SECONDS, HEARTBEAT_TIMEOUT_DEFINE } from '../domain/contracts/heartbeats';

/**
 * The workflows' sources: beside this file's folder's parent in a checkout; run from dist/ (`npm
 * start`), the checkout's sources still, so that a start from dist/ and one through tsx share one
 * cached bundle; the compiled JavaScript where there are no sources (an image that carries dist/ alone).
 */
const WORKFLOWS_DIR =
  [path.resolve(__dirname, '../../workflows'), path.resolve(__dirname, '../../../workflows')].find((dir) => existsSync(path.join(dir, 'index.ts'))) ??
  path.resolve(__dirname, '../../workflows');
/** What the workflows import besides their own folder (the lowest layer's contracts): the bundle changes with it too. */
const CONTRACTS_DIR = path.resolve(WORKFLOWS_DIR, '../src/domain/contracts');

/** Writes the workflows' webpack bundle to `codePath` (whole, or not at all). */
async function writeBundle(codePath: string, heartbeatTimeoutMs: number): Promise<void> {
  const { bundleWorkflowCode, DefaultLogger } = await import('@temporalio/worker');
  const { code } = await bundleWorkflowCode({
    // The sources in a checkout; the compiled JavaScript in an image that runs dist/.
    workflowsPath: path.join(WORKFLOWS_DIR, existsSync(path.join(WORKFLOWS_DIR, 'index.ts')) ? 'index.ts' : 'index.js'),
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => {
      // The worker's heartbeat timeout, a constant of this bundle (webpack ships with the SDK's bundler).
      const { DefinePlugin } = require('webpack') as typeof import('webpack');
      config.plugins = [...(config.plugins ?? []), new DefinePlugin({ [HEARTBEAT_TIMEOUT_DEFINE]: JSON.stringify(heartbeatTimeoutMs) })];
      return config;
    },
  });
  mkdirSync(path.dirname(codePath), { recursive: true });
  const partial = `${codePath}.${process.pid}.tmp`;
  writeFileSync(partial, code);
  renameSync(partial, codePath);
}

/**
 * Bundles in a child process: webpack's ~140 MiB would otherwise stay in the worker's heap for good
 * (a cold start's process was 407 MiB against a warm one's 267). False when no child could be
 * started (the caller bundles here instead); rejects with the bundler's error.
 */
function bundleInChild(codePath: string, heartbeatTimeoutMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const child = fork(__filename, [codePath, String(heartbeatTimeoutMs)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    child.on('error', () => resolve(false));
    child.on('exit', (code) => {
      if (code === 0 && existsSync(codePath)) resolve(true);
      else reject(new Error(`bundling the workflows failed (exit ${code}): ${stderr.trim()}`));
    });
  });
}

/**
 * Bundling the workflows with webpack takes seconds; the bundle is cached under BOSUN_HOME, keyed by
 * the workflow sources, the contracts they import, the SDK version and the settings written into it
 * (the heartbeat timeout, workflows/heartbeats.ts), so a warm start skips it.
 */
export async function cachedWorkflowBundle(
  cacheDir: string,
  log: Logger,
  { heartbeatTimeoutSeconds = DEFAULT_HEARTBEAT_TIMEOUT_SECONDS }: { heartbeatTimeoutSeconds?: number } = {},
): Promise<{ codePath: string }> {
  const heartbeatTimeoutMs = heartbeatTimeoutSeconds * 1000;
  const hash = createHash('sha256');
  hash.update(require('@temporalio/workflow/package.json').version as string);
  hash.update(`heartbeat:${heartbeatTimeoutMs}`);
  for (const dir of [WORKFLOWS_DIR, CONTRACTS_DIR]) {
    for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(path.join(dir, file)));
  }
  const codePath = path.join(cacheDir, `workflow-bundle-${hash.digest('hex').slice(0, 16)}.js`);
  if (!existsSync(codePath)) {
    log.info('bundling workflows (first start after a change)');
    // Compiled (`npm start`, dist/), node runs this file as the child; loaded as TypeScript (tsx, jest), it bundles here.
    const inChild = __filename.endsWith('.js') && (await bundleInChild(codePath, heartbeatTimeoutMs));
    if (!inChild) await writeBundle(codePath, heartbeatTimeoutMs);
  }
  return { codePath };
}

// Run as the child of bundleInChild: `node workflow-bundle.js <codePath> <heartbeatTimeoutMs>`.
if (require.main === module) {
  const [codePath, heartbeatTimeoutMs] = process.argv.slice(2);
  if (!codePath || !heartbeatTimeoutMs) process.exit(2);
  writeBundle(codePath, Number(heartbeatTimeoutMs)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
