import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SSHD_BINARY = process.env.SSHD_PATH ?? '/usr/sbin/sshd';
/** Root's shell rc files run slow tooling on every command: tests log in as an unprivileged user with a stock profile. */
export const TEST_LOGIN = 'bosun-ssh';
export const TEST_PASSWORD = 'correct-horse-battery-staple-42';
/** Logins through this address succeed but every command fails, like an account whose shell is nologin. */
export const BROKEN_SHELL_ADDRESS = '127.0.0.9';
/** Loopback addresses the fixture's sshd answers on normally: each can stand for a distinct server. */
export const LOOPBACK_ADDRESSES = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13].map((n) => `127.0.0.${n}`);

export interface SshdInfo {
  host: string;
  port: number;
  username: string;
  password: string;
  privateKey: string;
  dir: string;
}

const isRoot = () => process.getuid?.() === 0;

/** The login the tests use: a dedicated unprivileged user when running as root, else the current user. */
function ensureLogin(): string {
  if (!isRoot()) return os.userInfo().username;
  try {
    execFileSync('id', [TEST_LOGIN], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', TEST_LOGIN]);
  }
  execFileSync('chpasswd', { input: `${TEST_LOGIN}:${TEST_PASSWORD}\n` });
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  return TEST_LOGIN;
}

/** Every process below pid (sshd keeps a privilege-separated grandchild per session). */
function descendantsOf(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of table) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

const keygen = (file: string) => {
  rmSync(file, { force: true });
  rmSync(`${file}.pub`, { force: true });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bosun-test', '-f', file]);
};

function waitForPort(port: number, timeoutMs: number, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect({ host, port }, () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`sshd did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** A real OpenSSH sshd on a loopback port, with generated ed25519 host and user keys. */
/** A test sshd's own settings: extra sshd_config lines, and whether it logs each login. */
export interface SshdOptions {
  config?: readonly string[];
  logConnections?: boolean;
}

export class Sshd {
  private child?: ChildProcess;
  readonly info: SshdInfo;
  /** Where the daemon logs each accepted login, when asked to (a bench counts the connections opened). */
  private readonly logFile?: string;

  private constructor(info: SshdInfo, logFile?: string) {
    this.info = info;
    this.logFile = logFile;
  }

  /**
   * `config`: sshd_config lines of the test's own (`MaxStartups 2:100:2`), each in place of the default line with its keyword;
   * `logConnections`: a line per accepted login in its log (a bench counts the connections opened).
   */
  static async start(dir: string, port: number, addresses: readonly string[] = LOOPBACK_ADDRESSES, { config = [], logConnections = false }: SshdOptions = {}): Promise<Sshd> {
    mkdirSync(dir, { recursive: true });
    // sshd reads authorized_keys as the login user, who must be able to traverse to it.
    chmodSync(dir, 0o755);
    if (path.dirname(dir) !== os.tmpdir()) chmodSync(path.dirname(dir), 0o755);
    const username = ensureLogin();
    keygen(path.join(dir, 'host_ed25519'));
    keygen(path.join(dir, 'user_ed25519'));
    const authorizedKeys = path.join(dir, 'authorized_keys');
    writeFileSync(authorizedKeys, readFileSync(path.join(dir, 'user_ed25519.pub')));
    chmodSync(authorizedKeys, 0o644);
    const keyword = (line: string) => line.trim().split(/\s+/)[0]!.toLowerCase();
    const ours = new Set(config.map(keyword));
    writeFileSync(
      path.join(dir, 'sshd_config'),
      [
        `Port ${port}`,
        // Several loopback addresses, so one sshd can stand for several distinct servers.
        ...addresses.map((address) => `ListenAddress ${address}`),
        `HostKey ${path.join(dir, 'host_ed25519')}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${authorizedKeys}`,
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication yes',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin no',
        `AllowUsers ${username}`,
        'MaxStartups 200:30:400',
        'MaxSessions 20',
        // INFO logs a line per accepted login ("Accepted publickey for …").
        `LogLevel ${logConnections ? 'INFO' : 'ERROR'}`,
      ]
        // sshd keeps the first value of some keywords and the last of others: one line each.
        .filter((line) => !ours.has(keyword(line)))
        .concat([
          ...config,
          `ListenAddress ${BROKEN_SHELL_ADDRESS}`,
          `Match LocalAddress ${BROKEN_SHELL_ADDRESS}`,
          '  ForceCommand /bin/false',
        ])
        .join('\n') + '\n',
    );
    const sshd = new Sshd({
      // Where it answers: 127.0.0.1 unless it listens elsewhere only.
      host: addresses.includes('127.0.0.1') ? '127.0.0.1' : addresses[0]!,
      port,
      username,
      password: TEST_PASSWORD,
      privateKey: readFileSync(path.join(dir, 'user_ed25519'), 'utf8'),
      dir,
    }, logConnections ? path.join(dir, 'sshd.log') : undefined);
    await sshd.resume();
    return sshd;
  }

  /** An sshd of a test's own, in a fresh temporary folder on a free port: for tests that stop or re-key it (or a bench's many addresses). */
  static async startPrivate(addresses?: readonly string[], options: SshdOptions = {}): Promise<Sshd> {
    const port = await freePortOn(addresses ?? LOOPBACK_ADDRESSES);
    return Sshd.start(path.join(mkdtempSync(path.join(os.tmpdir(), 'bosun-sshd-')), 'sshd'), port, addresses, options);
  }

  /** Starts (or restarts) the daemon with the same keys and port. */
  async resume(): Promise<void> {
    const log = this.logFile ? ['-E', this.logFile] : ['-e'];
    const child = spawn(SSHD_BINARY, ['-D', ...log, '-f', path.join(this.info.dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    this.child = child;
    await Promise.race([
      waitForPort(this.info.port, 10_000, this.info.host),
      new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`sshd exited (${code}): ${stderr}`)))),
    ]);
  }

  /**
   * Stops the listening daemon: new connections are refused. Sessions already open live on, as with
   * real sshd, unless dropSessions: then they are cut too, as when a host goes down.
   */
  async stop({ dropSessions = false } = {}): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    if (dropSessions) {
      for (const pid of descendantsOf(child.pid!)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  /** The daemon's pid while it runs (its sessions are its descendants). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Logins accepted since it started, when it logs connections (startPrivate's logConnections); 0 otherwise. */
  loginsAccepted(): number {
    // "Accepted publickey for …" (VERBOSE adds "Accepted key … found at …" lines: not logins).
    return this.logLines(/Accepted \w+ for /);
  }

  /** Commands its sessions started (exec requests), when it logs connections with `LogLevel VERBOSE` in its config; 0 otherwise. */
  commandsStarted(): number {
    return this.logLines(/Starting session: command /);
  }

  private logLines(matching: RegExp): number {
    if (!this.logFile || !existsSync(this.logFile)) return 0;
    return readFileSync(this.logFile, 'utf8').split('\n').filter((line) => matching.test(line)).length;
  }

  /** A new host key, as after a reinstall (or an attacker in the middle); takes effect on the next resume. */
  rotateHostKey(): void {
    keygen(path.join(this.info.dir, 'host_ed25519'));
  }
}

/** Listens on `host`:`port` (0: the kernel's pick) and closes again: the port, or null when it was taken there. */
function listenBriefly(host: string, port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(null));
    probe.listen(port, host, () => {
      const { port: bound } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(bound));
    });
  });
}

/**
 * A port free on every one of `addresses`, for a private sshd to listen on them all. Probing one
 * other address (127.0.0.1) was not enough: a port another private sshd held on these addresses was
 * free there, the second sshd could not bind it, and the first answered in its place (two "servers"
 * at one endpoint).
 */
async function freePortOn(addresses: readonly string[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await listenBriefly(addresses[0]!, 0);
    if (port === null) break;
    let free = true;
    for (const address of addresses.slice(1)) free = free && (await listenBriefly(address, port)) !== null;
    if (free) return port;
  }
  throw new Error(`No port free on every one of ${addresses.join(', ')}`);
}
