import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { portForProcess } from './ports';

export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface OidcProviderSettings {
  clients: OidcClient[];
  /** Claims by login name (the `sub`): the dev interactions accept any name and any password. */
  accounts: Record<string, { name?: string; email?: string; groups?: string[] }>;
  /** How far off this machine's clock the provider's runs (behind when negative). */
  clockSkewSeconds?: number;
  /** How long the ID tokens it issues are valid. */
  idTokenTtlSeconds?: number;
  port?: number;
}

export interface OidcProvider {
  issuer: string;
  port: number;
  stop(): Promise<void>;
}

const SCRIPT = path.join(__dirname, 'oidc-provider-process.mjs');

/** test/support/oidc-provider.mjs as a child process, resolved once it listens. */
export async function startOidcProvider(settings: OidcProviderSettings): Promise<OidcProvider> {
  const port = settings.port ?? (await portForProcess());
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, NODE_ENV: 'test', OIDC_TEST_SETTINGS: JSON.stringify({ ...settings, port }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { issuer: string }).issuer);
    });
    child.once('exit', (code) => reject(new Error(`The OpenID provider exited (${code}) before listening: ${stderr}`)));
  });
  return {
    issuer,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
