import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/** How to reach a Temporal that is not the local dev server: TLS (with a client certificate for mTLS), or an API key. */
export interface TemporalSecurity {
  tls: boolean;
  /** PEM files: the client certificate and key (mTLS, as Temporal Cloud's certificate auth), and a CA to trust. */
  clientCertPath?: string;
  clientKeyPath?: string;
  serverRootCaPath?: string;
  serverName?: string;
  /** Temporal Cloud API key; implies TLS. */
  apiKey?: string;
}

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
