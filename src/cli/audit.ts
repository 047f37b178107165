import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { action, print, printJson, type Fail, type Json } from './calls';
import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';

/*
 * `bosun audit verify|export`: the organization's audit trail over the API (BOSUN_URL and BOSUN_TOKEN,
 * a token of role admin or auditor). Exit 0 the chain holds, 1 broken (or refused), 2 usage or connection trouble.
 */

/** `--checkpoint 1234:9f86…`: a head published earlier. */
function parseCheckpoint(text: string): { seq: number; hash: string } {
  const match = /^(\d+):([0-9a-f]{64})$/.exec(text.trim());
  if (!match) throw new DeployExit(2, '--checkpoint is <seq>:<hash>, the hash 64 lowercase hexadecimal digits (as published)');
  return { seq: Number(match[1]), hash: match[2]! };
}

export function auditCommands(program: Command, fail: Fail): void {
  const audit = program
    .command('audit')
    .description('the audit trail (BOSUN_URL and BOSUN_TOKEN of an admin or auditor); exit 0 the chain holds, 1 broken or refused, 2 usage or connection error');

  audit
    .command('verify')
    .description('walk the hash chain and name the first broken link; with --checkpoint, also prove the trail still holds that head')
    .option('--checkpoint <seq:hash>', 'a checkpoint published earlier (audit.checkpoint notification, or the log)')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { checkpoint?: string; json?: boolean }) => {
        const body = opts.checkpoint ? { checkpoint: parseCheckpoint(opts.checkpoint) } : {};
        const res = await bosunApiFromEnvironment().request('POST', '/audit/verify', {}, body);
        if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
        const verdict = res.body as Json;
        if (opts.json) printJson(verdict);
        else if (verdict.ok) print(`ok: ${verdict.checked} entries checked${opts.checkpoint ? ', the checkpoint is held' : ''}`);
        if (!verdict.ok) throw new DeployExit(1, `broken at entry ${verdict.first_broken.seq}: ${verdict.first_broken.reason} (${verdict.checked} entries checked before it)`);
      }, fail),
    );

  audit
    .command('export')
    .description('every entry as JSON lines on stdout, oldest first, streamed')
    .option('--since <time>', 'entries from this time (ISO 8601)')
    .option('--until <time>', 'entries before this time (ISO 8601)')
    .option('--action <action>', 'an action ("run.trigger") or a family ("run.*")')
    .action(
      action(async (opts: { since?: string; until?: string; action?: string }) => {
        const api = bosunApiFromEnvironment();
        const query = new URLSearchParams(Object.entries({ since: opts.since, until: opts.until, action: opts.action }).filter((e): e is [string, string] => e[1] !== undefined));
        const res = await fetch(`${api.base}/api/v1/audit/export${query.size ? `?${query}` : ''}`, { headers: { Authorization: `Bearer ${api.token}` } }).catch((error: Error) => {
          throw new DeployExit(2, `Cannot reach Bosun at ${api.base}: ${error.message}`);
        });
        if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage((await res.json().catch(() => ({}))) as Record<string, unknown>));
        await res.body!.pipeTo(Writable.toWeb(process.stdout));
      }, fail),
    );
}
