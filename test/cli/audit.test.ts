import { MongoClient } from 'mongodb';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { runCli } from '../support/processes';

describe('bosun audit', () => {
  let bosun: Bosun;
  let env: NodeJS.ProcessEnv;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('cli-audit');
    env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };
  }, 120_000);
  afterAll(() => bosun?.stop());

  test('verify says the chain holds (exit 0), names the first broken link (exit 1), takes a checkpoint; export prints JSON lines', async () => {
    for (const name of ['a', 'b', 'c']) await bosun.api.post('/api/v1/freezes').set(bearer(token)).send({ name, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' });
    const [head] = await eventually(async () => (await bosun.api.get('/api/v1/audit').set(bearer(token))).body.data as Array<{ seq: number; hash: string }>, (list) => list.length === 3);

    const held = await runCli(['audit', 'verify', '--checkpoint', `${head!.seq}:${head!.hash}`], env);
    expect([held.code, held.stdout]).toEqual([0, 'ok: 3 entries checked, the checkpoint is held\n']);
    const exported = await runCli(['audit', 'export', '--action', 'freeze.*'], env);
    expect(exported.code).toBe(0);
    expect(exported.stdout.trim().split('\n').map((line) => JSON.parse(line).seq)).toEqual([1, 2, 3]);
    expect((await runCli(['audit', 'verify', '--checkpoint', 'nonsense'], env)).code).toBe(2);

    const db = await MongoClient.connect(bosun.mongoUri);
    try {
      await db.db().collection('audit').updateOne({ seq: 2 }, { $set: { 'actor.name': 'someone else' } });
    } finally {
      await db.close();
    }
    const broken = await runCli(['audit', 'verify'], env);
    expect([broken.code, broken.stderr]).toEqual([1, expect.stringContaining('broken at entry 2: entry 2 was changed')]);
  }, 120_000);
});
