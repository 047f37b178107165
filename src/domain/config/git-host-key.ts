import { hostKeyFingerprintOf } from '../ssh/connect';
import { RepositoryError, type OfferedHostKey } from './git-errors';
import type { RepositoryAddress } from './git-location';
import { run } from './git-process';

/** The key types ssh-keyscan is asked for, in the order one is offered to be pinned. */
const SCANNED_TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'];

export interface HostKey extends OfferedHostKey {
  type: string;
}

/**
 * A public key line (`ssh-ed25519 AAAA… comment`, or a known_hosts line with its host first) as
 * `type base64`, with its fingerprint; null when it is none: the blob must name the type it is given as.
 */
export function parseHostKey(line: string): HostKey | null {
  const words = line.trim().split(/\s+/);
  const at = words.findIndex((word) => SCANNED_TYPES.includes(word));
  const type = words[at];
  const base64 = words[at + 1];
  if (at < 0 || !type || !base64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  const blob = Buffer.from(base64, 'base64');
  const nameLength = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  if (nameLength !== type.length || blob.subarray(4, 4 + nameLength).toString('latin1') !== type) return null;
  return { type, key: `${type} ${base64}`, fingerprint: hostKeyFingerprintOf(blob) };
}

/** The signature algorithms that verify a host key of this type: ssh then asks the host for that key alone. */
export const hostKeyAlgorithmsOf = (type: string) => (type === 'ssh-rsa' ? 'rsa-sha2-512,rsa-sha2-256' : type);

/** The key the host presents, by ssh-keyscan (the one to pin of those it has); null when it answers none. */
export async function offeredHostKey(address: RepositoryAddress, options: { deadline: number; signal?: AbortSignal; env: NodeJS.ProcessEnv }): Promise<HostKey | null> {
  const seconds = Math.max(1, Math.ceil((options.deadline - Date.now()) / 1000));
  const scan = await run('ssh-keyscan', ['-T', String(seconds), '-p', String(address.port), '-t', 'ed25519,ecdsa,rsa', '--', address.host], options);
  if (scan.timedOut) throw new RepositoryError('timed_out', `Reading the host key of ${address.host}:${address.port} took longer than the fetch's time limit`);
  const offered = scan.stdout
    .toString('utf8')
    .split('\n')
    .map(parseHostKey)
    .filter((key): key is HostKey => key !== null);
  offered.sort((a, b) => SCANNED_TYPES.indexOf(a.type) - SCANNED_TYPES.indexOf(b.type));
  return offered[0] ?? null;
}
