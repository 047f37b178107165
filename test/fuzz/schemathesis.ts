import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Seeded } from './seed';

export const SCHEMATHESIS_VERSION = '4.32.5';

/** schemathesis from PyPI, pinned, in a virtual environment cached under .bosun/ (no sudo, nothing global). */
export function ensureSchemathesis(bosunDir: string): string {
  const venv = path.join(bosunDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const bin = path.join(venv, 'bin', 'schemathesis');
  if (!existsSync(bin)) {
    process.stderr.write(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv}\n`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(path.join(venv, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS_VERSION}`], { stdio: 'inherit' });
  }
  return bin;
}

export const CHECKS = ['not_a_server_error', 'response_schema_conformance', 'status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'ignored_auth'];

const toml = (value: unknown) => JSON.stringify(value);

/** Seeded ids, offered for most values of these parameters (generated ones for the rest); deletions always get generated ids. */
const SEEDED_PARAMETERS: Array<[string[], Record<string, keyof Dictionaries>]> = [
  [['getServer', 'verifyServer'], { 'path.id': 'servers' }],
  [['createDeployment', 'updateDeployment'], { 'body.server_id': 'servers' }],
  [['getDeployment', 'updateDeployment', 'triggerDeployment', 'listRuns'], { 'path.id': 'deployments' }],
  [['getRun', 'cancelRun'], { 'path.id': 'deployments', 'path.runId': 'runs' }],
  [['getConversation', 'followUpConversation', 'cancelConversation'], { 'path.id': 'conversations' }],
  [['approveStep', 'rejectStep'], { 'path.id': 'conversations', 'path.stepId': 'steps' }],
  [['startConversation'], { 'body.chatable_id': 'chatables' }],
  [['listConversations'], { 'query.chatable_id': 'chatables' }],
  [['createMigrationPlan'], { 'body.source_server_id': 'servers', 'body.target_server_id': 'servers' }],
  [['getMigrationPlan'], { 'path.id': 'plans' }],
];

type Dictionaries = Record<'servers' | 'deployments' | 'runs' | 'conversations' | 'steps' | 'chatables' | 'plans', string[]>;

export function writeConfig(file: string, options: { token: string; maxExamples: number; seed?: number; cacheDir: string; ids: Seeded }) {
  const { ids } = options;
  const dictionaries: Dictionaries = {
    servers: ids.serverIds,
    deployments: [ids.deploymentId],
    runs: [ids.runId],
    conversations: [ids.conversationId],
    steps: [ids.stepId],
    chatables: [...ids.serverIds, ids.planId],
    plans: [ids.planId],
  };
  const lines = [
    `headers = { Authorization = ${toml(`Bearer ${options.token}`)} }`,
    // One worker: hypothesis describing filters from two threads at once trips a CPython 3.11 AST bug.
    'workers = 1',
    'request-timeout = 30',
    ...(options.seed === undefined ? [] : [`seed = ${options.seed}`]),
    `generation.max-examples = ${options.maxExamples}`,
    `cache.directory = ${toml(options.cacheDir)}`,
    ...Object.entries(dictionaries).map(([name, values]) => `dictionaries.${name} = { values = ${toml(values)} }`),
  ];
  for (const [operationIds, parameters] of SEEDED_PARAMETERS) {
    lines.push('', '[[operations]]', `include-operation-id = ${toml(operationIds)}`);
    const bindings = Object.entries(parameters).map(([name, dictionary]) => `${toml(name)} = { dictionary = ${toml(dictionary)}, probability = 0.8 }`);
    lines.push(`parameters = { ${bindings.join(', ')} }`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** Runs schemathesis to the end, its output passed through; resolves with its exit code. */
export function runSchemathesis(bin: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: 'inherit', env: { ...process.env, SCHEMATHESIS_TELEMETRY: 'false' } });
    child.on('exit', (code) => resolve(code));
  });
}

/** Requests made and answers by status, from the HAR file schemathesis writes. */
export function harFigures(file: string) {
  const har = JSON.parse(readFileSync(file, 'utf8')) as { log: { entries: Array<{ request: { method: string; url: string }; response: { status: number } }> } };
  const byStatus = new Map<number, number>();
  const serverErrors: string[] = [];
  for (const { request, response } of har.log.entries) {
    byStatus.set(response.status, (byStatus.get(response.status) ?? 0) + 1);
    if (response.status >= 500) serverErrors.push(`${response.status} ${request.method} ${request.url}`);
  }
  return { requests: har.log.entries.length, byStatus: [...byStatus].sort(([a], [b]) => a - b), serverErrors };
}
