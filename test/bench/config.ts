/**
 * npm run bench:config — config as code at the size issue 38 names: 500 documents in 20 files (360
 * deployments of 3–8 steps with parameters, targets by tags or by server title; 40 pipelines of their
 * deployments, 60 schedules, 14 freezes, 4 teams, 2 service accounts, 20 role bindings naming them).
 * Through HTTP, each measured BENCH_ROUNDS times (median, min–max), into a new organization each round:
 *
 *   plan of 500 creations, `bosun config plan` (the CLI, once per round), apply of 500 creations,
 *   plan with nothing to change, plan with 50 changed, apply of those 50, export of 500;
 *
 * beside baselines of the same run (this machine is shared and noisy): the YAML parsed alone, and the
 * same 360 deployments created one by one through POST /api/v1/deployments.
 * Goals: plan of 500 ≤ 2 s, apply of 500 ≤ 10 s (the exit code says whether they held).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Types } from 'mongoose';
import { parseConfigFiles } from '../../src/domain/config/files';
import type { ConfigFile } from '../../src/domain/config/types';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { ServerModel } from '../../src/domain/servers/model';
import { bearer, type Bosun } from '../support/bosun';
import { REPO } from '../support/processes';
import { runBench } from './harness';

type Json = any;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DEPLOYMENTS = 360;
const SERVERS = ['web-1', 'web-2', 'web-3', 'db-1', 'db-2', 'cache-1'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const bin = path.join(REPO, 'src/cli/bin.js');

/** A YAML scalar, quoted. */
const q = (text: string) => JSON.stringify(text);

function deployment(i: number, revision: number): { name: string; yaml: string; body: Json } {
  const name = `svc-${String(i).padStart(3, '0')}-release`;
  const steps = Array.from({ length: 3 + (i % 6) }, (_, s) => ({ name: `step-${s}`, command: `/opt/release/${name}/step-${s}.sh "$BOSUN_PARAM_VERSION" --env "$BOSUN_PARAM_ENV"${revision && s === 0 ? ` --rev ${revision}` : ''}`, ...(s % 3 === 2 ? { timeout_seconds: 300 } : {}) }));
  const byTitle = i % 3 === 0;
  const targets = byTitle ? { servers: [SERVERS[i % SERVERS.length]!, SERVERS[(i + 1) % SERVERS.length]!] } : { tags: [i % 2 ? 'web' : 'db', 'prod'] };
  const lines = [
    'kind: Deployment',
    `name: ${name}`,
    'spec:',
    byTitle ? `  targets: { servers: [${targets.servers!.join(', ')}] }` : `  targets: { tags: [${targets.tags!.join(', ')}] }`,
    '  strategy: { batch_size: 2, max_failures: 0 }',
    '  parameters:',
    '    - { name: version, required: true, pattern: "^[0-9.]+$" }',
    '    - { name: env, default: prod }',
    '  steps:',
    ...steps.flatMap((s) => [`    - name: ${s.name}`, `      command: ${q(s.command)}`, ...(s.timeout_seconds ? [`      timeout_seconds: ${s.timeout_seconds}`] : [])]),
  ];
  const parameters = [{ name: 'version', required: true, pattern: '^[0-9.]+$' }, { name: 'env', default: 'prod' }];
  return { name, yaml: lines.join('\n'), body: { name, targets, strategy: { batch_size: 2, max_failures: 0 }, parameters, steps } };
}

/** The 500 documents in 20 files; `revision` changes the first step of the first `revision ? 50 : 0` deployments. */
function configFiles(revision = 0, changed = 50): { files: ConfigFile[]; deployments: ReturnType<typeof deployment>[] } {
  const deployments = Array.from({ length: DEPLOYMENTS }, (_, i) => deployment(i, revision && i < changed ? revision : 0));
  const files: ConfigFile[] = [];
  for (let f = 0; f < 15; f += 1) files.push({ path: `deploy/services-${String(f).padStart(2, '0')}.yaml`, content: deployments.slice(f * 24, f * 24 + 24).map((d) => d.yaml).join('\n---\n') + '\n' });
  const doc = (kind: string, name: string, spec: string[]) => [`kind: ${kind}`, `name: ${name}`, 'spec:', ...spec.map((l) => `  ${l}`)].join('\n');
  const pipelines = Array.from({ length: 40 }, (_, p) => {
    const stages = [0, 1, 2].map((s) => deployments[(p * 9 + s * 3) % DEPLOYMENTS]!.name);
    return doc('Pipeline', `train-${p}`, [
      `description: release train ${p}`,
      'parameters: [{ name: version, required: true }]',
      'stages:',
      ...stages.flatMap((d, s) => [`  - name: s${s}`, `    deployment: ${d}`, ...(s ? [`    needs: [s${s - 1}]`] : []), '    parameters: { version: "${{ pipeline.parameters.version }}" }']),
    ]);
  });
  const schedules = Array.from({ length: 60 }, (_, s) =>
    doc('Schedule', `nightly-${s}`, [`deployment: ${deployments[s * 6]!.name}`, `cron: "${s % 60} 2 * * 1-5"`, 'time_zone: Europe/Berlin', 'parameters: { version: "1.0.0" }', `run_as: ${s % 2 ? 'release-bot' : 'ci'}`]),
  );
  const freezes = Array.from({ length: 14 }, (_, z) => doc('Freeze', `freeze-${z}`, [`cron: "0 ${z} * * 5"`, 'duration: 2h', 'time_zone: UTC', `tags: [${z % 2 ? 'web' : 'db'}]`, `note: weekly window ${z}`]));
  const access = [
    doc('ServiceAccount', 'ci', ['description: the CI pipeline', 'agent: false']),
    doc('ServiceAccount', 'release-bot', ['description: runs the schedules', 'agent: false']),
    ...['web', 'db', 'sre', 'data'].map((t, n) => doc('Team', t, [`members: [person-${n % 3}@example.com, person-${(n + 1) % 3}@example.com]`, 'oidc_groups: []'])),
    ...Array.from({ length: 20 }, (_, b) =>
      doc('RoleBinding', `binding-${b}`, [
        `role: ${b % 2 ? 'deployer' : 'operator'}`,
        `subject: ${b % 5 === 4 ? 'service-account:ci' : `team:${['web', 'db', 'sre', 'data'][b % 4]}`}`,
        `deployments: [${deployments[b * 7]!.name}, ${deployments[b * 7 + 1]!.name}]`,
      ]),
    ),
  ];
  files.push({ path: 'pipelines/trains.yaml', content: pipelines.join('\n---\n') + '\n' });
  files.push({ path: 'schedules/nightly.yaml', content: schedules.join('\n---\n') + '\n' });
  files.push({ path: 'freezes/weekly.yaml', content: freezes.join('\n---\n') + '\n' });
  files.push({ path: 'access/teams.yaml', content: access.slice(0, 6).join('\n---\n') + '\n' });
  files.push({ path: 'access/bindings.yaml', content: access.slice(6).join('\n---\n') + '\n' });
  return { files, deployments };
}

/** An organization with six servers (inserted directly: verification is not measured) and three people. */
async function organization(bosun: Bosun, slug: string): Promise<{ token: string; servers: Map<string, string> }> {
  const token = await bosun.token(slug);
  const organization_id = (await OrganizationModel.findOne({ slug }).orFail())._id;
  const servers = new Map<string, string>();
  await ServerModel.insertMany(
    SERVERS.map((title) => {
      const _id = new Types.ObjectId();
      servers.set(title, _id.toString());
      return { _id, organization_id, title, host: `10.0.0.${servers.size}`, port: 22, username: 'deploy', tags: [title.startsWith('web') ? 'web' : 'db', 'prod'], auth_method: 'password', credentials: 'sealed-elsewhere' };
    }),
  );
  for (let n = 0; n < 3; n += 1) await expectOk(bosun.api.post('/api/v1/people').set(bearer(token)).send({ name: `Person ${n}`, email: `person-${n}@example.com` }), 201, 'add a person');
  return { token, servers };
}

async function expectOk(request: PromiseLike<{ status: number; body: Json }>, status: number, what: string): Promise<Json> {
  const res = await request;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 2000)}`);
  return res.body.data;
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const result = await work();
  return [performance.now() - t0, result];
}

/** `bosun config plan <dir>` as CI runs it; wall time in ms (it must exit 0). */
function cliPlan(dir: string, env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'config', 'plan', dir, '--source', 'bench-repo'], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`bosun config plan exited ${code}: ${stderr}`)))));
}

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const initial = configFiles();
  const changed = configFiles(1);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-config-'));
  for (const file of initial.files) {
    mkdirSync(path.join(dir, path.dirname(file.path)), { recursive: true });
    writeFileSync(path.join(dir, file.path), file.content);
  }
  const documents = parseConfigFiles(initial.files);
  if (documents.documents.length !== 500 || documents.problems.length) throw new Error(`the bench's files: ${documents.documents.length} documents, ${JSON.stringify(documents.problems.slice(0, 3))}`);
  const request = (files: ConfigFile[]) => ({ source: 'bench-repo', revision: null, files, prune: false });

  const samples: Record<string, number[]> = { parse: [], oneByOne: [], planNew: [], cli: [], apply: [], planSame: [], planChanged: [], applyChanged: [], export: [] };
  const push = (key: string, ms: number) => samples[key]!.push(ms);
  for (let round = 0; round <= ROUNDS; round += 1) {
    const warmUp = round === 0;
    const record = (key: string, ms: number) => !warmUp && push(key, ms);
    record('parse', (await timed(async () => parseConfigFiles(initial.files)))[0]);

    const baseline = await organization(bosun, `bench-config-base-${round}`);
    const [oneByOne] = await timed(async () => {
      for (const d of initial.deployments) {
        const { targets, ...body } = d.body;
        const apiTargets = targets.servers ? { server_ids: targets.servers.map((t: string) => baseline.servers.get(t)) } : targets;
        await expectOk(bosun.api.post('/api/v1/deployments').set(bearer(baseline.token)).send({ ...body, targets: apiTargets }), 201, 'create a deployment');
      }
    });
    record('oneByOne', oneByOne);

    const { token } = await organization(bosun, `bench-config-${round}`);
    const post = (route: string, body: Json) => expectOk(bosun.api.post(`/api/v1/config/${route}`).set(bearer(token)).send(body), 200, route);
    const [planNew, plan] = await timed(() => post('plan', request(initial.files)));
    if (plan.create.length !== 500 || plan.errors.length) throw new Error(`plan of 500 creations: ${plan.create.length} to create, errors ${JSON.stringify(plan.errors.slice(0, 5))}`);
    record('planNew', planNew);
    record('cli', await cliPlan(dir, { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token }));
    const [apply, applied] = await timed(() => post('apply', { ...request(initial.files), plan_hash: plan.plan_hash }));
    if (applied.created !== 500) throw new Error(`apply of 500: ${JSON.stringify(applied).slice(0, 500)}`);
    record('apply', apply);
    const [planSame, same] = await timed(() => post('plan', request(initial.files)));
    if (same.unchanged.length !== 500) throw new Error(`plan with nothing to change: ${same.unchanged.length} unchanged, ${same.update.length} to change`);
    record('planSame', planSame);
    const [planChanged, fifty] = await timed(() => post('plan', request(changed.files)));
    if (fifty.update.length !== 50) throw new Error(`plan with 50 changed: ${fifty.update.length} to change`);
    record('planChanged', planChanged);
    const [applyChanged, appliedFifty] = await timed(() => post('apply', request(changed.files)));
    if (appliedFifty.updated !== 50) throw new Error(`apply of 50 changes: ${appliedFifty.updated} changed`);
    record('applyChanged', applyChanged);
    const [exported, files] = await timed(() => expectOk(bosun.api.get('/api/v1/config/export').set(bearer(token)), 200, 'export'));
    const exportedDocuments = parseConfigFiles(files.files).documents.length;
    if (exportedDocuments < 500) throw new Error(`export: ${exportedDocuments} documents`);
    record('export', exported);
  }
  rmSync(dir, { recursive: true, force: true });

  const base = median(samples.oneByOne!);
  const line = (label: string, key: string, goal = '') => {
    const xs = samples[key]!;
    const range = `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    return `  ${label.padEnd(44)} ${median(xs).toFixed(0).padStart(6)} ms  (${range.padStart(11)})  ×${(median(xs) / base).toFixed(2)} one-by-one${goal}`;
  };
  const goals = { plan: median(samples.planNew!) <= 2000, apply: median(samples.apply!) <= 10_000 };
  console.log(
    [
      '',
      `bench:config — 500 documents in 20 files, ${ROUNDS} rounds (median, min–max); node ${process.version}, ${os.cpus().length} cores`,
      line(`baseline: ${DEPLOYMENTS} deployments POSTed one by one`, 'oneByOne'),
      line('baseline: the YAML parsed alone', 'parse'),
      line('plan of 500 creations (HTTP)', 'planNew', `   goal ≤ 2000 ms: ${goals.plan ? 'held' : 'MISSED'}`),
      line('bosun config plan (CLI, 500 creations)', 'cli'),
      line('apply of 500 creations', 'apply', `   goal ≤ 10000 ms: ${goals.apply ? 'held' : 'MISSED'}`),
      line('plan with nothing to change', 'planSame'),
      line('plan with 50 changed', 'planChanged'),
      line('apply of 50 changes', 'applyChanged'),
      line('export of 500', 'export'),
      '',
    ].join('\n'),
  );
  if (!goals.plan || !goals.apply) throw new Error('a goal of issue 38 was missed (see above)');
});
