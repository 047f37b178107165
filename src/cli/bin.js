#!/usr/bin/env node
// The `bosun` command: runs the CLI compiled to dist/ (by `npm install`/`npm ci`, through the
// `prepare` script) with plain node, so a CI job pays about the cost of starting node. Sources newer
// than the last build (a `git pull` without `npm install`) are compiled first, once.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const compiled = path.join(root, 'dist', 'src', 'cli', 'index.js');
const stamp = path.join(root, 'dist', '.tsbuildinfo');

/** The newest modification time of the compiled sources (and the build's settings). */
function newestSource() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of ['src', 'workflows', 'activities']) if (existsSync(path.join(root, dir))) visit(path.join(root, dir));
  for (const file of ['tsconfig.json', 'tsconfig.build.json']) if (existsSync(path.join(root, file))) newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

const fresh = existsSync(compiled) && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource();
if (!fresh) {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    tsc = null;
  }
  if (tsc) {
    process.stderr.write('bosun: compiling the CLI (its sources changed since the last build)…\n');
    const built = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
    if (built.status !== 0) {
      process.stderr.write('bosun: the build failed (npm run build shows why)\n');
      process.exit(3);
    }
  } else if (!existsSync(compiled)) {
    process.stderr.write('bosun: not built, and TypeScript is not installed: run npm install\n');
    process.exit(3);
  }
}
require(compiled);
