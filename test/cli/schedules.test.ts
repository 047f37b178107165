import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';
import { runCli } from '../support/processes';

/*
 * A release engineer schedules a nightly release from a terminal: creates it in Berlin's time,
 * sees its next runs in Berlin and in UTC, pauses it with a note during an incident, unpauses it,
 * runs it now and reads its ticks — and the API says the same at every step.
 */

let bosun: SharedBosun;
let admin: User;
let env: NodeJS.ProcessEnv;
let deploymentId: string;

const ok = async (args: string[]) => {
  const result = await runCli(args, env);
  // The first call after a source changed compiles the CLI once, and says so.
  const stderr = result.stderr.replace(/^bosun: compiling to dist\/.*\n/m, '');
  expect([args.join(' '), result.code, stderr]).toEqual([args.join(' '), 0, '']);
  return result.stdout;
};

beforeAll(async () => {
  bosun = await sharedBosun();
  const token = await bosun.token('cli-schedules', ['admin'], 'release-bot');
  env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };
  admin = await asUser(bosun, 'cli-schedules', token);
  const serverId = await admin.addServer({ host: '127.0.0.2' });
  deploymentId = (await admin.defineDeployment(serverId, [{ name: 'release', command: 'echo released' }], 'web-release')).id;
}, 120_000);
afterAll(async () => {
  admin?.close();
  await bosun?.stop();
});

const schedulePath = (id: string) => `/deployments/${deploymentId}/schedules/${id}`;

test('create, list, pause with a note, unpause, run now and read the ticks — by names', async () => {
  const created = await ok(['schedules', 'create', 'web-release', '--name', 'nightly', '--cron', '30 2 * * *', '--time-zone', 'Europe/Berlin', '--note', 'the nightly release']);
  const id = /^nightly {2}([0-9a-f]{24})\n/.exec(created)![1]!;
  expect(created).toContain('  when        cron 30 2 * * *, in Europe/Berlin\n');
  expect(created).toContain('  runs as     release-bot (service account)\n');
  expect(created).toContain('  overlap     skip; catch-up window 5m; jitter none\n');
  expect(created).toContain('  next runs   Europe/Berlin                UTC\n');
  // Each next run: 02:30 on Berlin's clock (+01:00 in winter, +02:00 in summer), and the same moment in UTC.
  const runs = created.split('\n').filter((line) => /^ {14}\S/.test(line));
  expect(runs).toHaveLength(5);
  for (const line of runs) expect(line).toMatch(/^ {14}\w{3} \d{4}-\d\d-\d\d 02:30 \+0[12]:00 +\w{3} \d{4}-\d\d-\d\d 0[01]:30 UTC$/);

  const { body: api } = await admin.request('get', schedulePath(id));
  expect(api.data).toMatchObject({ name: 'nightly', cron: '30 2 * * *', time_zone: 'Europe/Berlin', paused: false, note: 'the nightly release', run_as: { name: 'release-bot' } });
  expect(runs[0]).toContain(api.data.next_runs[0].local.slice(0, 10));

  expect(await ok(['schedules', 'list', 'web-release'])).toMatch(new RegExp(`\\n${id}\\tnightly\\tcron 30 2 \\* \\* \\*\\tEurope/Berlin\\tactive\\t\\w{3} [-\\d]+ 02:30 \\+0[12]:00\\t\\w{3} [-\\d]+ 0[01]:30 UTC\\n`));
  expect(JSON.parse(await ok(['schedules', 'list', deploymentId, '--json']))).toEqual([expect.objectContaining({ id, name: 'nightly' })]);

  expect(await ok(['schedules', 'pause', 'web-release', 'nightly', '--note', 'INC-42: database failover'])).toMatch(/^nightly: paused by release-bot at \w{3} [-\d]+ [:\d]+ UTC: INC-42: database failover\n$/);
  expect((await admin.request('get', schedulePath(id))).body.data).toMatchObject({ paused: true, pause: { by: { name: 'release-bot' }, note: 'INC-42: database failover' }, next_runs: [] });
  expect(await ok(['schedules', 'show', 'web-release', 'nightly'])).toContain('  next runs   none while paused\n');

  expect(await ok(['schedules', 'unpause', 'web-release', id, '--note', 'failover done'])).toMatch(/^nightly: active \(unpaused by release-bot at .+: failover done\)\nnext run \w{3} [-\d]+ 02:30 \+0[12]:00 \(\w{3} [-\d]+ 0[01]:30 UTC\)\n$/);
  expect((await admin.request('get', schedulePath(id))).body.data).toMatchObject({ paused: false, pause: { note: 'failover done' } });

  expect(await ok(['schedules', 'trigger', 'web-release', 'nightly'])).toMatch(/^nightly: a tick started at .+ UTC\n$/);
  const ticks = await eventually(async () => (await admin.request('get', `${schedulePath(id)}/ticks`)).body.data, (data) => data.length === 1);
  expect(ticks[0]).toMatchObject({ outcome: 'fired', skipped: false, requested_by: { name: 'release-bot' } });
  const printed = await ok(['schedules', 'ticks', 'web-release', 'nightly']);
  expect(printed).toBe(`DUE (UTC)\tOUTCOME\tRUN\tMESSAGE\n${printed.split('\n')[1]!.split('\t')[0]}\tfired\t${ticks[0].run_id}\trun now by release-bot\n`);
  expect(await ok(['schedules', 'ticks', 'web-release', 'nightly', '--outcome', 'skipped'])).toBe('DUE (UTC)\tOUTCOME\tRUN\tMESSAGE\n');
  const run = await admin.getRun(deploymentId, ticks[0].run_id);
  expect(run).toMatchObject({ trigger: { type: 'schedule', schedule_id: id, name: 'nightly' }, triggered_by: 'schedule nightly as release-bot (service account)' });
});

test('an interval with jitter, created paused; mistakes are refused with the reason and a non-zero exit', async () => {
  const created = await ok(['schedules', 'create', 'web-release', '--name', 'rotate logs', '--every', '6h', '--time-zone', 'UTC', '--jitter', '2m', '--paused', '--json']);
  expect(JSON.parse(created)).toMatchObject({ name: 'rotate logs', every: '6h', jitter: '2m', paused: true, next_runs: [] });

  const both = await runCli(['schedules', 'create', 'web-release', '--name', 'x', '--cron', '* * * * *', '--every', '1m', '--time-zone', 'UTC'], env);
  expect([both.code, both.stderr]).toEqual([2, 'bosun: Give either --cron or --every (one of them)\n']);
  const zone = await runCli(['schedules', 'create', 'web-release', '--name', 'x', '--cron', '30 2 * * *', '--time-zone', 'Mars/Olympus'], env);
  expect([zone.code, zone.stderr]).toEqual([1, expect.stringContaining('time_zone: an IANA time zone such as "Europe/Berlin"')]);
  const cron = await runCli(['schedules', 'create', 'web-release', '--name', 'x', '--cron', '61 * * * *', '--time-zone', 'UTC'], env);
  expect([cron.code, cron.stderr]).toEqual([1, expect.stringMatching(/^bosun: The request body is invalid \(cron: .+\)\n$/)]);
  const missing = await runCli(['schedules', 'pause', 'web-release', 'weekly'], env);
  expect([missing.code, missing.stderr]).toEqual([1, 'bosun: No schedule of deployment web-release "weekly"\n']);
  const noDeployment = await runCli(['schedules', 'list', 'nowhere'], env);
  expect([noDeployment.code, noDeployment.stderr]).toEqual([2, 'bosun: No deployment named "nowhere" (nor with that id) in this token\'s organization\n']);
  const outcome = await runCli(['schedules', 'ticks', 'web-release', 'rotate logs', '--outcome', 'exploded'], env);
  expect(outcome.code).toBe(1);
});

test('freezes: declared, listed as holding now, a deploy refused naming it (exit 6), lifted, and the deploy goes', async () => {
  const now = Date.now();
  const created = JSON.parse(
    await ok(['freezes', 'create', '--name', 'black-friday', '--starts-at', new Date(now - 60_000).toISOString(), '--ends-at', new Date(now + 3600_000).toISOString(), '--note', 'the sale', '--json']),
  );
  expect(created).toMatchObject({ name: 'black-friday', kind: 'once', tags: null, active_now: true, note: 'the sale' });
  const listed = await ok(['freezes', 'list']);
  expect(listed).toMatch(/\nblack-friday|\n[0-9a-f]{24}\tblack-friday\t.+\tall servers\tfrozen now, until .+\tthe sale\n/);

  const refused = await runCli(['deploy', 'web-release', '--wait'], env);
  expect([refused.code, refused.stderr]).toEqual([6, expect.stringContaining('Not triggered: Change freeze black-friday')]);
  expect((await admin.request('get', `/deployments/${deploymentId}/runs`)).body.data.every((r: { trigger: { type: string } }) => r.trigger.type === 'schedule')).toBe(true);

  const recurring = await runCli(['freezes', 'create', '--name', 'office-hours', '--cron', '0 8 * * 1-5', '--duration', '10h', '--time-zone', 'Europe/Berlin', '--tag', 'prod'], env);
  expect(recurring.code).toBe(0);
  expect((await admin.request('get', '/freezes')).body.data.find((f: { name: string }) => f.name === 'office-hours')).toMatchObject({ kind: 'recurring', tags: ['prod'] });

  const lifted = await runCli(['freezes', 'delete', 'black-friday'], env);
  expect([lifted.code, lifted.stderr]).toEqual([0, 'Deleted the freeze "black-friday".\n']);
  expect((await admin.request('get', '/freezes')).body.data.map((f: { name: string }) => f.name)).toEqual(['office-hours']);
  const deployed = await runCli(['deploy', 'web-release', '--wait'], env);
  expect(deployed.code).toBe(0);
});
