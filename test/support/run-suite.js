#!/usr/bin/env node
// `npm test`: the scale test on its own (`npm run test:scale`: it keeps a Temporal dev server busy
// and waits on it, about one core of the two), then jest in two lanes at once, with the type check
// (`npm run typecheck`) beside them:
//
// - the main lane: jest's two workers on every file but the waiting ones below;
// - the waiting lane: a second jest, one file at a time, on the files that spend most of their time
//   waiting for a clock (a schedule's next tick, a killed worker's heartbeat or sticky timeout), not
//   computing: in the main lane each held a worker, and so half the machine, while it waited. Beside
//   it they cost about two fifths of their time in CPU. The lane has its own mongod, Temporal dev server
//   and sshd (its jest's global setup), so nothing of one lane is seen by the other.
//
// Nothing runs beside the scale test: the waiting lane stretched it from 82 s to 128, even a niced
// type check to 113, and no whole run was shorter for it; a niced type check beside the lanes, or
// three more files in the waiting lane, did not shorten the run either (single clean-clone runs,
// within the machine's own variation: docs/development.md).
// A type error is said as soon as it is found, and again at the end; any part failing fails the
// command. With arguments (`npm test -- test/http`), they go to one jest, which runs every file they
// name: no lanes, no scale test. At the end, the slowest files of both lanes, with the run's wall time.
const { spawn } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { printSlowest } = require('./slowest-files-reporter');

/**
 * The waiting lane's files, with why each waits (seconds quiet on 2 cores, alone: wall / CPU of the
 * whole jest process tree, services included; a file of the main lane is about wall = CPU).
 */
const WAITING_FILES = [
  // Schedules ticking on the wall clock (every 12 s, a crash across a minute's tick): 125 / 24.
  'test/e2e/schedules-embedded.test.ts',
  // A schedule every 15 s whose run outlasts it, then a tick's accounting after its window: 56 / 21.
  'test/schedules/overlap.test.ts',
  // Workers killed mid-step: the step's heartbeat timeout and the sticky queue's timeout: 65 / 35.
  'test/durability/guarded-worker-killed.test.ts',
  // Two Bosun nodes, one killed: the survivor takes its work after the same timeouts: 55 / 35.
  'test/durability/two-nodes.test.ts',
  // API and worker processes killed and restarted around runs: 43 / 24.
  'test/durability/processes.test.ts',
  // Unreachable and hanging servers: each bad target's step waits out its transport retries' backoff (~1 min, twice).
  'test/deployments/unreachable-targets.test.ts',
];

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const JEST = require.resolve('jest/bin/jest');
const run = (command, args, env = process.env) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', (error) => {
      process.stderr.write(`npm test: ${error.message}\n`);
      resolve(1);
    });
  });

/** The config's own ignore patterns, with more: a `--testPathIgnorePatterns` given replaces them. */
function ignoring(more) {
  const config = require(path.join(__dirname, '..', '..', 'package.json')).jest;
  return [...config.testPathIgnorePatterns, ...more].map((ignored) => `--testPathIgnorePatterns=${ignored}`);
}

/** A jest path pattern matching exactly this file of the repository. */
const pattern = (file) => `/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

async function main() {
  const args = process.argv.slice(2);
  const started = Date.now();
  const scale = args.length ? 0 : await run(npm, ['run', '--silent', 'test:scale']);
  if (scale !== 0) return scale;
  // Each lane's reporter writes its files' times here; they are said together at the end.
  const times = mkdtempSync(path.join(os.tmpdir(), 'bosun-test-times-'));
  const env = (lane) => ({ ...process.env, SLOWEST_FILES_OUT: path.join(times, `${lane}.json`) });
  const typechecked = run(npm, ['run', '--silent', 'typecheck']).then((code) => {
    if (code !== 0) process.stderr.write('\nnpm test: the type check failed (its errors above); the tests go on, and the command fails\n\n');
    return code;
  });
  const waiting = WAITING_FILES.map(pattern);
  const lanes = args.length
    ? [run(process.execPath, [JEST, ...args], env('jest'))]
    : [run(process.execPath, [JEST, ...ignoring(waiting)], env('main')), run(process.execPath, [JEST, '--maxWorkers=1', ...waiting], env('waiting'))];
  const codes = await Promise.all(lanes);
  // A lane that ended before its reporter wrote has no file here (its exit code fails the command).
  const files = readdirSync(times).flatMap((name) => JSON.parse(readFileSync(path.join(times, name), 'utf8')));
  rmSync(times, { recursive: true, force: true });
  printSlowest(files, (Date.now() - started) / 1000, Number(process.env.SLOWEST_FILES ?? 10));
  const typecheck = await typechecked;
  if (typecheck !== 0) process.stderr.write('npm test: the type check failed (its errors above)\n');
  return codes.find((code) => code !== 0) || typecheck;
}

main().then((code) => process.exit(code));
