import { readFileSync } from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { TemporalSecurity } from '../../config';

/** The options both the client's and the worker's connections take; none for a plain local server. */
export function connectionOptions(security: TemporalSecurity | undefined): { tls?: TLSConfig; apiKey?: string } {
  if (!security || (!security.tls && !security.apiKey)) return {};
  const read = (file: string | undefined) => (file ? readFileSync(file) : undefined);
  const tls: TLSConfig = {
    ...(security.serverName ? { serverNameOverride: security.serverName } : {}),
    ...(security.serverRootCaPath ? { serverRootCACertificate: read(security.serverRootCaPath) } : {}),
    ...(security.clientCertPath && security.clientKeyPath ? { clientCertPair: { crt: read(security.clientCertPath)!, key: read(security.clientKeyPath)! } } : {}),
  };
  return { tls, ...(security.apiKey ? { apiKey: security.apiKey } : {}) };
}

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  security?: TemporalSecurity;
}

/** Connects, waiting up to waitMs for a Temporal that is still starting (containers start in any order). */
export async function connectTemporal(settings: TemporalSettings, waitMs = 0): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address: settings.address, ...connectionOptions(settings.security) });
      return new Client({ connection, namespace: settings.namespace });
    } catch (error) {
      if (Date.now() >= deadline) {
        throw Object.assign(new Error(`Temporal at ${settings.address} is unreachable: ${(error as Error).message}`), { cause: error });
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
