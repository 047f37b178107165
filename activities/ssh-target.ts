import type { SecretBox } from '../src/domain/secrets/secret-box';
import { CredentialsUnreadableError, JumpHostUnusableError, loadSshTarget, routedTargetOf, type StoredServer } from '../src/domain/servers/credentials';
import type { SshTarget } from '../src/domain/ssh/connect';
import { failure } from '../src/domain/contracts/failure-types';

/** A server's connection details for an activity; credentials this worker cannot decrypt are a failure no retry fixes. */
export async function loadTargetOrFail(serverId: string, box: SecretBox) {
  return unsealedOrFail(() => loadSshTarget(serverId, box));
}

async function unsealedOrFail<T>(open: () => T | Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof CredentialsUnreadableError) throw failure('CredentialsUnreadable', error.message);
    if (error instanceof JumpHostUnusableError) throw failure('JumpHostUnusable', error.message);
    throw error;
  }
}

/** A server a step may run on: it exists and its host key is pinned; anything else no retry fixes. */
export async function loadVerifiedTarget(serverId: string, box: SecretBox): Promise<SshTarget> {
  return verified(await loadTargetOrFail(serverId, box));
}

/** `loadVerifiedTarget`, with the organization the server belongs to. */
export async function loadVerifiedServer(serverId: string, box: SecretBox): Promise<{ target: SshTarget; organizationId: string }> {
  const loaded = await loadTargetOrFail(serverId, box);
  return { target: verified(loaded), organizationId: loaded!.organizationId };
}

/** `loadVerifiedTarget` for a server document already read (null: it is gone), with its sealed credentials. */
export async function verifiedTargetOf(server: StoredServer | null, box: SecretBox): Promise<SshTarget> {
  return verified(server && (await unsealedOrFail(() => routedTargetOf(server, box))));
}

function verified(loaded: { target: SshTarget } | null): SshTarget {
  if (!loaded) throw failure('ServerNotFound', 'The server was deleted');
  if (!loaded.target.hostKeyFingerprint) {
    throw failure('ServerNotVerified', 'The server has no verified host key: verify it first');
  }
  return loaded.target;
}

/** Secrets of a server's login that must never appear in output: the password, passphrase and key body. */
export function credentialSecrets(target: SshTarget): string[] {
  const keyLines = (target.privateKey ?? '').split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [target.password, target.passphrase, ...keyLines].filter((s): s is string => !!s);
}
