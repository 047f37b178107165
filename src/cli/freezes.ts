import type { Command } from 'commander';
import { action, all, call, find, print, printJson, type Fail, type Json } from './calls';
import { DeployExit } from './exit';
import { utc } from './times';

/*
 * `bosun freezes list|create|delete`: change freezes over the API (BOSUN_URL and BOSUN_TOKEN).
 * Anyone who reads may list them; creating and deleting takes an administrator of the whole
 * organization (the server decides). Exit 0 done, 1 refused, 2 usage or connection trouble.
 */

const usage = (message: string) => new DeployExit(2, message);

/** When a freeze holds: a one-off window, or a cron and a duration in its zone. */
export const windowText = (f: Json) =>
  f.kind === 'recurring' ? `cron ${f.cron} for ${f.duration}, in ${f.time_zone}` : `${utc(f.starts_at)} → ${utc(f.ends_at)}`;

export const coversText = (f: Json) => (f.tags ? `servers tagged ${(f.tags as string[]).join(' or ')}` : 'all servers');

const nowText = (f: Json) => {
  if (f.active_now) return f.current_window ? `frozen now, until ${utc(f.current_window.ends_at)}` : 'frozen now';
  return f.next_window ? `next ${utc(f.next_window.starts_at)} → ${utc(f.next_window.ends_at)}` : 'not now';
};

export function freezeCommands(program: Command, fail: Fail): void {
  const freezes = program
    .command('freezes')
    .description('change freezes: windows when no run may start on the servers they cover (BOSUN_URL and BOSUN_TOKEN); exit 0 done, 1 refused, 2 usage or connection error');

  freezes
    .command('list')
    .description('every freeze: its window, what it covers, whether it holds now')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean }) => {
        const items = await all('/freezes');
        if (opts.json) return printJson(items);
        print(['ID', 'NAME', 'WINDOW', 'COVERS', 'NOW', 'NOTE'].join('\t'));
        for (const f of items) print([f.id, f.name, windowText(f), coversText(f), nowText(f), f.note ?? '-'].join('\t'));
      }, fail),
    );

  freezes
    .command('create')
    .description('declare a freeze: once (--starts-at and --ends-at) or recurring (--cron and --duration, in --time-zone); an administrator’s')
    .requiredOption('--name <name>', 'unique in the organization (black-friday)')
    .option('--starts-at <time>', 'a one-off window’s start, ISO 8601 with its offset (2025-11-28T00:00:00Z)')
    .option('--ends-at <time>', 'a one-off window’s end')
    .option('--cron <expression>', 'a recurring window’s start, five fields in --time-zone ("0 8 * * 1-5": weekdays at 08:00)')
    .option('--duration <duration>', 'how long each recurring window lasts (10h)')
    .option('--time-zone <zone>', 'an IANA time zone (required with --cron; default UTC)')
    .option('--tag <tag>', 'cover the servers having this tag (repeat for more: any of them); none: all servers', (v: string, all: string[] = []) => [...all, v])
    .option('--note <text>', 'why')
    .option('--json', 'print JSON')
    .action(
      action(
        async (opts: { name: string; startsAt?: string; endsAt?: string; cron?: string; duration?: string; timeZone?: string; tag?: string[]; note?: string; json?: boolean }) => {
          const once = opts.startsAt !== undefined || opts.endsAt !== undefined;
          const recurring = opts.cron !== undefined || opts.duration !== undefined;
          if (once === recurring) throw usage('Give either --starts-at and --ends-at (once) or --cron and --duration (recurring)');
          if (once && (opts.startsAt === undefined || opts.endsAt === undefined)) throw usage('A one-off freeze takes both --starts-at and --ends-at');
          if (recurring && (opts.cron === undefined || opts.duration === undefined)) throw usage('A recurring freeze takes both --cron and --duration');
          const body = {
            name: opts.name,
            ...(once ? { starts_at: opts.startsAt, ends_at: opts.endsAt } : { cron: opts.cron, duration: opts.duration }),
            ...(opts.timeZone !== undefined ? { time_zone: opts.timeZone } : {}),
            tags: opts.tag?.length ? opts.tag : null,
            note: opts.note ?? null,
          };
          const created = await call('POST', '/freezes', 201, body);
          if (opts.json) return printJson(created);
          print(`${created.name}  ${created.id}`);
          print(`  window  ${windowText(created)}`);
          print(`  covers  ${coversText(created)}`);
          print(`  now     ${nowText(created)}`);
        },
        fail,
      ),
    );

  freezes
    .command('delete <freeze>')
    .description('lift a freeze (by name or id) at once; runs waiting on it go on')
    .action(
      action(async (ref: string) => {
        const freeze = await find('/freezes', 'freeze', ref);
        await call('DELETE', `/freezes/${encodeURIComponent(freeze.id)}`, 204);
        process.stderr.write(`Deleted the freeze "${freeze.name}".\n`);
      }, fail),
    );
}
