import { compose, type Role } from './compose';
import { ConfigError, loadConfig, type Config } from './config';
import { bootstrapFirstToken } from './domain/tokens/service';
import { BinaryNotFoundError } from './embedded/binaries';
import { StackBusyError, startEmbeddedStack, type EmbeddedStack } from './embedded/stack';
import { applyMemorySettings } from './heap-growth';
import { createLogger, type Logger } from './logger';

function roleFromArgs(argv: string[]): Role {
  const index = argv.indexOf('--role');
  const role = index >= 0 ? argv[index + 1] : 'all';
  if (role === 'all' || role === 'api' || role === 'worker') return role;
  throw new ConfigError(`--role must be all, api or worker (got "${role}")`);
}

/** Runs cleanups newest first, once, however many times it is asked. */
function shutdownSequence(log: Logger) {
  const cleanups: Array<() => Promise<unknown>> = [];
  let running: Promise<void> | undefined;
  return {
    add: (cleanup: () => Promise<unknown>) => cleanups.push(cleanup),
    run: () =>
      (running ??= (async () => {
        for (const cleanup of [...cleanups].reverse()) await cleanup().catch((err) => log.error({ err }, 'error during shutdown'));
      })()),
  };
}

/** A signal this soon after the first is the same one, delivered twice; a later one exits at once. */
const SAME_SIGNAL_MS = 2000;

/**
 * Started by `npm start` / `npm run api|worker` (npm runs the script with `exec`, so npm is the
 * parent): npm forwards SIGTERM and SIGINT, but if npm itself is killed outright (SIGKILL) Bosun
 * would run on, orphaned. So when the launching npm is gone, Bosun stops as for a signal. Not for
 * node started directly (a service manager, an image's init, `nohup`): there the parent may go.
 */
function followLauncher(log: Logger, stop: () => void) {
  if (!process.env.npm_lifecycle_event) return;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    log.warn({ launcher }, 'npm, which started Bosun, is gone: shutting down');
    stop();
  }, 1000);
  timer.unref();
}

async function start(config: Config, role: Role, log: Logger) {
  const startedAt = Date.now();
  const shutdown = shutdownSequence(log);
  let exitCode = 0;
  let stoppingSince: number | undefined;
  const stop = () => {
    stoppingSince = Date.now();
    void shutdown.run().then(() => process.exit(exitCode));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stoppingSince === undefined) {
        log.info({ signal }, 'shutting down');
        return stop();
      }
      // Under `npm start` a terminal's Ctrl-C arrives twice (from the terminal, and forwarded by npm):
      // only a signal some time after the first is a second one.
      if (Date.now() - stoppingSince < SAME_SIGNAL_MS) return log.debug({ signal }, 'signal repeated (npm forwards it too): already shutting down');
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(exitCode || 130);
    });
  }

  followLauncher(log, () => {
    if (stoppingSince === undefined) stop();
  });

  try {
    if (role !== 'all' && (!config.mongo.uri || !config.temporal.address || !config.secretKey)) {
      throw new ConfigError(
        `--role ${role} runs against existing services: set MONGODB_URI, TEMPORAL_ADDRESS and BOSUN_SECRET_KEY ` +
          '(the same key in every API and worker process). `npm start` embeds the services.',
      );
    }
    let stack: EmbeddedStack | undefined;
    if (role === 'all') {
      stack = await startEmbeddedStack(config, log);
      shutdown.add(() => stack!.stop());
    }
    const mongoUri = stack?.mongoUri ?? config.mongo.uri!;
    const temporalAddress = stack?.temporalAddress ?? config.temporal.address!;
    const composed = await compose(config, role, { mongoUri, temporalAddress, embeddedTemporalUiUrl: stack?.temporalUiUrl }, log, {
      onWorkerFailure: () => {
        exitCode = 1;
        process.kill(process.pid, 'SIGTERM');
      },
    });
    shutdown.add(() => composed.stop());
    const lines = composed.lines;
    // Only `npm start` mints the first token, and only once the API is listening, so it is never lost.
    const firstToken = role === 'all' ? await bootstrapFirstToken() : null;
    if (firstToken) {
      lines.push(
        '',
        '  First start: created organization "default", its person "admin" and their token (shown only this once):',
        `    ${firstToken}`,
        `  Try: curl -H "Authorization: Bearer <token>" ${composed.url}/api/v1/servers`,
        '',
      );
    }
    lines.push(`  MongoDB     ${config.mongo.uri ? '(external) MONGODB_URI' : mongoUri}`);
    lines.push(`  Temporal    ${temporalAddress}${stack?.temporalUiUrl ? `   Web UI ${stack.temporalUiUrl}` : ''}`);
    lines.push(`  data        ${config.home}`);
    process.stdout.write(`\nBosun ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s (role: ${role})\n${lines.join('\n')}\n\n`);
  } catch (error) {
    await shutdown.run();
    throw error;
  }
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  // Before the worker's threads and the stack's clients allocate: the bound holds for every heap of this process.
  applyMemorySettings(config.memory, ({ beforeBytes, afterBytes, ms }) =>
    log.info({ heapBeforeMiB: beforeBytes >> 20, heapAfterMiB: afterBytes >> 20, ms }, 'a burst of work is over: its heap collected and given back'),
  );
  try {
    await start(config, roleFromArgs(process.argv), log);
  } catch (error) {
    const known = error instanceof ConfigError || error instanceof BinaryNotFoundError || error instanceof StackBusyError;
    if (known) process.stderr.write(`\nBosun could not start: ${(error as Error).message}\n`);
    else log.fatal({ err: error }, 'Bosun could not start');
    process.exit(1);
  }
}

void main();
