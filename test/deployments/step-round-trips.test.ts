import { MongoClient, type Document } from 'mongodb';
import { startBosun, type Bosun } from '../support/bosun';
import { eventually } from '../support/eventually';
import { userWithToken, type User } from '../support/client';

/*
 * What a run costs MongoDB, counted by mongod's own profiler on this Bosun's database: every
 * operation that names the run or its server, from the trigger to the turn given back. The audit
 * chainer's rounds (a second apart, shared by every run) are left out; docs/performance.md lists
 * each operation of a step.
 */

describe('MongoDB round trips of a run', () => {
  let bosun: Bosun;
  let ci: User;
  let serverId: string;
  let mongo: MongoClient;

  beforeAll(async () => {
    // No health check of the server inside the counted window.
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    ci = userWithToken(bosun, await bosun.token('round-trips'));
    serverId = await ci.addServer();
    mongo = new MongoClient(bosun.mongoUri, { appName: 'round-trip-count' });
  });
  afterAll(async () => {
    await mongo.close();
    ci.close();
    await bosun.stop();
  });

  /** The profiled operations naming `runId` or the server, as `op collection` (and a command's name). */
  async function operationsOf(runId: string): Promise<string[]> {
    const profiled = await mongo.db().collection('system.profile').find({ appName: { $ne: 'round-trip-count' } }).toArray();
    const ours = (op: Document) => {
      const text = JSON.stringify(op.command ?? {});
      return text.includes(runId) || text.includes(serverId);
    };
    const chainers = (op: Document) => op.ns.endsWith('.audit') || (op.ns.endsWith('.audit_pending') && op.op === 'remove');
    return profiled.filter((op) => ours(op) && !chainers(op)).map((op) => `${op.op} ${op.ns.split('.').slice(1).join('.')}${op.op === 'command' ? ` ${Object.keys(op.command)[0]}` : ''}`);
  }

  test('a run of 5 steps on one server: 4 per step (its read, its entry, its result, its outcome) and 15 for the run', async () => {
    const { id } = await ci.defineDeployment(serverId, [1, 2, 3, 4, 5].map((n) => ({ name: `step${n}`, command: 'true' })));
    await ci.runToEnd(id); // warm: the SSH connection, the workflow cache
    await mongo.db().command({ profile: 2 });
    const { run_id: runId } = await ci.trigger(id);
    const watched = await ci.subscribe(runId);
    await watched.until((event) => event.status === 'success');
    // Done once the turn is given back and the last step's outcome is written.
    const ops = await eventually(
      () => operationsOf(runId),
      (list) => list.includes('command servers findAndModify') && list.filter((op) => op === 'update audit_pending').length >= 6,
    );
    await mongo.db().command({ profile: 0 });
    const count = (what: string) => ops.filter((op) => op === what).length;

    // Each step: its run, step, server and secrets read in one aggregate; its command's entry
    // before it runs; its result (with its start and output) in one write; its entry's outcome.
    expect(count('command deploymentruns aggregate')).toBe(5);
    expect(count('insert audit_pending')).toBe(5);
    // The last step's result is the run's end (below). A command still running after 250 ms (a loaded
    // machine) has its start written before its result: at most one such write per step.
    const starts = count('update deploymentruns') - 4;
    expect(starts).toBeGreaterThanOrEqual(0);
    expect(starts).toBeLessThanOrEqual(5);
    expect(count('update audit_pending')).toBe(6); // and the trigger's own entry
    // Begun, then ended by its last step's write, which answers with the run its event reads: neither
    // the run nor its server is read again for the event.
    expect(count('command deploymentruns findAndModify')).toBe(2);
    const end = ops.slice(ops.lastIndexOf('command deploymentruns findAndModify') + 1);
    // Only the server's queue may read after the end (the run waiting next), whenever its turn comes.
    expect(end.filter((op) => op.startsWith('query') && op !== 'query deploymentruns')).toEqual([]);
    expect(count('query servers')).toBe(3); // the trigger's and the queue's, before the run begins
    expect(ops.length - starts).toBeLessThanOrEqual(35);
  });
});
