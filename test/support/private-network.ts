import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually';
import { SSHD_BINARY, type SshdInfo } from './sshd';

const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bosun-test', '-f', file]);

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/**
 * A private network, as behind a company's bastion: a Linux network namespace of its own (its own
 * loopback, nothing routed to or from the tests' network) with a real OpenSSH sshd inside answering
 * on every 127.0.0.x there, and a bastion — another real sshd — that has a foot in both: it
 * listens on one of the tests' loopback addresses and runs inside the namespace (each connection
 * is handed to `sshd -i` entered into it, as inetd would), so only through it can the servers
 * inside be reached. Same login and user key as the tests' shared sshd.
 */
export class PrivateNetwork {
  /** Connections the bastion has accepted: how many SSH connections Bosun opened to it. */
  bastionConnections = 0;
  private listener?: net.Server;
  private readonly sessions = new Set<ChildProcess>();

  private constructor(
    private readonly holder: ChildProcess,
    private readonly inside: ChildProcess,
    private readonly dir: string,
    /** Where the bastion answers, on the tests' loopback. */
    readonly bastion: { host: string; port: number },
    /** The port the servers inside answer on (inside the namespace; nothing answers it outside). */
    readonly insidePort: number,
  ) {}

  static async start(login: SshdInfo, bastionHost = '127.0.0.14'): Promise<PrivateNetwork> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-private-net-'));
    chmodSync(dir, 0o755);
    // A process that holds the namespace (its loopback up) for as long as the test runs.
    const holder = spawn('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && echo up && exec sleep 100000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`could not make a network namespace (unshare exited ${code})`)));
    });
    const insidePort = await freePort();
    const common = (hostKey: string) => [
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${path.join(login.dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin no',
      `AllowUsers ${login.username}`,
      'AllowTcpForwarding yes',
      'MaxStartups 200:30:400',
      'MaxSessions 30',
      'LogLevel ERROR',
    ];
    keygen(path.join(dir, 'inside_host_ed25519'));
    keygen(path.join(dir, 'bastion_host_ed25519'));
    // Every address of the namespace: its loopback is all it has (127.0.0.0/8, nothing else).
    writeFileSync(path.join(dir, 'inside_config'), [`Port ${insidePort}`, 'ListenAddress 0.0.0.0', `PidFile ${path.join(dir, 'inside.pid')}`, ...common(path.join(dir, 'inside_host_ed25519'))].join('\n') + '\n');
    writeFileSync(path.join(dir, 'bastion_config'), [...common(path.join(dir, 'bastion_host_ed25519'))].join('\n') + '\n');
    const inside = spawn('nsenter', [`--net=/proc/${holder.pid}/ns/net`, '--', SSHD_BINARY, '-D', '-e', '-f', path.join(dir, 'inside_config')], { stdio: ['ignore', 'ignore', 'inherit'] });
    const network = new PrivateNetwork(holder, inside, dir, { host: bastionHost, port: await freePort() }, insidePort);
    await network.startBastion();
    // Up once a login through the bastion's namespace reaches the sshd inside.
    await eventually(
      () => network.reachableInside(),
      (up) => up,
      10_000,
    );
    return network;
  }

  /** The bastion listens (again): each connection an `sshd -i` inside the namespace. */
  async startBastion(): Promise<void> {
    const listener = net.createServer((socket) => {
      this.bastionConnections += 1;
      const session = spawn('nsenter', [`--net=/proc/${this.holder.pid}/ns/net`, '--', SSHD_BINARY, '-i', '-e', '-f', path.join(this.dir, 'bastion_config')], { stdio: ['pipe', 'pipe', 'ignore'] });
      this.sessions.add(session);
      socket.pipe(session.stdin!);
      session.stdout!.pipe(socket);
      const end = () => {
        socket.destroy();
        session.kill('SIGKILL');
      };
      socket.on('close', end).on('error', end);
      session.on('exit', () => {
        this.sessions.delete(session);
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => listener.listen(this.bastion.port, this.bastion.host, resolve));
    this.listener = listener;
  }

  /** The bastion goes down: no new connections, and every connection through it is cut. */
  async killBastion(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    for (const session of this.sessions) session.kill('SIGKILL');
    if (listener) await new Promise((resolve) => listener.close(resolve));
  }

  /** A new host key for the bastion (a reinstall, or someone in the middle): presented to the next connections. */
  rotateBastionHostKey(): void {
    execFileSync('rm', ['-f', path.join(this.dir, 'bastion_host_ed25519'), path.join(this.dir, 'bastion_host_ed25519.pub')]);
    keygen(path.join(this.dir, 'bastion_host_ed25519'));
  }

  private async reachableInside(): Promise<boolean> {
    try {
      execFileSync('nsenter', [`--net=/proc/${this.holder.pid}/ns/net`, '--', 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${this.insidePort}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    await this.killBastion();
    this.inside.kill('SIGTERM');
    this.holder.kill('SIGKILL');
  }
}
