import { ApplicationFailure } from '@temporalio/activity';
import type { SecretBox } from '../src/secrets/secret-box';
import { CredentialsUnreadableError, loadSshTarget } from '../src/servers/credentials';

/** A server's connection details for an activity; credentials this worker cannot decrypt are a failure no retry fixes. */
export async function loadTargetOrFail(serverId: string, box: SecretBox) {
  try {
    return await loadSshTarget(serverId, box);
  } catch (error) {
    if (error instanceof CredentialsUnreadableError) throw ApplicationFailure.nonRetryable(error.message, 'CredentialsUnreadable');
    throw error;
  }
}
