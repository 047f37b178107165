import type { Command } from 'commander';
import { action, all, call, find, print, printJson, type Fail, type Json } from './calls';
import { utc } from './times';

/*
 * `bosun notify channels|deliveries|test|redeliver`: notification channels and their deliveries over
 * the API (BOSUN_URL and BOSUN_TOKEN; an administrator's). Exit 0 done, 1 refused or not found, 2
 * usage or connection trouble.
 */

const lastAnswer = (d: Json) => {
  const last = (d.attempts as Json[]).at(-1);
  if (!last) return '-';
  return last.response_code !== null ? String(last.response_code) : `no answer (${last.error ?? 'unknown'})`;
};

export function notifyCommands(program: Command, fail: Fail): void {
  const notify = program
    .command('notify')
    .description('notification channels and their deliveries (BOSUN_URL and BOSUN_TOKEN, an administrator’s); exit 0 done, 1 refused, 2 usage or connection error');

  notify
    .command('channels')
    .description('every channel: its type, URL (a Slack token masked), events, and whether it is enabled')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean }) => {
        const items = await all('/notification-channels');
        if (opts.json) return printJson(items);
        print(['ID', 'NAME', 'TYPE', 'URL', 'EVENTS', 'STATE'].join('\t'));
        for (const c of items) print([c.id, c.name, c.type, c.url, (c.events as string[]).join(','), c.enabled ? 'enabled' : `disabled: ${c.disabled_reason ?? ''}`].join('\t'));
      }, fail),
    );

  notify
    .command('deliveries <channel>')
    .description('a channel’s deliveries (by its name or id), newest first: the event, status, attempts, last answer, next attempt')
    .option('--limit <n>', 'how many (default 20)', '20')
    .option('--json', 'print JSON')
    .action(
      action(async (ref: string, opts: { limit: string; json?: boolean }) => {
        const channel = await find('/notification-channels', 'channel', ref);
        const limit = Math.min(100, Math.max(1, Number(opts.limit) || 20));
        const items = (await call('GET', `/notification-channels/${encodeURIComponent(channel.id)}/deliveries?per_page=${limit}`, 200)) as unknown as Json[];
        if (opts.json) return printJson(items);
        print(['ID', 'EVENT', 'AT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'NEXT ATTEMPT'].join('\t'));
        for (const d of items) {
          print([d.id, d.event.type, utc(d.event.at), d.status, String(d.attempt_count), lastAnswer(d), d.next_attempt_at ? utc(d.next_attempt_at) : '-'].join('\t'));
        }
      }, fail),
    );

  notify
    .command('test <channel>')
    .description('send a `ping` to the channel through the same durable path as every event; `deliveries` shows how it went')
    .action(
      action(async (ref: string) => {
        const channel = await find('/notification-channels', 'channel', ref);
        await call('POST', `/notification-channels/${encodeURIComponent(channel.id)}/test`, 202);
        print(`${channel.name}: a ping is on its way`);
      }, fail),
    );

  notify
    .command('redeliver <channel> <delivery>')
    .description('send a delivery again (its event, the same webhook-id)')
    .action(
      action(async (ref: string, deliveryId: string) => {
        const channel = await find('/notification-channels', 'channel', ref);
        await call('POST', `/notification-channels/${encodeURIComponent(channel.id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, 202);
        print(`${channel.name}: delivery ${deliveryId} is sent again`);
      }, fail),
    );
}
