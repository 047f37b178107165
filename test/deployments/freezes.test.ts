import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';

/*
 * Change freezes on the real stack. Three "servers" are the test sshd on three loopback addresses;
 * each step leaves a marker file named after the address it ran on, so what ran where (and what
 * never ran) is read from the disk. Every freeze a test declares is deleted at its end.
 */

const ADDRESSES = [6, 7, 8].map((n) => `127.0.0.${n}`);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';
const HOUR = 3600_000;

let bosun: SharedBosun;
/** The organization's administrator: a service account (it declares freezes, but cannot override one). */
let admin: User;
/** Carol: a person with role admin (may override); Olly: an operator (may trigger, not override). */
let carol: User & { id: string };
let olly: User & { id: string };
let servers: string[];
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'freezes');
  servers = [];
  for (const [i, host] of ADDRESSES.entries()) servers.push(await admin.addServer({ host, title: `web-${i + 1}`, tags: i === 2 ? ['web', 'staging'] : ['web', 'prod'] }));
  carol = await addPerson(bosun, admin, 'Carol', 'admin');
  olly = await addPerson(bosun, admin, 'Olly', 'operator');
  work = sharedFolder('bosun-freezes-');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, olly]) user?.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

const marking = (tag: string, held = false) => [
  { name: 'mark', command: `${HERE}; ${held ? `while [ ! -e ${work}/${tag}-go ]; do sleep 0.1; done; ` : ''}touch ${work}/${tag}-$here` },
];
const letGo = (tag: string) => writeFileSync(`${work}/${tag}-go`, '');
const ranOn = (tag: string) => ADDRESSES.filter((address) => existsSync(`${work}/${tag}-${address}`));
const statuses = (run: { targets: Array<{ title: string; status: string }> }) => run.targets.map((t) => `${t.title}:${t.status}`);
const iso = (ms: number) => new Date(ms).toISOString();

/** Declares a freeze (as the administrator); the freeze. */
async function declare(body: object) {
  const res = await admin.request('post', '/freezes', body);
  if (res.status !== 201) throw new Error(`declare a freeze: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}
/** Runs `story` with a freeze declared, deleting it after. */
async function whileFrozen<T>(body: object, story: (freeze: any) => Promise<T>): Promise<T> {
  const freeze = await declare(body);
  try {
    return await story(freeze);
  } finally {
    await admin.request('delete', `/freezes/${freeze.id}`);
  }
}
const runsOf = async (deploymentId: string) => (await admin.request('get', `/deployments/${deploymentId}/runs`)).body.meta.total as number;

describe('declaring freezes', () => {
  test('bad input is refused with 422 naming what is wrong, and changes nothing; a name is unique; only admins write', async () => {
    const now = Date.now();
    const cases: Array<[object, string, RegExp]> = [
      [{ starts_at: iso(now + HOUR), ends_at: iso(now) }, 'ends_at', /must be after starts_at/],
      [{ starts_at: iso(now), ends_at: iso(now) }, 'ends_at', /must be after starts_at/],
      [{ cron: '61 * * * *', duration: '1h', time_zone: 'UTC' }, 'cron', /field 1 \(minute\)/],
      [{ cron: '0 8 * * 1-5 *', duration: '1h', time_zone: 'UTC' }, 'cron', /5 fields/],
      [{ cron: '0 8 * * 1-5', duration: '10h', time_zone: 'Mars/Olympus' }, 'time_zone', /not an IANA time zone/],
      [{ cron: '0 8 * * 1-5', duration: '10h' }, 'time_zone', /needs time_zone/],
      [{ cron: '0 8 * * 1-5', duration: '32d', time_zone: 'UTC' }, 'duration', /at most 31d/],
      [{ cron: '0 8 * * 1-5', duration: 'soon', time_zone: 'UTC' }, 'duration', /a duration/],
      [{ starts_at: iso(now), ends_at: iso(now + HOUR), cron: '0 8 * * *', duration: '1h', time_zone: 'UTC' }, 'cron', /not both/],
      [{}, 'starts_at', /give starts_at and ends_at/],
      [{ starts_at: 'tomorrow', ends_at: iso(now + HOUR) }, 'starts_at', /ISO 8601/],
    ];
    for (const [body, path, message] of cases) {
      const res = await admin.request('post', '/freezes', { name: 'bad', ...body });
      expect([JSON.stringify(body), res.status, res.body.error.code, res.body.error.details?.[0]?.path]).toEqual([JSON.stringify(body), 422, 'validation_failed', path]);
      expect(`${res.body.error.message} ${res.body.error.details[0].message}`).toMatch(message);
    }
    expect((await admin.request('get', '/freezes')).body.data).toEqual([]);

    const freeze = await declare({ name: 'audit', starts_at: iso(now + 24 * HOUR), ends_at: iso(now + 48 * HOUR), note: 'yearly audit' });
    try {
      expect(freeze).toMatchObject({ name: 'audit', kind: 'once', time_zone: 'UTC', tags: null, note: 'yearly audit', active_now: false, current_window: null, next_window: { starts_at: iso(now + 24 * HOUR) }, created_by: { type: 'service_account' } });
      const late = await admin.request('patch', `/freezes/${freeze.id}`, { ends_at: iso(now) });
      expect([late.status, late.body.error.details[0].path]).toEqual([422, 'ends_at']);
      expect((await admin.request('get', `/freezes/${freeze.id}`)).body.data.ends_at).toBe(iso(now + 48 * HOUR));
      const twice = await admin.request('post', '/freezes', { name: 'audit', starts_at: iso(now), ends_at: iso(now + HOUR) });
      expect([twice.status, twice.body.error.code]).toEqual([409, 'conflict']);
      // Only admins write; anyone who reads reads.
      expect((await olly.request('post', '/freezes', { name: 'mine', starts_at: iso(now), ends_at: iso(now + HOUR) })).status).toBe(403);
      expect((await olly.request('delete', `/freezes/${freeze.id}`)).status).toBe(403);
      expect((await olly.request('get', `/freezes/${freeze.id}`)).body.data.name).toBe('audit');
      // Another organization sees none of it.
      const stranger = await asUser(bosun, 'strangers');
      for (const [method, body] of [['get', undefined], ['patch', { note: 'mine' }], ['delete', undefined]] as const) {
        const res = await stranger.request(method, `/freezes/${freeze.id}`, body);
        expect([method, res.status]).toEqual([method, 404]);
      }
      expect((await stranger.request('get', '/freezes')).body.data).toEqual([]);
    } finally {
      expect((await admin.request('delete', `/freezes/${freeze.id}`)).status).toBe(204);
    }
  });

  test('a recurring freeze covers now when its last fire is within its duration, in its time zone; the trigger is refused naming it', async () => {
    const deployment = await admin.define({ server_id: servers[0], steps: marking('recurring') });
    // Fired five minutes ago (UTC), for an hour.
    const fired = new Date(Date.now() - 5 * 60_000);
    const cron = `${fired.getUTCMinutes()} ${fired.getUTCHours()} * * *`;
    await whileFrozen({ name: 'daily-window', cron, duration: '1h', time_zone: 'UTC', tags: ['prod'] }, async (freeze) => {
      fired.setUTCSeconds(0, 0);
      expect(freeze).toMatchObject({ kind: 'recurring', cron, duration: '1h', active_now: true, current_window: { starts_at: fired.toISOString(), ends_at: iso(fired.getTime() + HOUR) } });
      expect(freeze.next_window.starts_at).toBe(iso(fired.getTime() + 24 * HOUR));
      const refused = await admin.request('post', `/deployments/${deployment.id}/run`);
      expect([refused.status, refused.body.error.code, refused.body.error.freezes]).toEqual([409, 'frozen', [{ id: freeze.id, name: 'daily-window', ends_at: iso(fired.getTime() + HOUR) }]]);
      expect(refused.body.error.message).toContain('daily-window');
    });
    // Every weekday 08:00–18:00 in Berlin: its next window opens at 08:00 there.
    await whileFrozen({ name: 'office-hours', cron: '0 8 * * 1-5', duration: '10h', time_zone: 'Europe/Berlin' }, async (freeze) => {
      const opens = new Date(freeze.next_window.starts_at);
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', weekday: 'short' }).format(opens)).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 08:00$/);
      expect(Date.parse(freeze.next_window.ends_at) - opens.getTime()).toBe(10 * HOUR);
    });
  });
});

describe('a freeze refuses runs', () => {
  test('a CI trigger is refused with 409 frozen naming the freeze, its end and the servers, and nothing is created; a server it does not cover runs', async () => {
    const ci = await admin.request('post', '/service-accounts', { name: 'ci' });
    await admin.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: ci.body.data.id } });
    const ciUser = await asUser(bosun, 'freezes', (await admin.request('post', `/service-accounts/${ci.body.data.id}/tokens`, { name: 'ci-token' })).body.data.token);
    const prod = await admin.define({ targets: { tags: ['web'] }, steps: marking('refused') });
    const staging = await admin.define({ server_id: servers[2], steps: marking('staging') });
    const endsAt = iso(Date.now() + HOUR);
    await whileFrozen({ name: 'black-friday', starts_at: iso(Date.now() - 60_000), ends_at: endsAt, tags: ['prod'], note: 'no changes' }, async (freeze) => {
      const refused = await ciUser.request('post', `/deployments/${prod.id}/run`);
      expect([refused.status, refused.body.error.code]).toEqual([409, 'frozen']);
      expect(refused.body.error.freezes).toEqual([{ id: freeze.id, name: 'black-friday', ends_at: endsAt }]);
      expect(refused.body.error.servers).toEqual([{ id: servers[0], title: 'web-1' }, { id: servers[1], title: 'web-2' }]);
      expect(refused.body.error.message).toMatch(/black-friday .*web-1, web-2/);
      expect(await runsOf(prod.id)).toBe(0);
      expect(ranOn('refused')).toEqual([]);
      // The plan says so before anyone triggers.
      const plan = await ciUser.plan(prod.id);
      expect(plan.frozen_targets).toEqual([
        { server_id: servers[0], title: 'web-1', freezes: [{ id: freeze.id, name: 'black-friday', ends_at: endsAt }] },
        { server_id: servers[1], title: 'web-2', freezes: [{ id: freeze.id, name: 'black-friday', ends_at: endsAt }] },
      ]);
      expect(plan.warnings).toContainEqual(expect.objectContaining({ code: 'frozen', server_id: servers[0] }));
      // Staging is not frozen.
      expect((await ciUser.runToEnd(staging.id)).status).toBe('success');
      // Nor a conversation on a frozen server.
      const talk = await ciUser.request('post', '/conversations', { chatable_type: 'server', chatable_id: servers[0], message: 'show uptime' });
      expect([talk.status, talk.body.error.code]).toEqual([409, 'frozen']);
    });
    expect((await ciUser.runToEnd(prod.id)).status).toBe('success');
    ciUser.close();
  });

  test('only a person with role admin overrides, with a reason the run records and shows; a retry is refused and overridden the same way', async () => {
    const deployment = await admin.define({ server_id: servers[0], steps: [{ name: 'maybe', command: `test -e ${work}/fixed` }] });
    const failed = await admin.runToEnd(deployment.id);
    expect(failed.status).toBe('failed');
    await whileFrozen({ name: 'freeze-week', starts_at: iso(Date.now() - 60_000), ends_at: iso(Date.now() + HOUR) }, async () => {
      const override = { override_freeze: { reason: 'hotfix INC-123' } };
      const service = await admin.request('post', `/deployments/${deployment.id}/run`, override);
      expect([service.status, service.body.error.code]).toEqual([403, 'people_only']);
      const operator = await olly.request('post', `/deployments/${deployment.id}/run`, override);
      expect([operator.status, operator.body.error.code]).toEqual([403, 'forbidden']);
      const blank = await carol.request('post', `/deployments/${deployment.id}/run`, { override_freeze: { reason: ' ' } });
      expect(blank.status).toBe(422);
      expect(await runsOf(deployment.id)).toBe(1);

      const retry = await carol.request('post', `/deployments/${deployment.id}/runs/${failed.id}/retry`);
      expect([retry.status, retry.body.error.code]).toEqual([409, 'frozen']);
      writeFileSync(`${work}/fixed`, '');
      const retried = await carol.request('post', `/deployments/${deployment.id}/runs/${failed.id}/retry`, override);
      expect(retried.status).toBe(202);
      const live = await carol.subscribe(retried.body.run_id);
      const run = await carol.waitForRun(deployment.id, retried.body.run_id);
      expect(run).toMatchObject({ status: 'success', retry_of: failed.id, freeze_override: { by: { type: 'person', name: 'Carol' }, reason: 'hotfix INC-123', freezes: ['freeze-week'] } });
      expect((await live.until((e) => e.status === 'success')).freeze_override).toMatchObject({ reason: 'hotfix INC-123', freezes: ['freeze-week'] });

      const triggered = await carol.triggerWith(deployment.id, override);
      expect((await carol.waitForRun(deployment.id, triggered.run_id)).freeze_override).toMatchObject({ by: { id: carol.id }, reason: 'hotfix INC-123' });
    });
  });
});

describe('a fleet run meets a freeze between batches', () => {
  test('the running batch finishes, the run waits frozen with the freeze’s end, and finishes once the freeze is ended early', async () => {
    const deployment = await admin.define({ targets: { tags: ['web'] }, strategy: { batch_size: 1 }, steps: marking('held', true) });
    const { run_id: runId } = await admin.trigger(deployment.id);
    await admin.waitForRun(deployment.id, runId, (run) => run.targets.some((t: { status: string }) => t.status === 'running'));
    const endsAt = iso(Date.now() + HOUR);
    const freeze = await declare({ name: 'code-freeze', starts_at: iso(Date.now()), ends_at: endsAt, tags: ['web'] });
    try {
      letGo('held');
      const frozen = await admin.waitForRun(deployment.id, runId, (run) => run.status === 'frozen');
      expect(frozen.freeze).toMatchObject({ names: ['code-freeze'], until: endsAt });
      expect(statuses(frozen)).toEqual(['web-1:success', 'web-2:queued', 'web-3:queued']);
      // Its time frozen counts apart from its time running, from the moment it was held.
      expect(frozen.waits).toEqual({ approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: { for: 'freeze', since: frozen.freeze.since } });
      expect(await admin.lastRunStatus(deployment.id)).toEqual(['frozen', 'frozen']);
      expect(ranOn('held')).toEqual(ADDRESSES.slice(0, 1));
      // Ended early: the run hears of it and goes on.
      expect((await admin.request('patch', `/freezes/${freeze.id}`, { ends_at: iso(Date.now() + 1000) })).status).toBe(200);
      const done = await admin.waitForRun(deployment.id, runId, undefined, 120_000);
      expect([done.status, done.freeze, ...statuses(done)]).toEqual(['success', null, 'web-1:success', 'web-2:success', 'web-3:success']);
      // Held until at least the freeze's new end, a second after it was ended early.
      expect(done.waits).toMatchObject({ approval_seconds: 0, paused_seconds: 0, current: null });
      expect(done.waits.frozen_seconds).toBeGreaterThanOrEqual(1);
      expect([done.waiting_seconds, done.running_seconds]).toEqual([done.waits.frozen_seconds, done.duration_seconds - done.waits.frozen_seconds]);
      expect(ranOn('held')).toEqual(ADDRESSES);
      // The hold and its release are Bosun's decisions: in the audit trail with actor system.
      const decisions = await eventually(
        () => admin.request('get', `/audit?run=${runId}&actor_type=system&action=run.*`).then((r) => r.body.data as Array<Record<string, any>>),
        (list) => list.length === 2,
      );
      expect(decisions.reverse()).toEqual([
        expect.objectContaining({ action: 'run.hold_frozen', actor: { type: 'system', id: null, name: 'change freeze' }, target: { kind: 'run', id: runId }, outcome: 'ok', details: { freezes: ['code-freeze'], until: endsAt } }),
        expect.objectContaining({ action: 'run.release_frozen', outcome: 'ok', details: { freezes: ['code-freeze'] } }),
      ]);
    } finally {
      await admin.request('delete', `/freezes/${freeze.id}`);
    }
  }, 180_000);

  test('a frozen run can be cancelled by a person: it ends cancelled, its waiting targets too', async () => {
    const deployment = await admin.define({ targets: { tags: ['web'] }, strategy: { batch_size: 2 }, steps: marking('cancelled', true) });
    const { run_id: runId } = await admin.trigger(deployment.id);
    await admin.waitForRun(deployment.id, runId, (run) => run.targets.some((t: { status: string }) => t.status === 'running'));
    await whileFrozen({ name: 'cancel-freeze', starts_at: iso(Date.now()), ends_at: iso(Date.now() + HOUR) }, async () => {
      letGo('cancelled');
      const frozen = await admin.waitForRun(deployment.id, runId, (run) => run.status === 'frozen');
      await carol.cancelRun(deployment.id, runId);
      const run = await carol.waitForRun(deployment.id, runId);
      expect([run.status, run.cancelled_by?.name, ...statuses(run)]).toEqual(['cancelled', 'Carol', 'web-1:success', 'web-2:success', 'web-3:cancelled']);
      // It waited frozen until its end.
      expect(run.waits).toEqual({ approval_seconds: 0, paused_seconds: 0, frozen_seconds: Math.round((Date.parse(run.completed_at) - Date.parse(frozen.freeze.since)) / 1000), current: null });
      expect(await carol.lastRunStatus(deployment.id)).toEqual(['cancelled', 'cancelled']);
      expect(ranOn('cancelled')).toEqual(ADDRESSES.slice(0, 2));
    });
  }, 180_000);
});

describe('a one-server run queued before a freeze', () => {
  /** A one-server deployment on web-1 held until let go, and a second one queued behind it there. */
  async function queuedBehind(tag: string) {
    const first = await admin.define({ server_id: servers[0], steps: marking(`${tag}-first`, true) });
    const second = await admin.define({ server_id: servers[0], steps: marking(`${tag}-second`) });
    const { run_id: firstRun } = await admin.trigger(first.id);
    await admin.waitForRun(first.id, firstRun, (run) => run.status === 'running');
    const { run_id: secondRun } = await admin.trigger(second.id);
    expect((await admin.waitForRun(second.id, secondRun, (run) => run.status === 'queued')).status).toBe('queued');
    return { first, firstRun, second, secondRun };
  }

  test('its turn comes during the freeze: it waits frozen, runs nothing, and runs once the freeze ends', async () => {
    const { first, firstRun, second, secondRun } = await queuedBehind('turn');
    const endsAt = iso(Date.now() + HOUR);
    const freeze = await declare({ name: 'queue-freeze', starts_at: iso(Date.now()), ends_at: endsAt, tags: ['prod'] });
    try {
      letGo('turn-first');
      // The run ahead was begun before the freeze: it finishes.
      expect((await admin.waitForRun(first.id, firstRun)).status).toBe('success');
      const frozen = await admin.waitForRun(second.id, secondRun, (run) => run.status === 'frozen');
      expect(frozen.freeze).toMatchObject({ names: ['queue-freeze'], until: endsAt });
      expect(frozen.steps.map((s: { status: string }) => s.status)).toEqual(['pending']);
      expect(ranOn('turn-second')).toEqual([]);
      // Ended early: the run hears of it (the API signals it) and goes on.
      expect((await admin.request('patch', `/freezes/${freeze.id}`, { ends_at: iso(Date.now() + 1000) })).status).toBe(200);
      const done = await admin.waitForRun(second.id, secondRun, undefined, 120_000);
      expect([done.status, done.freeze]).toEqual(['success', null]);
      expect(ranOn('turn-second')).toEqual(ADDRESSES.slice(0, 1));
    } finally {
      await admin.request('delete', `/freezes/${freeze.id}`);
    }
  }, 180_000);

  test('a person cancels it while it waits frozen: it ends cancelled, nothing of it ran, and the server takes the next run', async () => {
    const { first, firstRun, second, secondRun } = await queuedBehind('cancel');
    await whileFrozen({ name: 'queue-cancel-freeze', starts_at: iso(Date.now()), ends_at: iso(Date.now() + HOUR), tags: ['prod'] }, async () => {
      letGo('cancel-first');
      expect((await admin.waitForRun(first.id, firstRun)).status).toBe('success');
      await admin.waitForRun(second.id, secondRun, (run) => run.status === 'frozen');
      await carol.cancelRun(second.id, secondRun);
      const run = await carol.waitForRun(second.id, secondRun);
      expect([run.status, run.cancelled_by?.name, run.steps[0].status]).toEqual(['cancelled', 'Carol', 'cancelled']);
      expect(ranOn('cancel-second')).toEqual([]);
    });
    // The server's turn was given back: a run after the freeze runs there.
    const third = await admin.define({ server_id: servers[0], steps: marking('cancel-third') });
    expect((await admin.waitForRun(third.id, (await admin.trigger(third.id)).run_id)).status).toBe('success');
    expect(ranOn('cancel-third')).toEqual(ADDRESSES.slice(0, 1));
  }, 180_000);
});
