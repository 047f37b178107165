#!/usr/bin/env node
// `npm start` (and `npm run api` / `npm run worker`): Bosun compiled to dist/ (by `npm install` /
// `npm ci` through the `prepare` script) run by plain node, which starts in half the CPU time of
// loading the TypeScript sources through tsx. Sources newer than the last build (an edit, a `git
// pull` without `npm install`) are compiled first, once (build.js). npm runs this with `exec`, so
// signals reach Bosun itself.
const path = require('node:path');

require('./build').ensureBuilt({ quiet: false });
require(path.join(__dirname, '..', '..', 'dist', 'src', 'main.js'));
