#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx bosun ...` works in a checkout without a build step.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const root = path.join(__dirname, '..', '..');
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', path.join(root, 'src/cli/index.ts'), ...process.argv.slice(2)],
  { stdio: 'inherit', cwd: process.cwd() },
);
process.exit(result.status ?? 1);
