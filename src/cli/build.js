#!/usr/bin/env node
// Compiles src/, workflows/ and activities/ to dist/ (tsconfig.build.json). Run by `npm run build` and
// by `npm install` / `npm ci` (the `prepare` script); `bosun` and `npm start` call ensureBuilt(), which
// compiles only when a source is newer than the last build. One build at a time (a lock file), and
// dist/.built records when the last one started, so an edit made during a build is compiled next time.
const { spawnSync } = require('node:child_process');
const { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, unlinkSync, utimesSync, writeFileSync } = require('node:fs');
const path = require('node:path');

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
 * Removes what an earlier build emitted for a source that is gone (moved, renamed, deleted): tsc
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

/**
 * Runs tsc and stamps the build with its start time. Returns tsc's exit status (non-zero with type
 * errors, the JavaScript being emitted all the same), or 'missing' when TypeScript is not installed.
 * `quiet`: tsc's report (on its stdout) is not shown: the caller's stdout is someone's answer.
 */
function compile({ quiet }) {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    return 'missing';
  }
  const started = new Date();
  pruneStale();
  const built = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
  });
  if (built.status === null) return 1; // killed: not stamped, so the next call builds again
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
  return built.status;
}

/** Compiles when a source is newer than the last build (once, whoever else asks at the same time). */
function ensureBuilt({ quiet = true, label = 'bosun' } = {}) {
  if (isFresh()) return;
  acquireLock();
  try {
    if (isFresh()) return; // built by whoever held the lock
    process.stderr.write(`${label}: compiling to dist/ (sources changed since the last build)…\n`);
    const status = compile({ quiet });
    if (status === 'missing') {
      if (existsSync(path.join(dist, 'src'))) return;
      releaseLock();
      process.stderr.write(`${label}: not built, and TypeScript is not installed: run npm install\n`);
      process.exit(3);
    }
    if (status !== 0) process.stderr.write(`${label}: the build reported type errors (npm run build shows them); running what it emitted\n`);
  } finally {
    releaseLock();
  }
}

module.exports = { ensureBuilt };

if (require.main === module) {
  acquireLock();
  let status;
  try {
    status = compile({ quiet: false });
  } finally {
    releaseLock();
  }
  if (status === 'missing') {
    process.stderr.write('build: TypeScript is not installed (a devDependency): run npm install\n');
    process.exit(1);
  }
  process.exit(status);
}
