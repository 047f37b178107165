import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Seeded } from './seed';

export const SCHEMATHESIS_VERSION = '4.32.5';

/** schemathesis from PyPI, pinned, in a virtual environment in the binary cache (.bosun/cache: no sudo, nothing global). */
export function ensureSchemathesis(cacheDir: string): string {
  const venv = path.join(cacheDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const bin = path.join(venv, 'bin', 'schemathesis');
  if (!existsSync(bin)) {
    process.stderr.write(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv}\n`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(path.join(venv, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS_VERSION}`], { stdio: 'inherit' });
  }
  return bin;
}

export const PHASES = ['examples', 'coverage', 'fuzzing', 'stateful'];

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
  [['revokeToken'], { 'path.id': 'tokens' }],
];

type Dictionaries = Record<'servers' | 'deployments' | 'runs' | 'conversations' | 'steps' | 'chatables' | 'plans' | 'tokens', string[]>;

/**
 * What positive_data_acceptance and negative_data_rejection take by default (schemathesis's own
 * lists), and 413: a body over the byte limit (BODY_LIMIT_BYTES, 4 KiB for a sign-in) is refused
 * whatever its schema says, as its 413 documents (a schema counts characters, not bytes).
 */
const ACCEPTED = ['2xx', '3xx', '401', '403', '404', '409', '413', '429', '5xx'];
const REJECTED = ['400', '401', '403', '404', '405', '406', '409', '413', '415', '422', '428', '429', '5xx'];

export interface FuzzConfig {
  token: string;
  maxExamples: number;
  seed?: number;
  cacheDir: string;
  ids: Seeded;
  /** Operations that document a 422 for schema-valid requests (rules no schema can state): their 422 is an acceptance. */
  refuseBeyondSchema: string[];
  /**
   * Operations whose bodies have a pattern with a Unicode class (`\p{L}`, a person's name): schemathesis
   * generates their "invalid" data from a Latin-only stand-in for the class (core/jsonschema/patterns.py),
   * so a name in another script (`6𗣂`) is sent as a violation although the document's pattern, as its
   * own validator reads it, takes it. Their negative-data check is off; test/openapi/request-schemas.test.ts
   * holds their bodies to the document, place by place.
   */
  unicodeClasses: string[];
}

export function writeConfig(file: string, options: FuzzConfig) {
  const { ids } = options;
  const dictionaries: Dictionaries = {
    servers: ids.serverIds,
    deployments: [ids.deploymentId],
    runs: [ids.runId],
    conversations: [ids.conversationId],
    steps: [ids.stepId],
    chatables: [...ids.serverIds, ids.planId],
    plans: [ids.planId],
    tokens: [ids.tokenId],
  };
  const lines = [
    `headers = { Authorization = ${toml(`Bearer ${options.token}`)} }`,
    // One worker: hypothesis describing filters from two threads at once trips a CPython 3.11 AST bug.
    'workers = 1',
    'request-timeout = 30',
    ...(options.seed === undefined ? [] : [`seed = ${options.seed}`]),
    `generation.max-examples = ${options.maxExamples}`,
    // Every check, enabled here rather than with `--checks all`: a check named on the command line
    // wins over an operation's own `enabled = false` (see unicodeClasses).
    'checks.enabled = true',
    `checks.positive_data_acceptance.expected-statuses = ${toml(ACCEPTED)}`,
    `checks.negative_data_rejection.expected-statuses = ${toml(REJECTED)}`,
    `cache.directory = ${toml(options.cacheDir)}`,
    ...Object.entries(dictionaries).map(([name, values]) => `dictionaries.${name} = { values = ${toml(values)} }`),
  ];
  for (const [operationIds, parameters] of SEEDED_PARAMETERS) {
    lines.push('', '[[operations]]', `include-operation-id = ${toml(operationIds)}`);
    const bindings = Object.entries(parameters).map(([name, dictionary]) => `${toml(name)} = { dictionary = ${toml(dictionary)}, probability = 0.8 }`);
    lines.push(`parameters = { ${bindings.join(', ')} }`);
  }
  // Ids seen in responses (GET /tokens lists the fuzzer's own) would revoke the fuzzer's token, and
  // every request after it would be a 401: revocations get the seeded token's id or generated ones.
  lines.push('', '[[operations]]', `include-operation-id = ${toml(['revokeToken'])}`, 'phases.stateful.enabled = false');
  for (const phase of ['examples', 'coverage', 'fuzzing']) lines.push(`phases.${phase}.extra-data-sources.responses = false`);
  lines.push('', '[[operations]]', `include-operation-id = ${toml(options.refuseBeyondSchema)}`);
  lines.push(`checks.positive_data_acceptance.expected-statuses = ${toml([...ACCEPTED, '422'])}`);
  if (options.unicodeClasses.length) {
    lines.push('', '[[operations]]', `include-operation-id = ${toml(options.unicodeClasses)}`, 'checks.negative_data_rejection.enabled = false');
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
