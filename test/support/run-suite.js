#!/usr/bin/env node
// `npm test`: jest in two lanes at once, with the type check (`npm run typecheck`) beside them:
//
// - the main lane: jest's two workers on every file but those of the second lane;
// - the second lane: another jest, one file at a time, on the scale test (test/scale/: it keeps a
//   Temporal dev server busy, so it runs on this lane's own, alone) and on the files that spend
//   most of their time waiting for a clock (a schedule's next tick, a killed worker's heartbeat or
//   sticky timeout, a delivery's retry), not computing: in the main lane each held a worker, and so
//   half the machine, while it waited. The lane has its own mongod, Temporal dev server and sshd (its
//   jest's global setup), so nothing of one lane is seen by the other.
//
// A type error is said as soon as it is found, and again at the end; any part failing fails the
// command. With arguments (`npm test -- test/http`), they go to one jest, which runs every file they
// name: no lanes. At the end, the slowest files of both lanes, with the run's wall time.
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { printSlowest } = require('./slowest-files-reporter');

/**
 * The second lane's files, with why each waits (seconds quiet on 2 cores, alone: wall / CPU of the
 * whole jest process tree, services included, less a unit file's 6 / 6; a main-lane file is about
 * wall = CPU).
 */
const SECOND_LANE = [
  // 1,100 targets' workflows on the dev server (82 s in a whole run): alone on this lane's Temporal.
  'test/scale/fleet-history.test.ts',
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
  // A fleet run's gate timers, their updates reaching the workflow at the task's heartbeat: 37 / 18.
  'test/workflows/fleet-gate-timers.test.ts',
  // Deliveries refused and retried after their backoff (1 s, doubling): 32 / 18.
  'test/notifications/channels.test.ts',
  // Approval gates and their timeouts: 24 / 14.
  'test/deployments/gates.test.ts',
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
  return [...config.testPathIgnorePatterns, ...more].map((pattern) => `--testPathIgnorePatterns=${pattern}`);
}

/** A jest path pattern matching exactly this file of the repository. */
const pattern = (file) => `/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

async function main() {
  const typechecked = run(npm, ['run', '--silent', 'typecheck']).then((code) => {
    if (code !== 0) process.stderr.write('\nnpm test: the type check failed (its errors above); the tests go on, and the command fails\n\n');
    return code;
  });
  const args = process.argv.slice(2);
  const started = Date.now();
  // Each lane's reporter writes its files' times here; they are said together at the end.
  const times = mkdtempSync(path.join(os.tmpdir(), 'bosun-test-times-'));
  const env = (lane) => ({ ...process.env, SLOWEST_FILES_OUT: path.join(times, `${lane}.json`) });
  const lanes = args.length
    ? [run(process.execPath, [JEST, ...args], env('jest'))]
    : [
        run(process.execPath, [JEST, ...ignoring(SECOND_LANE.map(pattern))], env('main')),
        // The scale test is left out of jest's own configuration (a plain `jest` runs without it). The
        // files come before the option: an array option takes the arguments after it as its own.
        run(process.execPath, [JEST, '--maxWorkers=1', ...SECOND_LANE.map(pattern), '--testPathIgnorePatterns=/node_modules/'], env('second')),
      ];
  const codes = await Promise.all(lanes);
  const files = [];
  for (const lane of ['jest', 'main', 'second']) {
    try {
      files.push(...JSON.parse(readFileSync(path.join(times, `${lane}.json`), 'utf8')));
    } catch {
      // That lane did not run, or ended before its reporter wrote.
    }
  }
  rmSync(times, { recursive: true, force: true });
  printSlowest(files, (Date.now() - started) / 1000, Number(process.env.SLOWEST_FILES ?? 10));
  const typecheck = await typechecked;
  if (typecheck !== 0) process.stderr.write('npm test: the type check failed (its errors above)\n');
  return codes.find((code) => code !== 0) || typecheck;
}

main().then((code) => process.exit(code));
