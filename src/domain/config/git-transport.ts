import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RepositoryError } from './git-errors';
import { hostKeyAlgorithmsOf, offeredHostKey, parseHostKey } from './git-host-key';
import type { RepositoryAddress } from './git-location';
import { run } from './git-process';

/** A deploy key for ssh URLs, a token for https ones (sent as HTTP Basic: GitHub, GitLab and Gitea all take it so). */
export type RepositoryCredentials =
  | { type: 'ssh_key'; private_key: string; passphrase?: string }
  | { type: 'token'; token: string; username?: string };

/** What one fetch runs with: its temporary folder, deadline and base environment. */
export interface FetchSession {
  dir: string;
  deadline: number;
  signal?: AbortSignal;
  env: NodeJS.ProcessEnv;
}

/** What the transport adds to git's environment, and the values no message may quote. */
export interface Transport {
  env: NodeJS.ProcessEnv;
  secrets: string[];
}

/** known_hosts names the host by this alias: the pinned key is then matched whatever the URL spells (a port, an IPv6 form). */
const HOST_ALIAS = 'bosun-repository';

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** The deploy key as ssh reads it: a file only this process's user may read, its passphrase removed by ssh-keygen. */
async function writeDeployKey(session: FetchSession, key: string, passphrase: string | undefined): Promise<string> {
  const file = path.join(session.dir, 'deploy_key');
  await writeFile(file, key.replace(/\r\n/g, '\n').replace(/\n?$/, '\n'), { mode: 0o600 });
  if (!passphrase) return file;
  // ssh in batch mode asks for no passphrase: ssh-keygen takes it from an askpass program that reads the environment, never an argument.
  const askpass = path.join(session.dir, 'askpass');
  await writeFile(askpass, '#!/bin/sh\nprintf "%s\\n" "$BOSUN_DEPLOY_KEY_PASSPHRASE"\n', { mode: 0o700 });
  await chmod(askpass, 0o700);
  const env = { ...session.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', BOSUN_DEPLOY_KEY_PASSPHRASE: passphrase };
  const removed = await run('ssh-keygen', ['-p', '-q', '-N', '', '-f', file], { ...session, env });
  if (removed.timedOut) throw new RepositoryError('timed_out', "Opening the deploy key took longer than the fetch's time limit");
  if (removed.code !== 0) {
    throw new RepositoryError('authentication_failed', 'The deploy key could not be opened: its passphrase is wrong, or it is not an OpenSSH private key');
  }
  return file;
}

/** The pinned host key, checked for a form ssh can pin; when there is none, the fetch stops with what the host offers. */
async function pinnedHostKey(address: RepositoryAddress, session: FetchSession, hostKey: string | null) {
  const pinned = hostKey === null ? null : parseHostKey(hostKey);
  if (pinned) return pinned;
  const offered = await offeredHostKey(address, session);
  const where = `${address.host}:${address.port}`;
  if (!offered) throw new RepositoryError('unreachable', `Could not read the host key of ${where}: it did not answer over SSH`);
  const why = hostKey === null ? 'no host key is pinned for it' : 'the pinned host key is not an OpenSSH public key line';
  throw new RepositoryError('host_key_unknown', `${where} offers host key ${offered.fingerprint}, but ${why}: pin ${offered.key} if it is the repository's`, {
    key: offered.key,
    fingerprint: offered.fingerprint,
  });
}

async function sshTransport(address: RepositoryAddress, session: FetchSession, credentials: RepositoryCredentials | null, hostKey: string | null): Promise<Transport> {
  if (credentials?.type !== 'ssh_key') {
    throw new RepositoryError('authentication_failed', 'An ssh repository URL needs a deploy key (credentials of type ssh_key)');
  }
  const pinned = await pinnedHostKey(address, session, hostKey);
  const knownHosts = path.join(session.dir, 'known_hosts');
  await writeFile(knownHosts, `${HOST_ALIAS} ${pinned.key}\n`, { mode: 0o600 });
  const keyFile = await writeDeployKey(session, credentials.private_key, credentials.passphrase);
  const options = {
    IdentitiesOnly: 'yes',
    IdentityAgent: 'none',
    BatchMode: 'yes',
    PreferredAuthentications: 'publickey',
    StrictHostKeyChecking: 'yes',
    UserKnownHostsFile: knownHosts,
    GlobalKnownHostsFile: '/dev/null',
    HostKeyAlias: HOST_ALIAS,
    HostKeyAlgorithms: hostKeyAlgorithmsOf(pinned.type),
    UpdateHostKeys: 'no',
    ConnectTimeout: String(Math.max(1, Math.ceil((session.deadline - Date.now()) / 1000))),
    ControlMaster: 'no',
    ControlPath: 'none',
    ForwardAgent: 'no',
    ClearAllForwardings: 'yes',
    PermitLocalCommand: 'no',
    LogLevel: 'ERROR',
  };
  // -F /dev/null: the worker's own ~/.ssh/config (a ProxyCommand, other identities) has no say.
  const command = ['ssh', '-F', '/dev/null', '-i', keyFile, ...Object.entries(options).flatMap(([name, value]) => ['-o', `${name}=${value}`])];
  const secrets = [credentials.private_key, ...credentials.private_key.split('\n').filter((line) => line.trim().length >= 16), credentials.passphrase ?? ''];
  return { env: { GIT_SSH_COMMAND: command.map(shellQuote).join(' '), GIT_SSH_VARIANT: 'ssh' }, secrets };
}

function httpsTransport(credentials: RepositoryCredentials | null): Transport {
  if (credentials === null) return { env: {}, secrets: [] };
  if (credentials.type !== 'token') throw new RepositoryError('authentication_failed', 'An https repository URL takes a token, not a deploy key');
  const basic = Buffer.from(`${credentials.username ?? 'x-access-token'}:${credentials.token}`).toString('base64');
  // By environment, never an argument (ps would show it) nor the URL (git would print it).
  return {
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` },
    secrets: [credentials.token, basic],
  };
}

/** The environment git fetches the address with: ssh's identity and pinned key, or https's token; refused when they do not fit. */
export async function transportFor(
  address: RepositoryAddress,
  session: FetchSession,
  credentials: RepositoryCredentials | null,
  hostKey: string | null,
): Promise<Transport> {
  switch (address.transport) {
    case 'ssh':
      return sshTransport(address, session, credentials, hostKey);
    case 'https':
      return httpsTransport(credentials);
    case 'git':
      if (credentials !== null) throw new RepositoryError('authentication_failed', 'A git:// URL takes no credentials: it has no authentication');
      return { env: {}, secrets: [] };
  }
}
