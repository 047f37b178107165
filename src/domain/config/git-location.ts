import { RepositoryError } from './git-errors';

/*
 * Where definitions are read from: a repository's URL, a ref, a path inside it. Only the network
 * transports are sources: a path on Bosun's own machine (file://, /srv/repo) would let an API caller
 * read whatever repository the worker can.
 */

export type GitTransport = 'ssh' | 'https' | 'git';

export interface RepositoryAddress {
  transport: GitTransport;
  /** As ssh-keyscan takes it: an IPv6 address without its brackets. */
  host: string;
  port: number;
  /** The login of an ssh URL (`git` in `git@github.com:org/repo.git`), else null. */
  user: string | null;
}

const DEFAULT_PORTS: Record<GitTransport, number> = { ssh: 22, https: 443, git: 9418 };
const ACCEPTED = 'ssh://user@host:port/path, user@host:path, https:// or git://';

const refused = (url: string, why: string) => new RepositoryError('refused_url', `${url} is not a repository URL Bosun reads: ${why}`);

const bareHost = (host: string) => host.replace(/^\[(.*)\]$/, '$1');

function checkHost(url: string, host: string, user: string | null): void {
  if (!host) throw refused(url, 'it names no host');
  // Both would be read by ssh as options (CVE-2017-1000117).
  if (host.startsWith('-') || user?.startsWith('-')) throw refused(url, 'a host or user may not begin with "-"');
}

function schemeAddress(url: string, scheme: string): RepositoryAddress {
  if (scheme === 'file') throw refused(url, 'a path on the Bosun server is not a source');
  if (scheme === 'http') throw refused(url, 'plain http would send the token unencrypted: use https://');
  if (scheme !== 'ssh' && scheme !== 'https' && scheme !== 'git') throw refused(url, `the ${scheme}:// transport is not one of ${ACCEPTED}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused(url, 'it cannot be parsed');
  }
  if (parsed.password) throw refused(url, 'a password in the URL would be stored and shown: give credentials instead');
  if (parsed.username && scheme !== 'ssh') throw refused(url, 'a user in the URL belongs in credentials');
  const user = parsed.username ? decodeURIComponent(parsed.username) : null;
  checkHost(url, parsed.hostname, user);
  if (parsed.pathname === '' || parsed.pathname === '/') throw refused(url, 'it names no repository on the host');
  return {
    transport: scheme,
    host: bareHost(parsed.hostname),
    port: parsed.port ? Number(parsed.port) : DEFAULT_PORTS[scheme],
    user,
  };
}

/** A repository URL's transport and host, or refused_url: a local path, file://, http://, or anything else. */
export function repositoryAddress(url: string): RepositoryAddress {
  // Control characters and spaces would reach ssh's or git's argument parsing.
  if (!url || /[\s\x00-\x1f\x7f]/.test(url)) throw refused(url, 'it is empty or contains spaces or control characters');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme) return schemeAddress(url, scheme);
  // git's own rule: a colon before any slash makes `host:path` an ssh address, anything else a local path.
  const scpLike = /^(?:([^@/:]+)@)?(\[[^\]/]+\]|[^:/[\]]+):(.+)$/.exec(url);
  if (!scpLike) throw refused(url, `a path on the Bosun server is not a source (${ACCEPTED})`);
  const [, user = null, host = ''] = scpLike;
  checkHost(url, host, user);
  return { transport: 'ssh', host: bareHost(host), port: DEFAULT_PORTS.ssh, user };
}

const FULL_SHA = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

/** git check-ref-format's rules, so that a ref is never read as an option or a refspec (`a:b`, `+a`). */
function isRefName(ref: string): boolean {
  if (ref.startsWith('-') || ref.endsWith('/') || ref.endsWith('.') || ref === '@') return false;
  if (/[\x00-\x20~^:?*[\\\x7f]|\.\.|@\{|\/\//.test(ref)) return false;
  return ref.split('/').every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'));
}

/** The ref as given when it is a branch, a tag or a full commit sha; else ref_not_found. */
export function checkedRef(ref: string): string {
  if (FULL_SHA.test(ref) || isRefName(ref)) return ref;
  throw new RepositoryError('ref_not_found', `"${ref}" is not a branch, a tag or a full commit sha`);
}

/** The path inside the repository without leading or trailing slashes ('' for the whole repository); never out of it. */
export function checkedPath(path: string): string {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.some((part) => part === '..') || /[\x00-\x1f\x7f]/.test(path)) {
    throw new RepositoryError('path_not_found', `"${path}" is not a path inside the repository`);
  }
  return parts.join('/');
}
