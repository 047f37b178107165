import type { Command } from 'commander';
import type { Schedule, ScheduleTick } from './api-types';
import { action, all, call, find, print, printJson, type Fail } from './calls';
import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';
import { resolveDeployment } from './resolve';
import { utc, wallClock } from './times';

/*
 * `bosun schedules list|create|pause|unpause|trigger|ticks`: a deployment's schedules over the API
 * (BOSUN_URL and BOSUN_TOKEN). A deployment, a schedule and a service account are named by name or
 * id. Exit 0 done, 1 refused by the API (its reason on stderr), 2 usage or connection trouble.
 */

const usage = (message: string) => new DeployExit(2, message);

const schedulesPath = (deploymentId: string) => `/deployments/${encodeURIComponent(deploymentId)}/schedules`;

/** The deployment's id and the schedule (by its id or its name, unique within the deployment). */
async function scheduleOf(deployment: string, schedule: string): Promise<{ path: string; schedule: Schedule }> {
  const deploymentId = await resolveDeployment(bosunApiFromEnvironment(), deployment);
  const found = (await find(schedulesPath(deploymentId), `schedule of deployment ${deployment}`, schedule)) as Schedule;
  return { path: `${schedulesPath(deploymentId)}/${encodeURIComponent(found.id)}`, schedule: found };
}

/** A service account by its id (any token may name one so) or its name (listing them takes an administrator's token). */
async function serviceAccountId(ref: string): Promise<string> {
  if (/^[0-9a-f]{24}$/i.test(ref)) return ref;
  return (await find('/service-accounts', 'service account', ref)).id;
}

/** `--param name=value` (repeated) as the parameters object. */
function parametersOf(pairs: string[] = []): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw usage(`--param takes name=value (got "${pair}")`);
    parameters[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return parameters;
}

export const whenText = (s: Pick<Schedule, 'cron' | 'every'>) => (s.cron ? `cron ${s.cron}` : `every ${s.every}`);

const stateText = (s: Schedule) => {
  const who = s.pause?.by ? ` by ${s.pause.by.name}` : '';
  const why = s.pause?.note ? `: ${s.pause.note}` : '';
  if (s.paused) return `paused${who} at ${utc(s.pause?.at)}${why}`;
  return s.pause ? `active (unpaused${who} at ${utc(s.pause.at)}${why})` : 'active';
};

/** A schedule, for a person: when it fires, as whom, whether paused and why, its next runs in its zone and in UTC. */
export function printSchedule(s: Schedule, count = 5) {
  const parameters = Object.entries(s.parameters);
  print(`${s.name}  ${s.id}`);
  print(`  when        ${whenText(s)}, in ${s.time_zone}`);
  print(`  runs as     ${s.run_as.name} (service account)`);
  print(`  overlap     ${s.overlap}; catch-up window ${s.catch_up_window}; jitter ${s.jitter ?? 'none'}`);
  if (parameters.length) print(`  parameters  ${parameters.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (s.note) print(`  note        ${s.note}`);
  print(`  state       ${stateText(s)}`);
  if (s.next_runs === null) print('  next runs   unknown (Temporal could not be asked)');
  else if (!s.next_runs.length) print(`  next runs   none${s.paused ? ' while paused' : ''}`);
  else {
    print(`  next runs   ${s.time_zone.padEnd(29)}UTC`);
    for (const r of s.next_runs.slice(0, count)) print(`              ${wallClock(r.local).padEnd(29)}${utc(r.at)}`);
  }
}

const tickLine = (t: ScheduleTick) =>
  [utc(t.scheduled_at), t.outcome, t.run_id ?? '-', [t.requested_by ? `run now by ${t.requested_by.name}` : '', t.message ?? ''].filter(Boolean).join('; ') || '-'].join('\t');

type CreateOptions = {
  name: string;
  cron?: string;
  every?: string;
  timeZone: string;
  param?: string[];
  overlap?: string;
  catchUpWindow?: string;
  jitter?: string;
  paused?: boolean;
  note?: string;
  runAs?: string;
  json?: boolean;
};

/** The body of POST …/schedules from `create`'s options (what is not given, the API's default). */
const createBody = (opts: CreateOptions, parameters: Record<string, string>, runAs: string | undefined) => ({
  name: opts.name,
  ...(opts.cron !== undefined ? { cron: opts.cron } : { every: opts.every }),
  time_zone: opts.timeZone,
  parameters,
  ...(opts.overlap !== undefined ? { overlap: opts.overlap } : {}),
  ...(opts.catchUpWindow !== undefined ? { catch_up_window: opts.catchUpWindow } : {}),
  ...(opts.jitter !== undefined ? { jitter: opts.jitter } : {}),
  paused: !!opts.paused,
  note: opts.note ?? null,
  ...(runAs !== undefined ? { run_as: runAs } : {}),
});

export function scheduleCommands(program: Command, fail: Fail): void {
  const schedules = program
    .command('schedules')
    .description('a deployment’s schedules: runs on a clock, in a time zone (BOSUN_URL and BOSUN_TOKEN); exit 0 done, 1 refused, 2 usage or connection error');
  listCommand(schedules, fail);
  showCommand(schedules, fail);
  createCommand(schedules, fail);
  pauseCommands(schedules, fail);
  triggerCommand(schedules, fail);
  ticksCommand(schedules, fail);
}

/** `bosun schedules list <deployment>`: one line each, its next run in its zone and in UTC. */
function listCommand(schedules: Command, fail: Fail): void {
  schedules
    .command('list <deployment>')
    .description('the deployment’s schedules and the next run of each, in its zone and in UTC')
    .option('--json', 'print JSON')
    .action(
      action(async (deployment: string, opts: { json?: boolean }) => {
        const deploymentId = await resolveDeployment(bosunApiFromEnvironment(), deployment);
        const items = (await all(schedulesPath(deploymentId))) as Schedule[];
        if (opts.json) return printJson(items);
        print(['ID', 'NAME', 'WHEN', 'TIME ZONE', 'STATE', 'NEXT RUN (ZONE)', 'NEXT RUN (UTC)'].join('\t'));
        for (const s of items) {
          const next = s.next_runs?.[0];
          print([s.id, s.name, whenText(s), s.time_zone, s.paused ? 'paused' : 'active', next ? wallClock(next.local) : '-', next ? utc(next.at) : '-'].join('\t'));
        }
      }, fail),
    );
}

/** `bosun schedules show <deployment> <schedule>`. */
function showCommand(schedules: Command, fail: Fail): void {
  schedules
    .command('show <deployment> <schedule>')
    .description('one schedule: when, as whom, paused or not and why, its next 10 runs')
    .option('--json', 'print JSON')
    .action(
      action(async (deployment: string, schedule: string, opts: { json?: boolean }) => {
        const { path } = await scheduleOf(deployment, schedule);
        const s = (await call('GET', path, 200)) as Schedule;
        if (opts.json) return printJson(s);
        printSchedule(s, 10);
      }, fail),
    );
}

/** `bosun schedules create <deployment> --name … --cron …|--every … --time-zone …`. */
function createCommand(schedules: Command, fail: Fail): void {
  schedules
    .command('create <deployment>')
    .description('schedule the deployment: a cron expression or an interval, read in a time zone; prints the schedule and its next runs')
    .requiredOption('--name <name>', 'unique within the deployment (nightly, backup)')
    .option('--cron <expression>', 'five fields: minute hour day-of-month month day-of-week ("30 2 * * 1-5"), in --time-zone')
    .option('--every <interval>', 'instead of --cron: 15m, 6h, 1d (at least 1m)')
    .requiredOption('--time-zone <zone>', 'an IANA time zone: Europe/Berlin, America/New_York, UTC')
    .option('--param <name=value>', 'a parameter each run gets (repeat for more)', (v: string, all: string[] = []) => [...all, v])
    .option('--overlap <policy>', 'a tick while the last run still goes: skip (default), buffer_one, cancel_other, allow_all')
    .option('--catch-up-window <duration>', 'how late a missed tick may still run after an outage (default 5m; older ones are recorded as missed)')
    .option('--jitter <duration>', 'each tick up to this much later, at random (at most 1h)')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'why it exists')
    .option('--run-as <service account>', 'the service account its runs act as (name or id); default: the token’s, when it is one')
    .option('--json', 'print JSON')
    .action(
      action(async (deployment: string, opts: CreateOptions) => {
        if ((opts.cron === undefined) === (opts.every === undefined)) throw usage('Give either --cron or --every (one of them)');
        const parameters = parametersOf(opts.param);
        const deploymentId = await resolveDeployment(bosunApiFromEnvironment(), deployment);
        const runAs = opts.runAs !== undefined ? await serviceAccountId(opts.runAs) : undefined;
        const created = (await call('POST', schedulesPath(deploymentId), 201, createBody(opts, parameters, runAs))) as Schedule;
        if (opts.json) return printJson(created);
        printSchedule(created);
      }, fail),
    );
}

/** `bosun schedules pause|unpause <deployment> <schedule> [--note]`. */
function pauseCommands(schedules: Command, fail: Fail): void {
  for (const verb of ['pause', 'unpause'] as const) {
    schedules
      .command(`${verb} <deployment> <schedule>`)
      .description(verb === 'pause' ? 'no tick runs until unpaused (each is recorded as skipped: paused)' : 'ticks run again from the next one')
      .option('--note <text>', verb === 'pause' ? 'why (shown with the schedule)' : 'why')
      .option('--json', 'print JSON')
      .action(
        action(async (deployment: string, schedule: string, opts: { note?: string; json?: boolean }) => {
          const { path } = await scheduleOf(deployment, schedule);
          const s = (await call('POST', `${path}/${verb}`, 200, { note: opts.note ?? null })) as Schedule;
          if (opts.json) return printJson(s);
          print(`${s.name}: ${stateText(s)}`);
          const next = s.next_runs?.[0];
          if (next) print(`next run ${wallClock(next.local)} (${utc(next.at)})`);
        }, fail),
      );
  }
}

/** `bosun schedules trigger <deployment> <schedule> [--overlap]`: a tick now. */
function triggerCommand(schedules: Command, fail: Fail): void {
  schedules
    .command('trigger <deployment> <schedule>')
    .description('run it now, as its service account, the way a tick does; `ticks` then shows its run (or why none started)')
    .option('--overlap <policy>', 'while a run of the schedule is still going, instead of its own policy: skip, buffer_one, cancel_other, allow_all')
    .action(
      action(async (deployment: string, schedule: string, options: { overlap?: string }) => {
        const { path, schedule: s } = await scheduleOf(deployment, schedule);
        const res = await bosunApiFromEnvironment().request('POST', `${path}/trigger`, {}, options.overlap ? { overlap: options.overlap } : {});
        if (res.status !== 202) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
        // "Tick started", or how the overlap policy met the runs still going (buffered, cancelling them).
        const how = String(res.body.message).split('; GET')[0];
        const at = utc(res.body.scheduled_at as string);
        print(how === 'Tick started' ? `${s.name}: a tick started at ${at}` : `${s.name}: a tick asked at ${at}: ${how}`);
      }, fail),
    );
}

/** `bosun schedules ticks <deployment> <schedule> [--outcome] [--limit]`: newest first. */
function ticksCommand(schedules: Command, fail: Fail): void {
  schedules
    .command('ticks <deployment> <schedule>')
    .description('the schedule’s ticks, newest first: fired (with the run) or skipped (with the reason)')
    .option('--outcome <outcome>', 'fired, skipped (any reason), or one reason: missed, overlap, frozen, paused, forbidden, refused')
    .option('--limit <n>', 'how many (default 20)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100) throw usage('--limit takes a whole number from 1 to 100');
      return n;
    })
    .option('--json', 'print JSON')
    .action(
      action(async (deployment: string, schedule: string, opts: { outcome?: string; limit?: number; json?: boolean }) => {
        const { path } = await scheduleOf(deployment, schedule);
        const query = `per_page=${opts.limit ?? 20}${opts.outcome ? `&outcome=${encodeURIComponent(opts.outcome)}` : ''}`;
        const res = await bosunApiFromEnvironment().request('GET', `${path}/ticks?${query}`);
        if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
        const ticks = res.body.data as ScheduleTick[];
        if (opts.json) return printJson(ticks);
        print(['DUE (UTC)', 'OUTCOME', 'RUN', 'MESSAGE'].join('\t'));
        for (const t of ticks) print(tickLine(t));
        const total = (res.body.meta as { total: number }).total;
        if (total > ticks.length) process.stderr.write(`(${ticks.length} of ${total} ticks; --limit for more)\n`);
      }, fail),
    );
}
