import type { Command } from 'commander';
import { action, all, call, find, print, printJson, type Fail, type Json } from './calls';

/*
 * `bosun config sources list|show|sync`: the repositories Bosun syncs definitions from by itself
 * (an organization's administrators). Exit 0 done, 1 refused or the source failing, 2 usage or connection trouble.
 */

const short = (revision: string | null | undefined) => (revision ? revision.slice(0, 7) : '-');

/** A source's state in a word: what a person looks at first. */
export function sourceState(source: Json): string {
  const status = source.status;
  if (status.offered_host_key) return `host key to pin (${status.offered_host_key.fingerprint})`;
  if (status.last_error) return `failing: ${status.last_error.code}`;
  if (status.drift.length) return `drifted (${status.drift.length})`;
  return status.synced_at ? 'in sync' : 'never synced';
}

function showSource(source: Json): void {
  const status = source.status;
  print(`${source.name}  ${source.id}`);
  print(`  repository  ${source.git.url} ${source.git.ref}${source.git.path ? ` ${source.git.path}` : ''}`);
  print(`  every       ${source.every ?? 'on demand'}${source.prune ? ', prune' : ''}, as ${source.run_as.name}`);
  print(`  state       ${sourceState(source)}`);
  print(`  applied     ${short(status.revision_applied)} at ${status.synced_at ?? '-'}`);
  if (status.last_error) print(`  last error  ${status.last_error.message}`);
  for (const problem of status.last_plan?.errors ?? []) print(`    ${problem}`);
  for (const d of status.drift) print(`  drifted     ${d.kind} ${d.name} (${d.path})${d.forced_by ? `, forced by ${d.forced_by}` : ''}`);
}

export function configSourceCommands(config: Command, fail: Fail): void {
  const sources = config.command('sources').description('repositories Bosun syncs definitions from by itself (administrators)');

  sources
    .command('list')
    .description('every source: its repository, state and the revision applied')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean }) => {
        const items = await all('/config/sources');
        if (opts.json) return printJson(items);
        print(['NAME', 'REPOSITORY', 'REF', 'APPLIED', 'SYNCED', 'STATE'].join('\t'));
        for (const s of items) print([s.name, s.git.url, s.git.ref, short(s.status.revision_applied), s.status.synced_at ?? '-', sourceState(s)].join('\t'));
      }, fail),
    );

  sources
    .command('show <source>')
    .description('one source by name or id: its state, last plan’s problems, drift')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, opts: { json?: boolean }) => {
        const source = await find('/config/sources', 'source', name);
        if (opts.json) return printJson(source);
        showSource(source);
      }, fail),
    );

  sources
    .command('sync <source>')
    .description('sync a source now (by name or id); --trust-new-host-key pins the key its last sync was offered')
    .option('--trust-new-host-key', 'pin the host key the last refused sync was offered (check its fingerprint first)')
    .action(
      action(async (name: string, opts: { trustNewHostKey?: boolean }) => {
        const source = await find('/config/sources', 'source', name);
        await call('POST', `/config/sources/${encodeURIComponent(source.id)}/sync`, 202, opts.trustNewHostKey ? { trust_new_host_key: true } : {});
        print(`Syncing ${source.name}: bosun config sources show ${source.name}`);
      }, fail),
    );
}
