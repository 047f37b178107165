import type { Command } from 'commander';
import { all, call, find, action as run, print, printJson, type Fail, type Json } from './calls';
import { DeployExit } from './exit';

/*
 * `bosun whoami`, `bosun people|service-accounts|teams|roles …`: who may do what, over the API
 * (BOSUN_URL and BOSUN_TOKEN), so the server's one gate decides as it does for every client.
 * Exit 0 done, 1 refused by the API, 2 usage or connection trouble.
 */

const SUBJECTS = { person: '/people', team: '/teams', service_account: '/service-accounts' } as const;

/** `person:alice`, `team:web team`, `service-account:ci-web` (a name or an id). */
async function subjectOf(text: string): Promise<{ type: keyof typeof SUBJECTS; id: string }> {
  const at = text.indexOf(':');
  const type = text.slice(0, at).replace('-', '_') as keyof typeof SUBJECTS;
  if (at < 1 || !(type in SUBJECTS)) throw new DeployExit(2, `--to takes person:<name>, team:<name> or service-account:<name> (got "${text}")`);
  return { type, id: (await find(SUBJECTS[type], type.replace('_', ' '), text.slice(at + 1))).id };
}

const list = (text: string | undefined) => (text === undefined ? undefined : text.split(',').map((s) => s.trim()).filter(Boolean));

const bindingLine = (b: Json) =>
  [
    b.role,
    b.servers ? `servers tagged ${b.servers.tags.join(' and ')}` : 'every server',
    b.deployments ? `deployments ${b.deployments.join(', ')}` : 'every deployment',
    b.max_targets_per_run ? `at most ${b.max_targets_per_run} per run` : '',
  ]
    .filter(Boolean)
    .join(', ');

export function accessCommands(program: Command, fail: Fail): void {
  whoamiCommand(program, fail);
  peopleCommands(program, fail);
  serviceAccountCommands(program, fail);
  teamCommands(program, fail);
  roleCommands(program, fail);
}

/** `bosun whoami`: who the token acts for and what gives it rights. */
function whoamiCommand(program: Command, fail: Fail): void {
  program
    .command('whoami')
    .description('who BOSUN_TOKEN acts for, its teams, and the role bindings that give it rights')
    .option('--json', 'print JSON')
    .action(
      run(async (opts: { json?: boolean }) => {
        const me = await call('GET', '/me', 200);
        if (opts.json) return printJson(me);
        print(`${me.identity.name} (${me.identity.type === 'person' ? 'person' : 'service account'}) ${me.identity.id}`);
        if (me.token) print(`token    ${me.token.name} (scopes: ${me.token.scopes.join(', ')})`);
        if (me.teams.length) print(`teams    ${me.teams.map((t: Json) => t.name).join(', ')}`);
        for (const b of me.bindings) print(`role     ${bindingLine(b)}`);
        if (!me.bindings.length) print('role     (none: this identity may do nothing)');
      }, fail),
    );
}

/** `bosun people list|add|disable|enable|remove`. */
function peopleCommands(program: Command, fail: Fail): void {
  const people = program.command('people').description('the people of your organization (administrators)');
  people.command('list').option('--json', 'print JSON').action(
    run(async (opts: { json?: boolean }) => {
      const items = await all('/people');
      if (opts.json) return printJson(items);
      print(['ID', 'NAME', 'EMAIL', 'DISABLED'].join('\t'));
      for (const p of items) print([p.id, p.name, p.email ?? '-', p.disabled ? 'yes' : 'no'].join('\t'));
    }, fail),
  );
  people
    .command('add <name>')
    .option('--email <email>')
    .option('--oidc-subject <sub>', 'the `sub` the OpenID provider gives them')
    .action(run(async (name: string, opts: { email?: string; oidcSubject?: string }) => print((await call('POST', '/people', 201, { name, email: opts.email ?? null, oidc_subject: opts.oidcSubject ?? null })).id), fail));
  for (const [verb, disabled] of [['disable', true], ['enable', false]] as const) {
    people
      .command(`${verb} <person>`)
      .description(disabled ? 'their sessions and tokens stop at once' : 'they may sign in again')
      .action(run(async (who: string) => void (await call('PATCH', `/people/${(await find('/people', 'person', who)).id}`, 200, { disabled })), fail));
  }
  people.command('remove <person>').action(run(async (who: string) => void (await call('DELETE', `/people/${(await find('/people', 'person', who)).id}`, 204)), fail));
}

/** `bosun service-accounts list|add|remove|token`. */
function serviceAccountCommands(program: Command, fail: Fail): void {
  const accounts = program.command('service-accounts').description('CI pipelines, scripts and agents (administrators)');
  accounts.command('list').option('--json', 'print JSON').action(
    run(async (opts: { json?: boolean }) => {
      const items = await all('/service-accounts');
      if (opts.json) return printJson(items);
      print(['ID', 'NAME', 'DESCRIPTION'].join('\t'));
      for (const a of items) print([a.id, a.name, a.description ?? '-'].join('\t'));
    }, fail),
  );
  accounts
    .command('add <name>')
    .option('--description <text>')
    .option('--agent', 'an AI agent acts as it: its conversations hold change and destructive steps for a person (docs/agents.md)')
    .action(
      run(async (name: string, opts: { description?: string; agent?: boolean }) => print((await call('POST', '/service-accounts', 201, { name, description: opts.description ?? null, agent: !!opts.agent })).id), fail),
    );
  accounts.command('remove <account>').action(run(async (who: string) => void (await call('DELETE', `/service-accounts/${(await find('/service-accounts', 'service account', who)).id}`, 204)), fail));
  accounts
    .command('token <account>')
    .description('make a token for it and print it (alone, on stdout)')
    .requiredOption('--name <name>', 'the token’s name')
    .option('--scopes <list>', 'narrow it (comma-separated); default: everything the account may')
    .option('--expires-in <duration>', '30m, 12h, 90d, 2w (default: never)')
    .action(
      run(async (who: string, opts: { name: string; scopes?: string; expiresIn?: string }) => {
        const account = await find('/service-accounts', 'service account', who);
        print((await call('POST', `/service-accounts/${account.id}/tokens`, 201, { name: opts.name, scopes: list(opts.scopes), expires_in: opts.expiresIn ?? null })).token);
      }, fail),
    );
}

/** `bosun teams list|add|remove`. */
function teamCommands(program: Command, fail: Fail): void {
  const teams = program.command('teams').description('teams of people who share role bindings (administrators)');
  teams.command('list').option('--json', 'print JSON').action(
    run(async (opts: { json?: boolean }) => {
      const items = await all('/teams');
      if (opts.json) return printJson(items);
      print(['ID', 'NAME', 'MEMBERS', 'OIDC GROUPS'].join('\t'));
      for (const t of items) print([t.id, t.name, String(t.members.length), t.oidc_groups.join(',') || '-'].join('\t'));
    }, fail),
  );
  teams
    .command('add <name>')
    .option('--members <people>', 'comma-separated names or ids')
    .option('--oidc-groups <groups>', 'comma-separated groups of the OpenID provider')
    .action(
      run(async (name: string, opts: { members?: string; oidcGroups?: string }) => {
        const members = await Promise.all((list(opts.members) ?? []).map(async (who) => (await find('/people', 'person', who)).id));
        print((await call('POST', '/teams', 201, { name, members, oidc_groups: list(opts.oidcGroups) ?? [] })).id);
      }, fail),
    );
  teams.command('remove <team>').action(run(async (which: string) => void (await call('DELETE', `/teams/${(await find('/teams', 'team', which)).id}`, 204)), fail));
}

/** `bosun roles list|grant|revoke`. */
function roleCommands(program: Command, fail: Fail): void {
  const roles = program.command('roles').description('role bindings: who may do what, on which servers (administrators)');
  roles.command('list').option('--json', 'print JSON').action(
    run(async (opts: { json?: boolean }) => {
      const items = await all('/role-bindings');
      if (opts.json) return printJson(items);
      print(['ID', 'SUBJECT', 'BINDING'].join('\t'));
      for (const b of items) print([b.id, `${b.subject.type}:${b.subject.id}`, bindingLine(b)].join('\t'));
    }, fail),
  );
  roles
    .command('grant <role>')
    .description('viewer, operator, approver, deployer, server-admin, auditor or admin')
    .requiredOption('--to <subject>', 'person:<name>, team:<name> or service-account:<name>')
    .option('--tags <tags>', 'only the servers having all of these tags (comma-separated)')
    .option('--deployments <ids>', 'only these deployments (comma-separated ids)')
    .option('--max-targets <n>', 'refuse a run or conversation touching more servers', (v) => Number(v))
    .action(
      run(async (role: string, opts: { to: string; tags?: string; deployments?: string; maxTargets?: number }) => {
        const tags = list(opts.tags);
        const binding = await call('POST', '/role-bindings', 201, {
          role,
          subject: await subjectOf(opts.to),
          servers: tags ? { tags } : null,
          deployments: list(opts.deployments) ?? null,
          max_targets_per_run: opts.maxTargets ?? null,
        });
        print(binding.id);
      }, fail),
    );
  roles.command('revoke <binding-id>').action(run(async (id: string) => void (await call('DELETE', `/role-bindings/${id}`, 204)), fail));
}
