import type { SecretBox } from '../secrets/secret-box';
import type { SshTarget } from '../ssh/connect';
import { ServerModel, type Server, type ServerStatus } from './model';

/** A server document as stored, its sealed credentials included. */
export type StoredServer = Pick<Server, '_id' | 'credentials' | 'status' | 'host' | 'port' | 'username' | 'host_key_fingerprint'>;

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

/** A server's decrypted connection details and current status, for activities only; null when the server is gone. */
export async function loadSshTarget(serverId: string, box: SecretBox): Promise<{ target: SshTarget; status: ServerStatus } | null> {
  const server = await ServerModel.findById(serverId).select('+credentials').lean();
  return server && sshTargetOf(server, box);
}

/** The connection details of a server document read with its sealed credentials. */
export function sshTargetOf(server: StoredServer, box: SecretBox): { target: SshTarget; status: ServerStatus } {
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
