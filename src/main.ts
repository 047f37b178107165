import type { Server as HttpServer } from 'node:http';
import mongoose from 'mongoose';
import { createApp } from './app';
import { connectDatabase } from './database';
import { ConfigError, loadConfig, type Config } from './config';
import { BinaryNotFoundError } from './embedded/binaries';
import { freePort } from './embedded/ports';
import { StackBusyError, startEmbeddedStack, type EmbeddedStack } from './embedded/stack';
import { createLogger, type Logger } from './logger';
import { loadMasterKey, SecretBox } from './secrets/secret-box';
import { createServerService } from './servers/service';
import { SshPool } from './ssh/pool';
import { connectTemporal, WorkflowGateway } from './temporal/client';
import { ensureSearchAttributes } from './temporal/search-attributes';
import { createWorker } from './temporal/worker';
import { bootstrapFirstToken } from './tokens/service';

type Role = 'all' | 'api' | 'worker';

function roleFromArgs(argv: string[]): Role {
  const index = argv.indexOf('--role');
  const role = index >= 0 ? argv[index + 1] : 'all';
  if (role === 'all' || role === 'api' || role === 'worker') return role;
  throw new ConfigError(`--role must be all, api or worker (got "${role}")`);
}

function listen(app: ReturnType<typeof createApp>, host: string, port: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}

async function start(config: Config, role: Role, log: Logger) {
  const startedAt = Date.now();
  const cleanups: Array<() => Promise<unknown>> = [];
  const shutdown = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => log.error({ err }, 'error during shutdown'));
  };
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      void shutdown().then(() => process.exit(0));
    });
  }

  try {
    let stack: EmbeddedStack | undefined;
    if (role === 'all') {
      stack = await startEmbeddedStack(config, log);
      cleanups.push(() => stack!.stop());
    } else if (!config.mongo.uri || !config.temporal.address) {
      throw new ConfigError(`--role ${role} runs against existing services: set MONGODB_URI and TEMPORAL_ADDRESS (npm start embeds them)`);
    }
    const mongoUri = stack?.mongoUri ?? config.mongo.uri!;
    const temporalAddress = stack?.temporalAddress ?? config.temporal.address!;

    await connectDatabase(mongoUri);
    cleanups.push(() => mongoose.disconnect());
    const { key, source: keySource } = loadMasterKey(config.secretKey, config.home);
    if (!config.secretKey && config.mongo.uri) {
      log.warn({ keyFile: keySource }, 'BOSUN_SECRET_KEY is unset: using the key file; every API and worker process needs the same key');
    }
    const secretBox = new SecretBox(key);
    const temporalClient = await connectTemporal(
      { address: temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
      stack?.temporalUiUrl ? 0 : 60_000,
    );
    cleanups.push(() => temporalClient.connection.close());

    const lines: string[] = [];
    if (role !== 'api') {
      if (!stack?.temporalUiUrl) await ensureSearchAttributes(temporalClient, config.temporal.namespace);
      const sshPool = new SshPool({ ...config.ssh, log });
      const { worker, connection } = await createWorker(
        { address: temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, cacheDir: config.cacheDir },
        { secretBox, sshPool, log },
      );
      const running = worker.run();
      cleanups.push(async () => {
        worker.shutdown();
        await running;
        await sshPool.close();
        await connection.close();
      });
      running.catch((err) => {
        log.fatal({ err }, 'worker stopped');
        process.kill(process.pid, 'SIGTERM');
      });
      lines.push(`  worker      task queue "${config.temporal.taskQueue}"`);
    }

    if (role !== 'worker') {
      const firstToken = await bootstrapFirstToken();
      const workflows = new WorkflowGateway(temporalClient, config.temporal.taskQueue, config.servers);
      const app = createApp({ log, http: config.http, servers: createServerService({ secretBox, workflows }) });
      const port = config.http.portExplicit ? config.http.port : await freePort(config.http.port, config.http.host);
      const server = await listen(app, config.http.host, port);
      cleanups.push(() => new Promise((resolve) => server.close(resolve)));
      lines.unshift(`  API         http://${config.http.host}:${port}/api/v1`);
      if (firstToken) {
        lines.push(
          '',
          '  First start: created organization "default" and its admin token (shown only this once):',
          `    ${firstToken}`,
          '  Try: curl -H "Authorization: Bearer <token>" http://' + `${config.http.host}:${port}/api/v1/servers`,
        );
      }
    }
    lines.push(`  MongoDB     ${stack && !config.mongo.uri ? mongoUri : '(external) MONGODB_URI'}`);
    lines.push(`  Temporal    ${temporalAddress}${stack?.temporalUiUrl ? `   Web UI ${stack.temporalUiUrl}` : ''}`);
    lines.push(`  data        ${config.home}`);
    process.stdout.write(`\nBosun ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s (role: ${role})\n${lines.join('\n')}\n\n`);
  } catch (error) {
    await shutdown();
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
