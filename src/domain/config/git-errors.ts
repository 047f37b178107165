import type { RepositoryErrorCode } from '../contracts/config-sync';

export type { RepositoryErrorCode };

/** The host key an SSH host presented: its public key line (to pin) and its OpenSSH fingerprint. */
export interface OfferedHostKey {
  key: string;
  fingerprint: string;
}

export class RepositoryError extends Error {
  override name = 'RepositoryError';

  constructor(
    readonly code: RepositoryErrorCode,
    message: string,
    /** What the host offers instead, for host_key_unknown and host_key_mismatch (null when it could not be read). */
    readonly offered: OfferedHostKey | null = null,
  ) {
    super(message);
  }
}

const REDACTED = '[redacted]';

/** Every secret of a fetch and every temporary path replaced: what git or ssh printed may quote either. */
function scrub(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) if (secret) clean = clean.split(secret).join(REDACTED);
  return clean
    .replace(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED)
    .replace(/(authorization:\s*)\S+(\s+\S+)?/gi, `$1${REDACTED}`)
    // mkdtemp's six characters: a fetch's own folder, not a repository whose path merely looks alike.
    .replace(/\/\S*\/bosun-git-[A-Za-z0-9]{6}\/\S*/g, '<temporary file>');
}

/** Lines that only repeat what the first ones said, or tell a person at a terminal what to try. */
const NOISE = [
  /^fatal: could not read from remote repository\.?$/i,
  /^please make sure you have the correct access rights/i,
  /^and the repository exists\.?$/i,
  /^@+$/,
];

/** What git printed, as one line for a status page: its own words, at most 300 characters, secrets removed. */
export function summarize(stderr: string, secrets: readonly string[]): string {
  const lines = scrub(stderr, secrets)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !NOISE.some((noise) => noise.test(line)));
  const said = lines.join('; ').replace(/^(fatal|error): /i, '');
  return said.length > 300 ? `${said.slice(0, 297)}...` : said || 'git printed no reason';
}

const HOST_KEY_REFUSED = /host key verification failed|remote host identification has changed|no matching host key type/i;
const CREDENTIALS_REFUSED =
  /permission denied \(|authentication failed|could not read (username|password)|terminal prompts disabled|http basic: access denied|returned error: 40[13]|load key .*(invalid format|libcrypto)/i;
const REF_MISSING = /couldn't find remote ref|not our ref|unadvertised object|no such remote ref|remote branch .* not found|did not send all necessary objects/i;

/** Whether a fetch failed because ssh refused the host's key (the caller then reads what the host offers). */
export const isHostKeyRefusal = (stderr: string) => HOST_KEY_REFUSED.test(stderr);

/** A failed `git fetch`, sorted by what its user can do about it. */
export function fetchFailure(stderr: string, where: { url: string; ref: string; secrets: readonly string[] }): RepositoryError {
  const said = summarize(stderr, where.secrets);
  if (CREDENTIALS_REFUSED.test(stderr)) {
    return new RepositoryError('authentication_failed', `${where.url} refused the credentials: ${said}`);
  }
  if (REF_MISSING.test(stderr)) {
    return new RepositoryError('ref_not_found', `${where.url} has no branch, tag or commit "${where.ref}"`);
  }
  return new RepositoryError('unreachable', `Could not fetch ${where.url}: ${said}`);
}
