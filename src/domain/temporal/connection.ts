import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
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
