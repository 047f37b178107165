import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { action, print, printJson, type Fail, type Json } from './calls';
import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';
import { configSourceCommands } from './config-sources';

/*
 * `bosun config plan|apply|export|schema`: definitions kept in Git (BOSUN_URL and BOSUN_TOKEN). plan
 * prints what an apply would change, as `terraform plan` does; with --exit-code it ends 0 (no
 * change), 2 (changes) or 1 (errors, or any other trouble), so CI can tell them apart.
 */

/** The YAML files under `dir`, each by its path relative to it (`deploy/web.yaml`), in a stable order. */
export function readConfigDir(dir: string): Array<{ path: string; content: string }> {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new DeployExit(2, `${dir} is not a directory`);
  const files: Array<{ path: string; content: string }> = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith('.')) continue;
      const inside = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(inside);
      else if (/\.ya?ml$/.test(entry.name)) files.push({ path: inside, content: readFileSync(path.join(dir, inside), 'utf8') });
    }
  };
  walk('');
  return files;
}

/** The commit `dir` is at, when it is in a Git work tree; null otherwise. */
function headRevision(dir: string): string | null {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || null;
  } catch {
    return null;
  }
}

interface Target {
  source?: string;
  revision?: string;
  prune?: boolean;
}

function requestOf(dir: string, opts: Target) {
  const source = opts.source ?? process.env.BOSUN_CONFIG_SOURCE;
  if (!source) throw new DeployExit(2, 'Name the source: --source platform-repo (or BOSUN_CONFIG_SOURCE); prune deletes only what the same source applied');
  return { source, revision: opts.revision ?? headRevision(dir), files: readConfigDir(dir), prune: Boolean(opts.prune) };
}

const shown = (value: unknown) => (value === null || value === undefined ? 'null' : JSON.stringify(value));

/** A plan as lines: + create, ~ update (each field from → to), - delete, drift, problems, and the summary. */
export function planLines(plan: Json): string[] {
  const lines: string[] = [];
  for (const c of plan.create) lines.push(`+ ${c.kind} ${c.name}  (${c.path})`);
  for (const u of plan.update) {
    lines.push(`~ ${u.kind} ${u.name}  (${u.path}${u.reason === 'changed' ? '' : `, ${u.reason}`})`);
    for (const [field, change] of Object.entries(u.fields as Record<string, { from: unknown; to: unknown }>)) lines.push(`    ${field}: ${shown(change.from)} → ${shown(change.to)}`);
  }
  for (const d of plan.delete) lines.push(`- ${d.kind} ${d.name}`);
  for (const d of plan.drift) lines.push(`! drifted: ${d.kind} ${d.name}  (${d.path})${d.forced_by ? `, forced by ${d.forced_by} at ${d.forced_at}` : ', changed by another path'}`);
  for (const w of plan.warnings) lines.push(`warning: ${w.text}`);
  for (const e of plan.errors) lines.push(`error: ${e.text}`);
  const counts = `${plan.create.length} to create, ${plan.update.length} to change, ${plan.delete.length} to delete, ${plan.unchanged.length} unchanged`;
  lines.push(plan.errors.length ? `Plan refused: ${plan.errors.length} error${plan.errors.length > 1 ? 's' : ''} (${counts}).` : `Plan: ${counts}.`);
  lines.push(`plan_hash: ${plan.plan_hash}`);
  return lines;
}

const hasChanges = (plan: Json) => plan.create.length + plan.update.length + plan.delete.length > 0;

export function configCommands(program: Command, fail: Fail): void {
  const config = program
    .command('config')
    .description('definitions kept in Git: plan and apply a directory of YAML files, export the organization (BOSUN_URL and BOSUN_TOKEN)');
  const common = (command: Command) =>
    command
      .option('--source <name>', 'where the files come from (default BOSUN_CONFIG_SOURCE): what is applied is marked with it, and prune deletes only its own')
      .option('--revision <sha>', 'the commit the files are at (default: the directory’s Git HEAD, if any)')
      .option('--prune', 'delete what this source applied before that the files no longer hold')
      .option('--json', 'print JSON');

  common(config.command('plan <dir>').description('what applying the directory’s YAML files would change; changes nothing'))
    .option('--exit-code', 'exit 0 when nothing would change, 2 when something would, 1 on errors')
    .action(
      action(async (dir: string, opts: Target & { json?: boolean; exitCode?: boolean }) => {
        const res = await bosunApiFromEnvironment().request('POST', '/config/plan', {}, requestOf(dir, opts));
        if (res.status !== 200) throw new DeployExit(opts.exitCode || res.status !== 401 ? 1 : 2, errorMessage(res.body));
        const plan = (res.body as Json).data as Json;
        if (opts.json) printJson(plan);
        else planLines(plan).forEach((line) => print(line));
        if (plan.errors.length) throw new DeployExit(1, '');
        if (opts.exitCode && hasChanges(plan)) throw new DeployExit(2, '');
      }, fail),
    );

  common(config.command('apply <dir>').description('apply the directory’s YAML files: all or nothing'))
    .option('--plan-hash <hash>', 'the plan reviewed: refused (nothing applied) if the plan is another now')
    .action(
      action(async (dir: string, opts: Target & { json?: boolean; planHash?: string }) => {
        const body = { ...requestOf(dir, opts), ...(opts.planHash ? { plan_hash: opts.planHash } : {}) };
        const res = await bosunApiFromEnvironment().request('POST', '/config/apply', {}, body);
        if (res.status !== 200) {
          const details = ((res.body as Json).error?.details ?? []) as Array<{ path: string; message: string }>;
          throw new DeployExit(res.status === 401 ? 2 : 1, [((res.body as Json).error?.message as string) ?? errorMessage(res.body), ...details.map((d) => `  ${d.path}: ${d.message}`)].join('\n'));
        }
        const applied = (res.body as Json).data as Json;
        if (opts.json) return printJson(applied);
        planLines(applied.plan).slice(0, -2).forEach((line) => print(line));
        print(`Applied: ${applied.created} created, ${applied.updated} changed, ${applied.deleted} deleted.`);
      }, fail),
    );

  config
    .command('export')
    .description('the organization’s definitions as YAML files (to stdout, or one file per kind into --dir)')
    .option('--dir <dir>', 'write the files into this directory (created if needed)')
    .option('--kinds <list>', 'only these kinds, comma-separated (Deployment,Pipeline,…)')
    .action(
      action(async (opts: { dir?: string; kinds?: string }) => {
        const res = await bosunApiFromEnvironment().request('GET', `/config/export${opts.kinds ? `?kinds=${encodeURIComponent(opts.kinds)}` : ''}`);
        if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
        const files = ((res.body as Json).data as Json).files as Array<{ path: string; content: string }>;
        if (!opts.dir) return void process.stdout.write(files.map((f) => f.content).join('---\n'));
        mkdirSync(opts.dir, { recursive: true });
        for (const file of files) writeFileSync(path.join(opts.dir, file.path), file.content);
        process.stderr.write(`Wrote ${files.map((f) => f.path).join(', ')} into ${opts.dir}\n`);
      }, fail),
    );

  configSourceCommands(config, fail);

  config
    .command('schema')
    .description('the JSON Schema of the documents (for an editor’s YAML support)')
    .action(
      action(async () => {
        const res = await bosunApiFromEnvironment().request('GET', '/config/schema');
        if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
        printJson((res.body as Json).data);
      }, fail),
    );
}
