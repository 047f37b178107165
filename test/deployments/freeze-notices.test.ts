import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';

/*
 * What the API says of the change freezes covering a server, a deployment and a schedule's next runs
 * (issue 36.8), so that no client decides coverage by itself; and a one-server deployment's server by
 * name (36.12). Over HTTP, in an organization of its own.
 */

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let bosun: SharedBosun;
let admin: User;
let stranger: User;
const servers: Record<string, string> = {};

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'freeze-notices');
  stranger = await asUser(bosun, 'freeze-notices-strangers');
  servers['web-1'] = await admin.addServer({ host: '127.0.0.2', title: 'web-1', tags: ['web'] });
  servers['web-2'] = await admin.addServer({ host: '127.0.0.3', title: 'web-2', tags: ['web', 'eu'] });
  servers['db-1'] = await admin.addServer({ host: '127.0.0.4', title: 'db-1', tags: ['db'] });
}, 120_000);
afterAll(async () => {
  for (const user of [admin, stranger]) user?.close();
  await bosun.stop();
});

async function declare(who: User, body: object) {
  const res = await who.request('post', '/freezes', body);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; name: string };
}

test('servers, deployments and schedules list the freezes covering them now or within 7 days; another organization’s freezes never', async () => {
  const now = Date.now();
  const declared = [
    await declare(admin, { name: 'web-freeze', starts_at: iso(now - HOUR), ends_at: iso(now + 5 * HOUR), tags: ['web'] }),
    await declare(admin, { name: 'eu-upgrade', starts_at: iso(now + 24 * HOUR), ends_at: iso(now + 26 * HOUR), tags: ['eu'] }),
    await declare(admin, { name: 'next-month', starts_at: iso(now + 8 * 24 * HOUR), ends_at: iso(now + 9 * 24 * HOUR), tags: null }),
    await declare(stranger, { name: 'theirs', starts_at: iso(now - HOUR), ends_at: iso(now + HOUR), tags: null }),
  ];
  const [webFreeze, euUpgrade] = declared;
  try {
    const webNow = { id: webFreeze!.id, name: 'web-freeze', starts_at: iso(now - HOUR), ends_at: iso(now + 5 * HOUR), active_now: true };
    const euSoon = { id: euUpgrade!.id, name: 'eu-upgrade', starts_at: iso(now + 24 * HOUR), ends_at: iso(now + 26 * HOUR), active_now: false };

    const listed = (await admin.listServers()).data as Array<{ title: string; freezes: unknown[] }>;
    expect(Object.fromEntries(listed.map((s) => [s.title, s.freezes]))).toEqual({ 'web-1': [webNow], 'web-2': [webNow, euSoon], 'db-1': [] });
    expect((await admin.getServer(servers['web-2']!)).freezes).toEqual([webNow, euSoon]);

    const fleet = await admin.define({ name: 'web-fleet', targets: { tags: ['web'] }, steps: [{ name: 'release', command: 'true' }] });
    expect(fleet).toMatchObject({ server_title: null, freezes: [{ ...webNow, server_ids: [servers['web-1'], servers['web-2']] }, { ...euSoon, server_ids: [servers['web-2']] }] });
    const db = await admin.defineDeployment(servers['db-1']!, [{ name: 'vacuum', command: 'true' }], 'db-vacuum');
    expect(db).toMatchObject({ server_id: servers['db-1'], server_title: 'db-1', freezes: [] });
    expect((await admin.getDeployment(fleet.id)).freezes).toHaveLength(2);
    const titles = Object.fromEntries(((await admin.listDeployments()) as Array<{ name: string; server_title: string | null }>).map((d) => [d.name, d.server_title]));
    expect(titles).toEqual({ 'web-fleet': null, 'db-vacuum': 'db-1' });

    // A schedule's next runs are each marked with the freezes open then on its deployment's targets.
    const hourly = await admin.request('post', `/deployments/${fleet.id}/schedules`, { name: 'hourly', cron: '0 * * * *', time_zone: 'UTC' });
    expect(hourly.status).toBe(201);
    const nextRuns = hourly.body.data.next_runs as Array<{ at: string; frozen_by: Array<{ name: string; ends_at: string }> }>;
    expect(nextRuns).toHaveLength(10);
    for (const run of nextRuns) {
      const at = Date.parse(run.at);
      const expected = [
        ...(at < now + 5 * HOUR ? [{ id: webFreeze!.id, name: 'web-freeze', ends_at: iso(now + 5 * HOUR) }] : []),
        ...(at >= now + 24 * HOUR && at < now + 26 * HOUR ? [{ id: euUpgrade!.id, name: 'eu-upgrade', ends_at: iso(now + 26 * HOUR) }] : []),
      ];
      expect(run.frozen_by).toEqual(expected);
    }
    expect((await admin.request('get', `/deployments/${fleet.id}/schedules`)).body.data[0].next_runs).toEqual(nextRuns);
  } finally {
    for (const [i, freeze] of declared.entries()) await (i === 3 ? stranger : admin).request('delete', `/freezes/${freeze.id}`);
  }
});
