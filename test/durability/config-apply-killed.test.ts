import { BosunProcesses, externalServicesEnv } from '../support/processes';

type Json = any;

describe('an apply is all or nothing, even when Bosun dies in the middle of it', () => {
  const bosun = new BosunProcesses(externalServicesEnv('config-apply-killed'));
  afterAll(() => bosun.stop());

  const freezes = Array.from({ length: 6 }, (_, i) => `kind: Freeze\nname: freeze-${i}\nspec:\n  starts_at: "2099-01-0${i + 1}T00:00:00.000Z"\n  ends_at: "2099-01-0${i + 2}T00:00:00.000Z"\n`).join('---\n');
  const body = { source: 'platform-repo', files: [{ path: 'freezes.yaml', content: freezes }] };

  test('SIGKILL halfway through the writes (BOSUN_FAILPOINT=config-apply-mid): after a restart nothing of it is there; applied again, all of it is', async () => {
    const token = await bosun.createToken('config-apply-killed');
    const plain = bosun.env;
    bosun.env = { ...plain, BOSUN_FAILPOINT: 'config-apply-mid' };
    const doomed = await bosun.launch('api');
    bosun.env = plain;
    const base = await doomed.ready();
    const answered = await fetch(`${base}/config/apply`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (res) => res.status,
      () => 'no answer',
    );
    expect(answered).toBe('no answer');
    await doomed.exited;
    expect(doomed.child.signalCode).toBe('SIGKILL');

    const ops = bosun.userAt(await (await bosun.launch('api')).ready());
    expect((await ops.request('get', '/freezes')).body.data).toEqual([]);
    const applied = await ops.request('post', '/config/apply', body);
    expect(applied.body.data).toMatchObject({ created: 6 });
    expect(((await ops.request('get', '/freezes')).body.data as Json[]).map((f) => f.name)).toEqual(Array.from({ length: 6 }, (_, i) => `freeze-${i}`));
    expect((await ops.request('post', '/config/plan', body)).body.data).toMatchObject({ create: [], update: [] });
  }, 240_000);
});
