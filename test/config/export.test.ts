import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { userWithToken } from '../support/client';

/** Every kind at once: applied, exported, applied to an empty organization, exported again: the same bytes. */
describe('config export: every kind round trips byte for byte', () => {
  let bosun: SharedBosun;
  beforeAll(async () => {
    bosun = await sharedBosun();
  });
  afterAll(() => bosun.stop());

  const files = {
    'deploy/web.yaml': `kind: Deployment
name: web-release
spec:
  targets: { servers: [web-1], tags: [web] }
  strategy: { batch_size: 1 }
  parameters:
    - { name: version, required: true, pattern: "^[0-9.]+$" }
  steps:
    - name: install
      command: |
        tar -xzf "/tmp/web-$BOSUN_PARAM_VERSION.tgz" -C /srv/web
        systemctl restart web
      timeout_seconds: 300
---
kind: Pipeline
name: release
spec:
  parameters:
    - { name: version, required: true }
  stages:
    - name: web
      deployment: web-release
      parameters: { version: "\${{ pipeline.parameters.version }}" }
---
kind: Schedule
name: nightly
spec:
  deployment: web-release
  cron: "30 2 * * 1-5"
  time_zone: Europe/Berlin
  parameters: { version: "1.4.2" }
  run_as: release-bot
`,
    'people.yaml': `kind: ServiceAccount
name: release-bot
spec: { description: nightly releases }
---
kind: Team
name: web
spec: { oidc_groups: [web-ops] }
---
kind: RoleBinding
name: web-operators
spec: { role: operator, subject: "team:web", deployments: [web-release] }
`,
    'guards.yaml': `kind: Freeze
name: year-end
spec: { starts_at: "2030-12-20T00:00:00.000Z", ends_at: "2031-01-02T00:00:00.000Z", tags: [prod] }
---
kind: NotificationChannel
name: ops
spec: { type: webhook, url: "\${secret:OPS_HOOK}", events: [run.failed] }
---
kind: Policy
name: default
spec: { allow_destructive: false, require_approval_for: [destructive], agents_require_approval_for_change: true }
`,
  };

  /** An organization with the same server, secret and exporting token's name (its own service account) as the other. */
  async function organization(name: string) {
    const admin = await bosun.token(name, ['admin'], 'exporter');
    await userWithToken(bosun, admin).addServer({ title: 'web-1', host: '127.0.0.2', tags: ['web'] });
    expect((await bosun.api.put('/api/v1/secrets/OPS_HOOK').set(bearer(admin)).send({ value: 'http://127.0.0.1:9/hook' })).status).toBe(200);
    return admin;
  }
  const apply = (token: string, source: string, given: Array<{ path: string; content: string }>) => bosun.api.post('/api/v1/config/apply').set(bearer(token)).send({ source, files: given });
  const exported = async (token: string) => (await bosun.api.get('/api/v1/config/export').set(bearer(token))).body.data.files as Array<{ path: string; content: string }>;

  test('apply → export → apply elsewhere → export: identical, and nothing to change', async () => {
    const first = await organization('cfg-roundtrip-a');
    const applied = await apply(first, 'platform-repo', Object.entries(files).map(([path, content]) => ({ path, content })));
    // The policy is the organization's one: always an update.
    expect([applied.status, applied.body.data]).toMatchObject([200, { created: 8, updated: 1 }]);
    const once = await exported(first);
    expect(once.map((f) => f.path)).toEqual(['deployments.yaml', 'pipelines.yaml', 'schedules.yaml', 'freezes.yaml', 'teams.yaml', 'service-accounts.yaml', 'role-bindings.yaml', 'notification-channels.yaml', 'policy.yaml']);
    expect(once.map((f) => f.content).join('')).not.toContain('127.0.0.1:9/hook');

    const second = await organization('cfg-roundtrip-b');
    const again = await apply(second, 'exported', once);
    expect([again.status, again.body.error ?? null]).toEqual([200, null]);
    expect(await exported(second)).toEqual(once);
    // The exported files describe the first organization exactly: planned there, nothing changes.
    const planned = await bosun.api.post('/api/v1/config/plan').set(bearer(first)).send({ source: 'platform-repo', files: once });
    expect(planned.body.data).toMatchObject({ create: [], delete: [], errors: [] });
    // Objects only moved to the export's files, and the one made by hand (the token's own account) taken over: no field changes.
    const updates = planned.body.data.update as Array<{ kind: string; name: string; reason: string; fields: object }>;
    expect(updates.filter((u) => u.reason !== 'moved')).toEqual([{ kind: 'ServiceAccount', name: 'exporter', path: 'service-accounts.yaml', reason: 'adopted', fields: {} }]);
    expect(updates.map((u) => u.fields)).toEqual(updates.map(() => ({})));
  });
});
