import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { SEARCH_ATTRIBUTES } from '../../src/domain/contracts/search-attributes';
import { sharedServices } from './shared';
import { startTestServer, type TestServer } from './time-skipping-server';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Mocks = Record<string, (input: any) => Promise<unknown>>;

/** The SDK's own environment factory, pointed at a server already running: it is private in its types. */
type CreateEnvironment = (options: { server: { type: 'existing' }; address: string; namespace: string; supportsTimeSkipping: true }) => Promise<TestWorkflowEnvironment>;

/**
 * A time-skipping Temporal of a test file's own: the Java test server (see time-skipping-server.ts)
 * and the SDK's TestWorkflowEnvironment on it. Time stands still but for the wall clock until a test
 * skips it: `env.sleep(…)`, or awaiting a workflow's `result()` (skips to each next timer).
 */
export class TimeSkippingTemporal {
  private constructor(
    readonly env: TestWorkflowEnvironment,
    private readonly server: TestServer,
    private readonly workflowBundle: { codePath: string },
  ) {}

  static async start(): Promise<TimeSkippingTemporal> {
    const log = createLogger('silent');
    installTemporalRuntime(log);
    const { cacheDir } = sharedServices();
    const [server, workflowBundle] = await Promise.all([startTestServer(cacheDir), cachedWorkflowBundle(cacheDir, log)]);
    try {
      // We start the JVM ourselves (the SDK would wait 5 s at most for it), so the SDK connects to it as
      // to an existing server, with its time-skipping client and test service on.
      const create = (TestWorkflowEnvironment as unknown as { create?: CreateEnvironment }).create;
      if (typeof create !== 'function') throw new Error('@temporalio/testing no longer has TestWorkflowEnvironment.create: see test/support/time-skipping.ts');
      const env = await create.call(TestWorkflowEnvironment, { server: { type: 'existing' }, address: server.address, namespace: 'default', supportsTimeSkipping: true });
      // Bosun's workflows set its search attributes: the test server refuses (silently, for a child) any not registered.
      await env.connection.operatorService.addSearchAttributes({
        namespace: 'default',
        searchAttributes: Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((key) => [key.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
      });
      return new TimeSkippingTemporal(env, server, workflowBundle);
    } catch (error) {
      await server.process.stop(5_000);
      throw error;
    }
  }

  /** The server's clock (skipped time included). */
  now(): Promise<number> {
    return this.env.currentTimeMs();
  }

  /**
   * Runs `body` with a worker whose activities are `mocks`, on a task queue of its own: of Bosun's
   * workflows (the cached bundle), or of the test's own stand-ins (`workflowsPath`, bundled here).
   */
  async withWorker<T>(mocks: Mocks, body: (taskQueue: string) => Promise<T>, workflowsPath?: string): Promise<T> {
    const taskQueue = `time-skipping-${randomBytes(4).toString('hex')}`;
    const workflows = workflowsPath ? { workflowsPath } : { workflowBundle: this.workflowBundle };
    // Its workflows in the test's own thread (debugMode: the same sandbox), not a worker thread started for each test.
    const worker = await Worker.create({ connection: this.env.nativeConnection, namespace: 'default', taskQueue, ...workflows, activities: mocks, debugMode: true });
    return worker.runUntil(() => body(taskQueue));
  }

  async stop(): Promise<void> {
    await this.env.teardown();
    await this.server.process.stop(5_000);
  }
}

/**
 * A test file's own time-skipping Temporal, started before its tests and stopped after them: the
 * getter answers it once started.
 */
export function useTimeSkippingTemporal(): () => TimeSkippingTemporal {
  let temporal: TimeSkippingTemporal | undefined;
  beforeAll(async () => {
    temporal = await TimeSkippingTemporal.start();
  }, 300_000);
  afterAll(async () => {
    await temporal?.stop();
  });
  return () => temporal!;
}
