import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { conversationEnded, eventually } from '../support/bosun';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { Sshd } from '../support/sshd';
import { makeMigrationTree, sharedFolder, treeDigest } from '../support/trees';

const MiB = 1024 * 1024;

/** Bytes under a directory, as the target's disk has them now. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, name.name);
    if (name.isDirectory()) total += bytesUnder(full);
    else if (name.isFile()) total += lstatSync(full).size;
  }
  return total;
}

describe('a migration copy survives the death of the worker moving it', () => {
  const sshds: Sshd[] = [];
  // Throttled so the copy lasts long enough to be interrupted in its middle.
  const bosun = new BosunProcesses({ ...externalServicesEnv('migration'), TRANSFER_MAX_BYTES_PER_SECOND: String(40 * MiB) });

  beforeAll(async () => {
    await bosun.createToken('migration');
    sshds.push(await Sshd.startPrivate(), await Sshd.startPrivate());
  });
  afterAll(async () => {
    await bosun.stop();
    await Promise.all(sshds.map((s) => s.stop({ dropSessions: true })));
  });

  test('SIGKILL the worker in the middle of a 200 MiB copy between two sshd: a new worker resumes it, and every checksum matches', async () => {
    const work = sharedFolder('bosun-migration-');
    const from = path.join(work, 'old/app');
    const to = path.join(work, 'new/app');
    makeMigrationTree(from);

    const { worker, ops } = await bosun.launchApiAndWorker();
    const [source, target] = [await ops.addServer({ title: 'old box', sshd: sshds[0]!.info }), await ops.addServer({ title: 'new box', sshd: sshds[1]!.info })];
    const plan = await ops.planMigration(source, target, 'app to the new box');
    const conversation = await ops.startMigration(plan.id, `copy ${from} to the target at ${to}`);

    // Somewhere between a quarter and three quarters of the way.
    const copied = await eventually(async () => (lstatSync(path.dirname(to), { throwIfNoEntry: false }) ? bytesUnder(path.dirname(to)) : 0), (b) => b >= 50 * MiB, 60_000);
    await worker.stop('SIGKILL');
    expect(copied).toBeLessThan(150 * MiB);
    expect((await ops.getConversation(conversation.id)).steps[0].status).toBe('running');
    await (await bosun.launch('worker')).ready();

    const done = await ops.waitForConversation(conversation.id, conversationEnded, 120_000);
    const log: string = done.steps[0].execution_log;
    expect(done.status).toBe('completed');
    expect(done.steps[0].status).toBe('completed');
    expect(log).toMatch(/--- attempt 2: the previous attempt was interrupted; resuming the copy ---/);
    expect(log).toMatch(/moved [\d.]+ MiB of [\d.]+ MiB \(\d+%\)/);
    // The second attempt moved what was missing, not everything again.
    const attempts = [...log.matchAll(/transferred ([\d.]+) MiB in this attempt \(/g)].map((m) => Number(m[1]));
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!).toBeLessThan(200 - copied / MiB + 5);
    expect(log).toMatch(/resuming .* from|already on the target, identical/);
    expect(log).toMatch(/verified: 310 files, 200 MiB, identical on both servers/);
    expect(treeDigest(to)).toEqual(treeDigest(from));
  }, 240_000);
});
