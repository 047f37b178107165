// jest's transform of the tests and the sources they load: each TypeScript file (and the few ECMAScript
// modules of node_modules jest must load as CommonJS) transpiled by esbuild to CommonJS, with an
// inline source map so that a failure points at the TypeScript line. What `npm run build` does for
// dist/ (src/cli/build.js), and tsx when developing; the type check is `npm run typecheck`.
const { createHash } = require('node:crypto');
const esbuild = require('esbuild');

const OPTIONS = { format: 'cjs', platform: 'node', target: 'es2022', sourcemap: 'inline', supported: { 'dynamic-import': false } };
const VERSION = `${esbuild.version}:${JSON.stringify(OPTIONS)}`;

module.exports = {
  process(source, filename) {
    const loader = filename.endsWith('.ts') ? 'ts' : filename.endsWith('.tsx') ? 'tsx' : 'js';
    const { code } = esbuild.transformSync(source, { ...OPTIONS, loader, sourcefile: filename });
    return { code };
  },
  getCacheKey(source, filename) {
    return createHash('sha1').update(VERSION).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};
