import { startBosun, type Bosun, type BosunOptions } from '../support/bosun';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';

/**
 * Runs a bench on the test run's real services (mongod, Temporal dev server, sshd) with one Bosun
 * in this process, measured without the tests' debug log; exits 0, or 1 with the error.
 */
export function runBench(options: BosunOptions, body: (bosun: Bosun) => Promise<void>): void {
  process.env.TEST_LOG_LEVEL ??= 'silent';
  const run = async () => {
    await globalSetup();
    const bosun = await startBosun(options);
    try {
      await body(bosun);
    } finally {
      await bosun.stop();
      await globalTeardown();
    }
  };
  void run().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
