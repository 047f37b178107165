#!/usr/bin/env node
// Compiles src/, workflows/ and activities/ to dist/: each TypeScript file to one CommonJS file beside
// where tsc would put it (tsconfig.build.json's outDir), transpiled by esbuild, as tsx does when
// developing: about a second, where tsc took half a minute checking types on the way (that check is
// `npm run typecheck`, part of `npm test`). Run by `npm run build` and by `npm install` / `npm ci` (the
// `prepare` script); `bosun` and `npm start` call ensureBuilt(), which compiles only when a source is
// newer than the last build. One build at a time (a lock file), and dist/.built records when the last
// one started, so an edit made during a build is compiled next time.
const { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..', '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.built');
const lock = path.join(dist, '.build.lock');
const SOURCES = ['src', 'workflows', 'activities'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The newest modification time of what the build reads (a folder's too: a source removed or renamed changes it). */
function newestSource() {
  let newest = 0;
  const visit = (dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (/\.(ts|json)$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCES) if (existsSync(path.join(root, dir))) visit(path.join(root, dir));
  for (const file of SETTINGS) if (existsSync(path.join(root, file))) newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

const isFresh = () => existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource();

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A live process; a zombie (exited, never reaped where pid 1 reaps no orphans) is not one. */
const alive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
};

/** Takes the build lock, waiting while another live process holds it; a dead holder's lock is taken over. */
function acquireLock() {
  mkdirSync(dist, { recursive: true });
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(lock, 'utf8'));
    } catch {
      continue; // released meanwhile
    }
    // An empty file is a holder between creating and writing it: wait for it like a live one.
    if (holder && !alive(holder)) {
      try {
        unlinkSync(lock);
      } catch {}
      continue;
    }
    sleep(100);
  }
}

function releaseLock() {
  try {
    unlinkSync(lock);
  } catch {}
}

/**
 * Removes what an earlier build emitted for a source that is gone (moved, renamed, deleted): a build
 * leaves it behind, and node would load it — `access/gate.js` of an old layout is found before the
 * `access/gate/index.js` of the new one.
 */
function pruneStale() {
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.js')) {
        const source = path.join(root, path.relative(dist, full)).slice(0, -'.js'.length);
        if (!existsSync(`${source}.ts`) && !existsSync(`${source}.tsx`)) unlinkSync(full);
      }
    }
  };
  for (const dir of SOURCES) if (existsSync(path.join(dist, dir))) visit(path.join(dist, dir));
}

/** The TypeScript sources of the build: src/ (but the console's app, bundled apart), workflows/, activities/. */
function sources() {
  const found = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (full !== path.join(root, 'src', 'console', 'app')) visit(full);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(full);
    }
  };
  for (const dir of SOURCES) if (existsSync(path.join(root, dir))) visit(path.join(root, dir));
  return found;
}

/**
 * Transpiles every source to dist/ and stamps the build with its start time. Returns 0, 1 when a
 * source does not compile (its errors on stderr; nothing is stamped, so the next call tries again),
 * or 'missing' when esbuild is not installed. What tsc's CommonJS emit does, esbuild does here too:
 * `import()` of a module becomes a require (node would otherwise resolve it as ECMAScript modules,
 * without extensions), and package.json, which the API reads its version from, is copied beside.
 * `quiet`: the caller's stdout is someone's answer (esbuild reports on stderr alone).
 */
function compile({ quiet }) {
  let esbuild;
  try {
    esbuild = require(require.resolve('esbuild', { paths: [root] }));
  } catch {
    return 'missing';
  }
  const started = new Date();
  pruneStale();
  try {
    esbuild.buildSync({
      entryPoints: sources(),
      outdir: dist,
      outbase: root,
      format: 'cjs',
      platform: 'node',
      target: 'es2022',
      tsconfig: path.join(root, 'tsconfig.build.json'),
      supported: { 'dynamic-import': false },
      logLevel: quiet ? 'error' : 'warning',
    });
  } catch {
    return 1; // esbuild has said what does not compile
  }
  copyFileSync(path.join(root, 'package.json'), path.join(dist, 'package.json'));
  // What tsc kept between its incremental builds, in a dist/ made before esbuild did this.
  rmSync(path.join(dist, '.tsbuildinfo'), { force: true });
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
  return 0;
}

/**
 * `compile` in a child process: esbuild's sync API keeps a worker thread and its service (~150 MiB)
 * alive for the life of the process that called it — for `npm start`, Bosun's own.
 */
function compileInChild({ quiet }) {
  const child = spawnSync(process.execPath, [__filename, '--compile-only', quiet ? 'quiet' : 'loud'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (child.status === MISSING) return 'missing';
  return child.status === 0 ? 0 : 1;
}

/** The exit status of `--compile-only` when esbuild is not installed. */
const MISSING = 4;

/** Compiles when a source is newer than the last build (once, whoever else asks at the same time). */
function ensureBuilt({ quiet = true, label = 'bosun' } = {}) {
  if (isFresh()) return;
  acquireLock();
  try {
    if (isFresh()) return; // built by whoever held the lock
    process.stderr.write(`${label}: compiling to dist/ (sources changed since the last build)…\n`);
    const status = compileInChild({ quiet });
    if (status === 'missing') {
      if (existsSync(path.join(dist, 'src'))) return;
      releaseLock();
      process.stderr.write(`${label}: not built, and esbuild is not installed: run npm install\n`);
      process.exit(3);
    }
    if (status !== 0) {
      // Not the older build instead: it would run code the sources no longer say.
      releaseLock();
      process.stderr.write(`${label}: a source does not compile (esbuild's errors above): fix it, or go back to one that does\n`);
      process.exit(3);
    }
  } finally {
    releaseLock();
  }
}

module.exports = { ensureBuilt };

if (require.main === module && process.argv[2] === '--compile-only') {
  // compileInChild's child: its parent holds the lock.
  const status = compile({ quiet: process.argv[3] === 'quiet' });
  process.exit(status === 'missing' ? MISSING : status);
} else if (require.main === module) {
  acquireLock();
  let status;
  try {
    status = compile({ quiet: false });
  } finally {
    releaseLock();
  }
  if (status === 'missing') {
    process.stderr.write('build: esbuild is not installed: run npm install\n');
    process.exit(1);
  }
  process.exit(status);
}
