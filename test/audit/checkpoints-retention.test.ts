import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { startReceiver } from '../support/webhook-receiver';

type Json = any;

describe('the audit trail’s checkpoints and retention', () => {
  let bosun: Bosun;
  let token: string;
  const get = (path: string) => bosun.api.get(`/api/v1${path}`).set(bearer(token));
  const post = (path: string, body: object = {}) => bosun.api.post(`/api/v1${path}`).set(bearer(token)).send(body);
  const freeze = (name: string) => post('/freezes', { name, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' });

  beforeAll(async () => {
    // A checkpoint every 1.2 s, and entries kept 6 s: the clocks of hours and days, made short.
    bosun = await startBosun({ env: { AUDIT_CHECKPOINT_MINUTES: '0.02', AUDIT_RETENTION_DAYS: String(6 / 86_400) } });
    token = await bosun.token('keepers');
  }, 120_000);
  afterAll(() => bosun?.stop());

  test('the head is recorded as a checkpoint when it moves; verify with it passes; entries past retention are pruned and the chain still verifies from its anchor', async () => {
    for (const name of ['a', 'b', 'c']) expect((await freeze(name)).status).toBe(201);
    const checkpoints = await eventually(async () => (await get('/audit/checkpoints')).body.data as Json[], (list) => list.some((c) => c.seq === 3));
    const head = checkpoints.find((c) => c.seq === 3);
    expect(head).toEqual({ seq: 3, hash: expect.stringMatching(/^[0-9a-f]{64}$/), at: expect.any(String) });
    const [newest] = (await get('/audit')).body.data as Json[];
    expect(newest).toMatchObject({ seq: 3, hash: head.hash });
    expect((await post('/audit/verify', { checkpoint: { seq: 3, hash: head.hash } })).body).toEqual({ ok: true, checked: 3, first_broken: null });
    expect((await post('/audit/verify', { checkpoint: { seq: 3, hash: 'f'.repeat(64) } })).body).toMatchObject({ ok: false, first_broken: { seq: 3 } });

    // Past retention the three are pruned; the chain goes on from the anchor (seq 3).
    await eventually(async () => (await get('/audit')).body.meta.total as number, (total) => total === 0, 60_000);
    expect((await freeze('d')).status).toBe(201);
    const [fourth] = await eventually(async () => (await get('/audit')).body.data as Json[], (list) => list.length === 1);
    expect(fourth).toMatchObject({ seq: 4, prev_hash: head.hash });
    expect((await post('/audit/verify')).body).toEqual({ ok: true, checked: 1, first_broken: null });
    expect((await post('/audit/verify', { checkpoint: { seq: 3, hash: head.hash } })).body).toEqual({ ok: true, checked: 1, first_broken: null });
  }, 120_000);

  test('each checkpoint is told to the channels subscribed to audit.checkpoint: its seq and hash, signed', async () => {
    const receiver = await startReceiver();
    try {
      const channel = (await post('/notification-channels', { name: 'trail-heads', type: 'webhook', url: receiver.url, events: ['audit.checkpoint'] })).body.data;
      receiver.secret = channel.secret;
      expect((await freeze('e')).status).toBe(201);
      // A head told, and the same head recorded as a checkpoint.
      const told = await eventually(
        async () => receiver.received.filter((r) => r.json.type === 'audit.checkpoint'),
        (list) => list.length > 0,
        60_000,
      );
      const { seq, hash } = told[0]!.json.audit;
      const recorded = (await get('/audit/checkpoints')).body.data as Json[];
      expect(recorded).toContainEqual(expect.objectContaining({ seq, hash }));
      expect(told.every((r) => r.verified)).toBe(true);
    } finally {
      await receiver.stop();
    }
  }, 120_000);
});
