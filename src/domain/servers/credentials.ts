import type { SecretBox } from '../secrets/secret-box';
import type { SshTarget } from '../ssh/connect';
import { ServerModel, type Server, type ServerStatus } from './model';
import { RouteError, routeOf } from './route';

/** A server document as stored, its sealed credentials included. */
export type StoredServer = Pick<Server, '_id' | 'credentials' | 'status' | 'host' | 'port' | 'username' | 'host_key_fingerprint' | 'organization_id'> & Partial<Pick<Server, 'via'>>;

export interface ServerCredentials {
  private_key?: string;
  passphrase?: string;
  password?: string;
}

/** The stored credentials do not decrypt: this process's master key differs from the one that sealed them. */
export class CredentialsUnreadableError extends Error {
  override name = 'CredentialsUnreadableError';
}

const associatedData = (serverId: string) => `server:${serverId}`;

export const sealCredentials = (box: SecretBox, serverId: string, credentials: ServerCredentials) =>
  box.encrypt(JSON.stringify(credentials), associatedData(serverId));

/** A server's decrypted connection details (its jump hosts' too) and current status, for activities only; null when the server is gone. */
export async function loadSshTarget(serverId: string, box: SecretBox): Promise<LoadedTarget | null> {
  const server = await ServerModel.findById(serverId).select('+credentials').lean();
  return server && routedTargetOf(server, box);
}

/** A jump host that cannot be used: not verified (no pinned host key) or gone. No retry fixes it. */
export class JumpHostUnusableError extends Error {
  override name = 'JumpHostUnusableError';
}

/**
 * `sshTargetOf`, with the chain of jump hosts the server is reached through (each hop with its own
 * credentials and pinned host key: a hop without one is refused, never trusted on first use).
 */
export async function routedTargetOf(server: StoredServer, box: SecretBox): Promise<LoadedTarget> {
  const own = sshTargetOf(server, box);
  if (!server.via?.length) return own;
  // The hops read once, with their credentials, as the route follows them.
  const load = async (ids: string[]) => {
    const hops = await ServerModel.find({ _id: { $in: ids }, organization_id: server.organization_id }).select('+credentials').lean();
    return new Map(hops.map((hop) => [String(hop._id), hop]));
  };
  let route;
  try {
    route = await routeOf({ id: String(server._id), via: server.via.map(String) }, load);
  } catch (error) {
    if (error instanceof RouteError) throw new JumpHostUnusableError(error.message);
    throw error;
  }
  let via: SshTarget | undefined;
  for (const hop of route) {
    if (!hop.host_key_fingerprint) throw new JumpHostUnusableError(`Jump host "${hop.title}" (${hop.username}@${hop.host}:${hop.port}) has no verified host key: verify it first`);
    via = { ...sshTargetOf(hop, box).target, ...(via ? { via } : {}) };
  }
  return { ...own, target: { ...own.target, via } };
}

/** The connection details of a server document read with its sealed credentials. */
/** A server's connection details, its status and its organization (whose audit trail its commands go in). */
export interface LoadedTarget {
  target: SshTarget;
  status: ServerStatus;
  organizationId: string;
}

export function sshTargetOf(server: StoredServer, box: SecretBox): LoadedTarget {
  const serverId = server._id.toString();
  let credentials: ServerCredentials;
  try {
    credentials = JSON.parse(box.decrypt(server.credentials, associatedData(serverId))) as ServerCredentials;
  } catch {
    throw new CredentialsUnreadableError(
      `The stored credentials of server ${serverId} cannot be decrypted: this worker's BOSUN_SECRET_KEY differs from the API's`,
    );
  }
  return {
    status: server.status,
    organizationId: String(server.organization_id),
    target: {
      key: serverId,
      host: server.host,
      port: server.port,
      username: server.username,
      privateKey: credentials.private_key,
      passphrase: credentials.passphrase,
      password: credentials.password,
      hostKeyFingerprint: server.host_key_fingerprint ?? null,
    },
  };
}
