#!/usr/bin/env node
// `npm test`: the scale test on its own (`npm run test:scale`: it keeps the Temporal dev server busy),
// then jest, with the type check (`npm run typecheck`) running beside jest rather than before
// everything: the suite leaves a core partly idle while its tests wait on conditions, and the type
// check fills it (about a minute off the whole). A type error is said as soon as it is found, and
// again at the end; either failing fails the command. Arguments go to jest (`npm test -- test/http`).
const { spawn } = require('node:child_process');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', (error) => {
      process.stderr.write(`npm test: ${error.message}\n`);
      resolve(1);
    });
  });

async function main() {
  const scale = await run(npm, ['run', '--silent', 'test:scale']);
  if (scale !== 0) return scale;
  const typechecked = run(npm, ['run', '--silent', 'typecheck']).then((code) => {
    if (code !== 0) process.stderr.write('\nnpm test: the type check failed (its errors above); the tests go on, and the command fails\n\n');
    return code;
  });
  const tests = await run(process.execPath, [require.resolve('jest/bin/jest'), ...process.argv.slice(2)]);
  const typecheck = await typechecked;
  if (typecheck !== 0) process.stderr.write('npm test: the type check failed (its errors above)\n');
  return tests || typecheck;
}

main().then((code) => process.exit(code));
