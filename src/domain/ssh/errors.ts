import { failure, isRetryable, type FailureType } from '../contracts/failure-types';

/**
 * What went wrong talking to a server, sorted by what a retry can do about it:
 * transport and timeout failures may pass; bad credentials, a bad key or a changed host key will not.
 */
export type SshErrorKind = 'transport' | 'timeout' | 'authentication' | 'host_key_mismatch' | 'key_invalid';

/** Each kind's Temporal failure type; whether a retry can fix it is the failure types' table's (src/domain/contracts/failure-types.ts). */
export const SSH_FAILURE_TYPES: Record<SshErrorKind, FailureType> = {
  transport: 'SshTransportError',
  timeout: 'SshTimeout',
  authentication: 'SshAuthenticationFailed',
  host_key_mismatch: 'SshHostKeyMismatch',
  key_invalid: 'SshKeyInvalid',
};

export class SshError extends Error {
  override name = 'SshError';

  constructor(
    readonly kind: SshErrorKind,
    message: string,
    /** Nothing answered at the address: refused, no route, or no SSH handshake within the connect timeout (not sshd throttling logins). */
    readonly unreachable = false,
  ) {
    super(message);
  }

  get retryable(): boolean {
    return isRetryable(SSH_FAILURE_TYPES[this.kind]);
  }

  /** This error as an activity's failure: its kind's type, retried or not as the table says (options: failure()'s). */
  toFailure(options: { final?: boolean; retryAfterMs?: number } = {}) {
    return failure(SSH_FAILURE_TYPES[this.kind], this.message, options);
  }
}

/** Turns whatever ssh2 or the socket threw into an SshError with a message a person can act on. */
export function classifySshError(error: unknown, where: string): SshError {
  if (error instanceof SshError) return error;
  const err = error as NodeJS.ErrnoException & { level?: string };
  const message = err?.message ?? String(error);
  if (err?.level === 'client-authentication' || /authentication methods failed/i.test(message)) {
    return new SshError('authentication', `Authentication to ${where} failed: the server rejected the credentials`);
  }
  if (/privateKey|passphrase|private key/i.test(message)) {
    return new SshError('key_invalid', `The private key for ${where} could not be used: ${message}`);
  }
  if (err?.level === 'client-timeout' || /timed out/i.test(message)) {
    return new SshError('timeout', `Timed out connecting to ${where}`, true);
  }
  if (/lost before handshake/i.test(message)) {
    return new SshError('transport', `${where} closed the connection before the SSH handshake: sshd throttling new connections (MaxStartups), or not an SSH server`);
  }
  switch (err?.code) {
    case 'ECONNREFUSED':
      return new SshError('transport', `Connection to ${where} refused: is sshd running and the port right?`, true);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SshError('transport', `Host name of ${where} could not be resolved`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new SshError('transport', `${where} is unreachable from this worker`, true);
    case 'ECONNRESET':
    case 'EPIPE':
      return new SshError('transport', `Connection to ${where} was reset`);
    default:
      return new SshError('transport', `SSH to ${where} failed: ${message}`);
  }
}
