#!/usr/bin/env node
// The `bosun` command: runs the CLI compiled to dist/ (by `npm install` / `npm ci` through the
// `prepare` script) with plain node, so a CI job pays about the cost of starting node. Sources newer
// than the last build (a `git pull` without `npm install`) are compiled first, once (build.js).
const path = require('node:path');

require('./build').ensureBuilt();
require(path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'index.js'));
