import { randomBytes } from 'node:crypto';
import { activitySources, DuplicateActivityError } from '../../activities';
import { createLogger } from '../../src/logger';
import { RulesPlanner } from '../../src/domain/planner/rules';
import { SecretBox } from '../../src/domain/secrets/secret-box';
import { SshPool } from '../../src/domain/ssh/pool';
import { createWorker } from '../../src/worker/temporal-worker';
import { sharedServices } from '../support/shared';

/**
 * Every activity has one name, owned by one file. Before, `failStep` was defined by both the
 * deployment and the conversation activities, the later silently replaced the earlier, and a run
 * whose server vanished left its step `running` for ever.
 */
describe('activity names', () => {
  const log = createLogger('silent');
  const sshPool = new SshPool({ connectTimeoutMs: 1000, maxChannelsPerConnection: 1, log });
  const deps = { secretBox: new SecretBox(randomBytes(32)), sshPool, log, stepOutputLimitBytes: 1024, planner: new RulesPlanner(), healthIntervalSeconds: 60, wakeQueue: async () => undefined };
  const settings = () => ({ address: sharedServices().temporalAddress, namespace: 'default', taskQueue: `names-${randomBytes(3).toString('hex')}`, cacheDir: sharedServices().cacheDir, maxConcurrentSteps: 10 });
  afterAll(() => sshPool.close());

  test('no two files of activities/ register the same name', () => {
    const owners = new Map<string, string[]>();
    for (const { file, activities } of activitySources({ ...deps, handoffTaskQueue: 'q' })) {
      for (const name of Object.keys(activities)) owners.set(name, [...(owners.get(name) ?? []), file]);
    }
    expect([...owners].filter(([, files]) => files.length > 1)).toEqual([]);
    expect(owners.get('failRunStep')).toEqual(['activities/deployment-steps.ts']);
    expect(owners.get('failConversationStep')).toEqual(['activities/conversations.ts']);
  });

  test('the worker refuses to start when two files register one name, naming both', async () => {
    const clash = { file: 'activities/reports.ts', activities: { failRunStep: async () => undefined } };
    const refused = createWorker(settings(), deps, [clash]);
    await expect(refused).rejects.toThrow(DuplicateActivityError);
    await expect(refused).rejects.toThrow('Activity "failRunStep" is registered by both activities/deployment-steps.ts and activities/reports.ts');
  });

  test('with unique names it starts', async () => {
    const { worker, connection } = await createWorker(settings(), deps);
    const running = worker.run();
    worker.shutdown();
    await running;
    await connection.close();
  });
});
