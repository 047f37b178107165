import path from 'node:path';
import { installTestServer, TEST_SERVER_VERSION } from './time-skipping-server';

/** `npm run fetch-test-server` (CI runs it before the tests): the time-skipping test server's jars, into the cache the tests use. */
const cacheDir = path.resolve(process.env.BOSUN_CACHE_DIR ?? '.bosun/cache');
installTestServer(cacheDir).then(
  (lib) => process.stdout.write(`temporal-test-server ${TEST_SERVER_VERSION} ${lib}\n`),
  (error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  },
);
