import { addPerson, userWithToken, type User } from '../support/client';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';

/*
 * GET /config/drift (issue 38): every managed definition changed here since its source applied it,
 * who forced it and when; each kind only to who may read it whole; another organization's never;
 * gone once the files are applied again.
 */

type Json = any;

describe('config as code: the drift list', () => {
  let bosun: SharedBosun;
  let admin: User;
  let viewer: User;
  let stranger: User;
  const files = (command: string) => ({
    source: 'platform-repo',
    revision: 'abc1234',
    files: [
      { path: 'deploy/web.yaml', content: `kind: Deployment\nname: web-release\nspec:\n  server: dr-web\n  steps:\n    - name: release\n      command: ${command}\n` },
      { path: 'freezes.yaml', content: 'kind: Freeze\nname: year-end\nspec:\n  starts_at: "2099-12-20T00:00:00.000Z"\n  ends_at: "2100-01-02T00:00:00.000Z"\n' },
    ],
  });

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = userWithToken(bosun, await bosun.token('config-drift'));
    await admin.addServer({ title: 'dr-web', host: '127.0.0.2' });
    viewer = await addPerson(bosun, admin, 'Vera', 'viewer');
    stranger = userWithToken(bosun, await bosun.token('config-drift-other'));
  }, 120_000);
  afterAll(async () => {
    for (const user of [admin, viewer, stranger]) user?.close();
    await bosun.stop();
  });

  test('forced changes are listed with who and when, each kind to who may read it whole, until the files are applied again', async () => {
    expect((await admin.request('post', '/config/apply', files('echo v1'))).status).toBe(200);
    expect((await admin.request('get', '/config/drift')).body).toEqual({ data: [] });

    const deployment = ((await admin.request('get', '/deployments')).body.data as Json[]).find((d) => d.name === 'web-release')!;
    const freeze = ((await admin.request('get', '/freezes')).body.data as Json[]).find((f) => f.name === 'year-end')!;
    expect((await admin.request('patch', `/deployments/${deployment.id}`, { steps: [{ name: 'release', command: 'echo hotfix' }], force: true })).status).toBe(200);
    expect((await admin.request('patch', `/freezes/${freeze.id}`, { note: 'extended', force: true })).status).toBe(200);

    const listed = await admin.request('get', '/config/drift');
    expect(listed.status).toBe(200);
    const forcedBy = expect.stringMatching(/^token-/);
    expect(listed.body.data).toEqual([
      { kind: 'Deployment', id: deployment.id, name: 'web-release', source: 'platform-repo', revision: 'abc1234', path: 'deploy/web.yaml', forced_at: expect.any(String), forced_by: forcedBy },
      { kind: 'Freeze', id: freeze.id, name: 'year-end', source: 'platform-repo', revision: 'abc1234', path: 'freezes.yaml', forced_at: expect.any(String), forced_by: forcedBy },
    ]);
    expect(Date.parse(listed.body.data[0].forced_at)).toBeGreaterThan(Date.now() - 120_000);

    // A viewer of the whole organization reads deployments, not freezes' definitions (admin's, as the export).
    expect((await viewer.request('get', '/config/drift')).body.data.map((d: Json) => d.kind)).toEqual(['Deployment']);
    // Another organization sees none of it.
    expect((await stranger.request('get', '/config/drift')).body).toEqual({ data: [] });

    // The files applied again put their version back: no drift.
    expect((await admin.request('post', '/config/apply', files('echo v1'))).status).toBe(200);
    expect((await admin.request('get', '/config/drift')).body).toEqual({ data: [] });
  }, 120_000);
});
