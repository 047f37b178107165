import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { action, call, print, printJson, type Fail, type Json } from './calls';
import { DeployExit } from './exit';

/*
 * `bosun servers import FILE`: an Ansible inventory or an ssh config sent to POST /servers/import
 * (BOSUN_URL and BOSUN_TOKEN), its diff printed as a table. Exit 0 done, 1 refused (a line the
 * format cannot read, a permission), 2 usage or connection trouble.
 */

const usage = (message: string) => new DeployExit(2, message);
const FORMATS = ['ansible-ini', 'ansible-yaml', 'ssh-config'];

/** The format a file's name (or, without an extension, its [groups]) says it is. */
export function inferFormat(file: string, content: string): string {
  const name = path.basename(file).toLowerCase();
  if (name.endsWith('.ini')) return 'ansible-ini';
  if (name.endsWith('.yml') || name.endsWith('.yaml')) return 'ansible-yaml';
  if (name === 'config' || name === 'ssh_config' || name.endsWith('.ssh_config')) return 'ssh-config';
  if (!path.extname(name) && /^\s*\[[^\]]+\]\s*$/m.test(content)) return 'ansible-ini';
  throw usage(`Cannot tell the format of ${file} from its name: give --format (${FORMATS.join(', ')})`);
}

const list = (items: unknown) => ((items as string[]).length ? (items as string[]).join(',') : '-');
const shown = (value: unknown) => (Array.isArray(value) ? list(value) : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

/** One row per server: what the import does to it. */
function printDiff(diff: Json): void {
  const rows: string[][] = [
    ...diff.add.map((a: Json) => ['add', a.title, `${a.username}@${a.host}:${a.port}  tags ${list(a.tags)}${a.via.length ? `  via ${list(a.via)}` : ''}`]),
    ...diff.change.map((c: Json) => ['change', c.title, Object.entries(c.fields as Record<string, Json>).map(([field, { from, to }]) => `${field}: ${shown(from)} → ${shown(to)}`).join('; ')]),
    ...diff.unchanged.map((u: Json) => ['unchanged', u.title, '-']),
    ...diff.missing.map((m: Json) => ['missing', m.title, `${m.host}  ${diff.dry_run ? 'quarantined when applied' : 'quarantined'}`]),
  ];
  const width = Math.max(5, ...rows.map((r) => r[1]!.length));
  print(['ACTION    ', 'TITLE'.padEnd(width), 'DETAILS'].join('  '));
  for (const [what, title, details] of rows) print([what!.padEnd(10), title!.padEnd(width), details].join('  '));
  const { add, change, unchanged, missing } = diff.counts;
  print(`${diff.dry_run ? 'dry run, nothing changed' : 'applied'}: ${add} to add, ${change} to change, ${unchanged} unchanged, ${missing} missing (source ${diff.source})`);
  if (diff.verification) print(`verifying ${diff.verification.servers} servers, ${diff.verification.concurrency} at a time (workflow ${diff.verification.workflow_id})`);
  for (const warning of diff.warnings as string[]) process.stderr.write(`warning: ${warning}\n`);
}

export function serverCommands(program: Command, fail: Fail): void {
  const servers = program.command('servers').description('servers (BOSUN_URL and BOSUN_TOKEN); exit 0 done, 1 refused, 2 usage or connection error');

  servers
    .command('import <file>')
    .description('import an Ansible inventory (INI or YAML) or an ssh config: print the diff, and apply it unless --dry-run')
    .option('--format <format>', `${FORMATS.join(', ')} (default: from the file name)`)
    .option('--source <name>', 'what a re-import is compared with (default: the file name without its extension)')
    .option('--dry-run', 'print the diff, change nothing')
    .option('--username <user>', 'for hosts the inventory gives no user')
    .option('--key-file <path>', 'the private key the servers to add log in with')
    .option('--tag <tag>', 'a tag for every imported server (repeat for more)', (v: string, all: string[] = []) => [...all, v])
    .option('--json', 'print the diff as JSON')
    .action(
      action(async (file: string, opts: { format?: string; source?: string; dryRun?: boolean; username?: string; keyFile?: string; tag?: string[]; json?: boolean }) => {
        const read = (what: string, at: string) => {
          try {
            return readFileSync(at, 'utf8');
          } catch (error) {
            throw usage(`Cannot read ${what} ${at}: ${(error as Error).message}`);
          }
        };
        const content = read('the inventory', file);
        const format = opts.format ?? inferFormat(file, content);
        if (!FORMATS.includes(format)) throw usage(`--format is one of ${FORMATS.join(', ')}`);
        const source = opts.source ?? path.basename(file).replace(/\.[^.]*$/, '');
        const defaults = {
          ...(opts.username ? { username: opts.username } : {}),
          ...(opts.keyFile ? { auth_method: 'private_key', private_key: read('the key file', opts.keyFile) } : {}),
          ...(opts.tag ? { tags: opts.tag } : {}),
        };
        const diff = await call('POST', '/servers/import', 200, { format, source, content, defaults, dry_run: opts.dryRun === true });
        if (opts.json) return printJson(diff);
        printDiff(diff);
      }, fail),
    );
}
