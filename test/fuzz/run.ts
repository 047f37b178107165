/**
 * npm run fuzz — property-based fuzzing of the whole HTTP API from its own OpenAPI document with
 * schemathesis (every phase, every check), against a Bosun API started for the run (its own mongod
 * and Temporal dev server in a temporary directory, no worker: nothing the fuzzer sends runs on any
 * server). Prints the requests made by status and the 5xx answers; exits non-zero on any check
 * failure (a 5xx, an undocumented status, a body, header or content type the document does not
 * describe, a schema-valid request refused or an invalid one accepted), on a 5xx to a malformed
 * percent-encoding, or when the fuzzer's own token stopped working during the run.
 *
 * FUZZ_MAX_EXAMPLES (default 100) bounds the cases per operation and phase; FUZZ_SEED replays a run.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { z } from 'zod';
import { connectDatabase } from '../../src/domain/database-connection';
import { resolveBinary } from '../../src/embedded/binaries';
import { embeddedMongoUri, startMongod } from '../../src/embedded/mongod';
import { freePort } from '../../src/embedded/ports';
import { startTemporalDevServer } from '../../src/embedded/temporal-dev';
import { createLogger } from '../../src/logger';
import { createToken } from '../../src/domain/tokens/service';
import { bosunOperations } from '../../src/api/bosun-api';
import { BosunProcess, REPO } from '../support/processes';
import { ensureSchemathesis, PHASES, harFigures, runSchemathesis, SCHEMATHESIS_VERSION, writeConfig } from './schemathesis';
import { seed } from './seed';

const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 100);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

async function main() {
  const bosunDir = path.join(REPO, '.bosun');
  const cacheDir = path.resolve(process.env.BOSUN_CACHE_DIR ?? path.join(bosunDir, 'cache'));
  const schemathesis = ensureSchemathesis(cacheDir);
  const work = mkdtempSync(path.join(os.tmpdir(), 'bosun-fuzz-'));
  const log = createLogger('warn', 'fuzz');
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const [mongodBinary, temporalBinary] = await Promise.all([
      resolveBinary('mongod', { explicitPath: process.env.MONGOD_PATH, cacheDir, log }),
      resolveBinary('temporal', { explicitPath: process.env.TEMPORAL_CLI_PATH, cacheDir, log }),
    ]);
    const [mongo, temporal] = await Promise.all([
      freePort(0).then((port) => startMongod({ binary: mongodBinary, dataDir: path.join(work, 'mongo'), port, logDir: work })),
      Promise.all([freePort(0), freePort(0)]).then(([port, uiPort]) =>
        startTemporalDevServer({ binary: temporalBinary, dbFile: path.join(work, 'temporal.db'), port, uiPort, namespace: 'default', logDir: work }),
      ),
    ]);
    stops.push(() => mongo.process.stop(), () => temporal.process.stop());
    const mongoUri = embeddedMongoUri(mongo.port, 'bosun');

    const bosun = new BosunProcess(
      {
        ...process.env,
        BOSUN_HOME: path.join(work, 'home'),
        BOSUN_CACHE_DIR: cacheDir,
        BOSUN_SECRET_KEY: randomBytes(32).toString('base64'),
        MONGODB_URI: mongoUri,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_TASK_QUEUE: 'bosun-fuzz',
        PORT: String(await freePort(0)),
        // The fuzzer is one token sending thousands of requests a minute.
        RATE_LIMIT_PER_MINUTE: '10000000',
        LOG_LEVEL: 'warn',
      },
      ['--role', 'api'],
    );
    stops.unshift(() => bosun.stop());
    const api = await bosun.ready();
    const origin = new URL(api).origin;

    await connectDatabase(mongoUri);
    stops.unshift(() => mongoose.disconnect());
    const { token } = await createToken({ org: 'fuzz', name: 'fuzz', scopes: ['admin'] });
    const ids = await seed(api, token);

    const config = path.join(work, 'schemathesis.toml');
    const refuseBeyondSchema = bosunOperations.filter((op) => op.beyondSchema).map((op) => op.operationId);
    const unicodeClasses = bosunOperations.filter((op) => op.body && JSON.stringify(z.toJSONSchema(op.body.schema, { io: 'input', unrepresentable: 'any' })).includes('\\\\p{')).map((op) => op.operationId);
    writeConfig(config, { token, maxExamples: MAX_EXAMPLES, seed: SEED, cacheDir: path.join(bosunDir, 'schemathesis-cache'), ids, refuseBeyondSchema, unicodeClasses });
    const reportDir = path.join(work, 'report');
    const started = Date.now();
    const har = path.join(reportDir, 'requests.har');
    const code = await runSchemathesis(schemathesis, [
      '--config-file', config, 'run', `${origin}/api/v1/openapi.json`, '--phases', PHASES.join(','),
      '--report', 'har,junit', '--report-dir', reportDir, '--report-har-path', har,
    ]);
    const seconds = (Date.now() - started) / 1000;
    // A run whose token stopped working tested nothing but 401s.
    const tokenStillWorks = (await fetch(`${api}/tokens`, { headers: { Authorization: `Bearer ${token}` } })).status === 200;
    const encodings = await malformedEncodings(origin, token);

    const figures = harFigures(har);
    const kept = path.join(bosunDir, 'fuzz-report');
    rmSync(kept, { recursive: true, force: true });
    mkdirSync(kept, { recursive: true });
    cpSync(reportDir, kept, { recursive: true });
    const serverErrorLogs = bosun.stdout.split('\n').filter((line) => line.includes('"request failed"'));

    process.stdout.write(
      [
        '',
        `schemathesis ${SCHEMATHESIS_VERSION}, ${MAX_EXAMPLES} examples per operation and phase, phases: ${PHASES.join(', ')}, checks: all`,
        `requests: ${figures.requests} in ${seconds.toFixed(0)} s`,
        `by status: ${figures.byStatus.map(([status, count]) => `${status}×${count}`).join(' ')}`,
        `5xx: ${figures.serverErrors.length}`,
        ...figures.serverErrors.slice(0, 20).map((e) => `  ${e}`),
        ...serverErrorLogs.slice(0, 5).map((line) => `  log: ${line.slice(0, 2000)}`),
        `malformed percent-encodings in path parameters: ${encodings.requests} requests, by status: ${[...encodings.byStatus].map(([status, count]) => `${status}×${count}`).join(' ')}`,
        ...encodings.serverErrors.slice(0, 20).map((e) => `  ${e}`),
        `the fuzzer's token still works: ${tokenStillWorks ? 'yes' : 'NO (revoked during the run: most answers were 401s)'}`,
        `schemathesis exit code: ${code} (reports: ${kept})`,
        '',
      ].join('\n'),
    );
    process.exitCode = code === 0 && tokenStillWorks && figures.serverErrors.length === 0 && encodings.serverErrors.length === 0 ? 0 : 1;
  } finally {
    for (const stop of stops) await stop().catch((err) => log.warn({ err }, 'could not stop'));
    rmSync(work, { recursive: true, force: true });
  }
}

/** Bad escapes schemathesis does not send: each must answer 400 (or 404/405), never 5xx. */
const MALFORMED = ['%', '%z', '%zz', '%4', '%G0', '%%30', '%E0%A4%A', '%C0%AF', '%ff', '%ED%A0%80', 'a%2', '%u0041'];

/** Every operation of the OpenAPI document with a path parameter, asked with each malformed escape in each parameter. */
async function malformedEncodings(origin: string, token: string) {
  const document = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const byStatus = new Map<number, number>();
  const serverErrors: string[] = [];
  let requests = 0;
  for (const [template, operations] of Object.entries(document.paths)) {
    if (!template.includes('{')) continue;
    for (const method of Object.keys(operations).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
      for (const bad of MALFORMED) {
        const url = `${origin}${template.replace(/\{[^}]+\}/g, bad)}`;
        const res = await fetch(url, {
          method: method.toUpperCase(),
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: method === 'get' || method === 'delete' ? undefined : '{}',
        });
        await res.arrayBuffer();
        requests += 1;
        byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
        if (res.status >= 500) serverErrors.push(`${method.toUpperCase()} ${url} -> ${res.status}`);
      }
    }
  }
  return { requests, byStatus, serverErrors };
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(2);
});
