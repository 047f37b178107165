import type { SecretBox } from '../secrets/secret-box';
import type { SshTarget } from '../ssh/connect';
import { ServerModel } from './model';

export interface ServerCredentials {
  private_key?: string;
  passphrase?: string;
  password?: string;
}

const associatedData = (serverId: string) => `server:${serverId}`;

export const sealCredentials = (box: SecretBox, serverId: string, credentials: ServerCredentials) =>
  box.encrypt(JSON.stringify(credentials), associatedData(serverId));

/** The decrypted connection details of a server, for activities only; null when the server is gone. */
export async function loadSshTarget(serverId: string, box: SecretBox): Promise<SshTarget | null> {
  const server = await ServerModel.findById(serverId).select('+credentials').lean();
  if (!server) return null;
  const credentials = JSON.parse(box.decrypt(server.credentials, associatedData(serverId))) as ServerCredentials;
  return {
    key: serverId,
    host: server.host,
    port: server.port,
    username: server.username,
    privateKey: credentials.private_key,
    passphrase: credentials.passphrase,
    password: credentials.password,
    hostKeyFingerprint: server.host_key_fingerprint ?? null,
  };
}
