import { bearer, eventually } from '../support/bosun';
import { BosunProcesses, externalServicesEnv } from '../support/processes';

type Json = any;

describe('the audit trail survives the API’s death between a change and its outcome', () => {
  const bosun = new BosunProcesses({ ...externalServicesEnv('audit-killed'), AUDIT_PENDING_SECONDS: '2' });
  afterAll(() => bosun.stop());

  test('SIGKILL right after a change is made (BOSUN_FAILPOINT=audit-after-change): after a restart its entry is in the trail, outcome unknown, and the chain verifies', async () => {
    const token = await bosun.createToken('audit-killed');
    const worker = await bosun.launch('worker');
    // The failpoint kills the API process once a write's answer is sent, before its outcome is recorded.
    const plain = bosun.env;
    bosun.env = { ...plain, BOSUN_FAILPOINT: 'audit-after-change' };
    const doomed = await bosun.launch('api');
    bosun.env = plain;
    const base = await doomed.ready();
    await worker.ready();

    const created = await fetch(`${base}/freezes`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'made-before-death', starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' }),
    }).then((res) => res.status, () => 'no answer');
    expect([201, 'no answer']).toContain(created);
    await doomed.exited;
    expect(doomed.child.signalCode).toBe('SIGKILL');

    const ops = bosun.userAt(await (await bosun.launch('api')).ready());
    const freezes = (await ops.request('get', '/freezes')).body.data as Json[];
    const freeze = freezes.find((f) => f.name === 'made-before-death');
    expect(freeze).toBeDefined();
    const entries = await eventually(async () => (await ops.request('get', '/audit?action=freeze.create')).body.data as Json[], (list) => list.length === 1, 60_000);
    expect(entries[0]).toMatchObject({ seq: 1, outcome: 'unknown', target: { kind: 'freeze' }, details: { route: 'POST /api/v1/freezes', unknown: expect.stringContaining('Bosun stopped between the change and its outcome') } });
    expect((await ops.request('post', '/audit/verify')).body).toMatchObject({ ok: true, first_broken: null });
  }, 240_000);

  test('SIGKILL the worker (where the chainer runs): changes made meanwhile wait in the outbox, and a new worker chains them in order', async () => {
    const api = bosun.alive('api')[0]!;
    const ops = bosun.userAt(await api.ready());
    await bosun.alive('worker')[0]!.stop('SIGKILL');
    for (const name of ['while-down-1', 'while-down-2']) expect((await ops.request('post', '/freezes', { name, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' })).status).toBe(201);
    await (await bosun.launch('worker')).ready();
    // The chaining activity of the killed worker is taken over after its heartbeat timeout.
    const entries = await eventually(async () => (await ops.request('get', '/audit?action=freeze.create')).body.data as Json[], (list) => list.length === 3, 90_000);
    expect(entries.map((e) => [e.seq, e.outcome])).toEqual([[3, 'ok'], [2, 'ok'], [1, 'unknown']]);
    expect((await ops.request('post', '/audit/verify')).body).toEqual({ ok: true, checked: 3, first_broken: null });
  }, 240_000);
});
