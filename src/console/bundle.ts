import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, stop } from 'esbuild';
import type { Logger } from '../logger';

// The sources in a checkout; from dist/src/console (an image running the compiled code), the checkout's.
const APP_DIR = [path.join(__dirname, 'app'), path.resolve(__dirname, '..', '..', '..', 'src', 'console', 'app')].find((dir) => existsSync(dir)) ?? path.join(__dirname, 'app');

export interface ConsoleBundle {
  /** The built files (app-<hash>.js, app-<hash>.css), served under /console/. */
  dir: string;
  /** The page every console URL answers with. */
  indexHtml: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? sourceFiles(full) : [full];
    });
}

/** A relative import that is not type-only (those are erased): `import { x } from './y'`, `export { x } from '../y'`. */
const VALUE_IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?\sfrom\s+'(\.[^']+)'/gm;

/**
 * What the bundle is made of: the app's files, and the files outside it that they import as values
 * (the live-run protocol the CLI shares, src/domain/follow-run.ts), so a change of those bundles again too.
 */
function bundledFiles(dir: string): string[] {
  const files = new Set(sourceFiles(dir));
  const queue = [...files];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (!/\.tsx?$/.test(file)) continue;
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(VALUE_IMPORT)) {
      const base = path.resolve(path.dirname(file), spec!);
      const found = [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate));
      if (found && !files.has(found)) {
        files.add(found);
        queue.push(found);
      }
    }
  }
  return [...files].sort();
}

const page = (script: string, style: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bosun</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/console/${style}">
<script type="module" src="/console/${script}"></script>
</head>
<body>
<div id="app"><noscript>The Bosun console needs JavaScript. The HTTP API is at <a href="/docs">/docs</a>.</noscript></div>
</body>
</html>
`;

/**
 * The console's front end, bundled by esbuild from src/console/app on the first start after a change
 * (as the workflow bundle is), into the cache: no build step anyone has to remember, no network.
 */
export async function consoleBundle(cacheDir: string, log: Logger): Promise<ConsoleBundle> {
  const hash = createHash('sha256');
  for (const pkg of ['preact', 'socket.io-client', 'esbuild']) hash.update(require(`${pkg}/package.json`).version as string);
  for (const file of bundledFiles(APP_DIR)) hash.update(path.relative(APP_DIR, file)).update(readFileSync(file));
  // The page's own markup too: a change of its head is a new bundle.
  hash.update(page('', ''));
  const id = hash.digest('hex').slice(0, 16);
  const dir = path.join(cacheDir, `console-${id}`);
  const names = { script: `app-${id}.js`, style: `app-${id}.css` };
  if (!existsSync(path.join(dir, 'index.html'))) {
    log.info('bundling the console (first start after a change)');
    const partial = `${dir}.${process.pid}.tmp`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    await build({
      entryPoints: { [`app-${id}`]: path.join(APP_DIR, 'main.tsx') },
      bundle: true,
      format: 'esm',
      target: ['chrome115', 'firefox115', 'safari16'],
      minify: true,
      sourcemap: 'linked',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      outdir: partial,
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
    }).finally(() => stop()); // esbuild's service (a child of ~150 MiB) would otherwise live as long as Bosun
    writeFileSync(path.join(partial, 'index.html'), page(names.script, names.style));
    try {
      renameSync(partial, dir);
    } catch (error) {
      // Another process built the same bundle meanwhile.
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(path.join(dir, 'index.html'))) throw error;
    }
  }
  return { dir, indexHtml: readFileSync(path.join(dir, 'index.html'), 'utf8') };
}
