import net from 'node:net';
import { createLogger } from '../../src/logger';
import type { SshTarget } from '../../src/domain/ssh/connect';
import { SshError } from '../../src/domain/ssh/errors';
import { SshPool } from '../../src/domain/ssh/pool';
import { eventually } from '../support/eventually';
import { sharedServices } from '../support/shared';
import { BROKEN_SHELL_ADDRESS } from '../support/sshd';

describe('the SSH connection pool, against a real sshd', () => {
  const { sshd } = sharedServices();
  const log = createLogger('silent');
  const target = (overrides: Partial<SshTarget> = {}): SshTarget => ({
    key: 'server-a',
    host: sshd.host,
    port: sshd.port,
    username: sshd.username,
    privateKey: sshd.privateKey,
    hostKeyFingerprint: null,
    ...overrides,
  });

  test('reuses one connection per server and bounds its concurrent channels', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, log });
    try {
      // $PPID is the sshd session process: one per connection. Times come from the server's clock.
      const runs = await Promise.all(
        Array.from({ length: 9 }, () =>
          pool.withConnection(target(), async (ssh) => (await ssh.execCommand('echo $PPID; date +%s%N; sleep 0.2; date +%s%N')).stdout),
        ),
      );
      const parsed = runs.map((out) => out.split('\n'));
      expect(new Set(parsed.map(([ppid]) => ppid)).size).toBe(1);
      const spans = parsed.map(([, start, end]) => [Number(BigInt(start!) / 1_000_000n), Number(BigInt(end!) / 1_000_000n)] as const);
      const maxOverlap = Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s < b).length));
      expect(maxOverlap).toBeLessThanOrEqual(3);
      expect(maxOverlap).toBeGreaterThanOrEqual(2);
      expect(pool.size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  test('different credentials for the same server get a new connection', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, log });
    try {
      const ppid = (t: SshTarget) => pool.withConnection(t, async (ssh) => (await ssh.execCommand('echo $PPID')).stdout);
      const first = await ppid(target());
      expect(await ppid(target())).toBe(first);
      expect(await ppid(target({ privateKey: undefined, password: sshd.password }))).not.toBe(first);
    } finally {
      await pool.close();
    }
  });

  test('evicting a connection lets the command running on it finish, and the next caller gets a new one', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, log });
    try {
      const ppid = () => pool.withConnection(target(), async (ssh) => (await ssh.execCommand('echo $PPID')).stdout);
      const before = await ppid();
      let started: () => void = () => undefined;
      const startedOnServer = new Promise<void>((resolve) => (started = resolve));
      const running = pool.withConnection(target(), async (ssh) => (await ssh.execCommand('echo started; sleep 0.5; echo finished', { onStdout: () => started() })).stdout);
      // Evicted while the command runs on it.
      await startedOnServer;
      pool.evict('server-a');
      const after = await ppid();
      expect(await running).toBe('started\nfinished');
      expect(after).not.toBe(before);
    } finally {
      await pool.close();
    }
  });

  test('at its bound the pool closes the least recently used idle connection; a jump host stays open while a connection goes through it', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, maxConnections: 2, overBoundIdleMs: 200, log });
    // $PPID is the sshd session process: one per connection.
    const ppid = (t: SshTarget) => pool.withConnection(t, async (ssh) => (await ssh.execCommand('echo $PPID')).stdout);
    const [a, b, c] = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((host) => target({ key: `server-${host}`, host }));
    try {
      const first = { a: await ppid(a!), b: await ppid(b!) };
      // a is used again, so b is the least recently used when c opens.
      expect(await ppid(a!)).toBe(first.a);
      await ppid(c!);
      expect([pool.size, pool.idle]).toEqual([2, 2]);
      expect(await ppid(a!)).toBe(first.a);
      expect(await ppid(b!)).not.toBe(first.b);

      const hop = target({ key: 'hop', host: '127.0.0.5' });
      const behind = target({ key: 'behind', host: '127.0.0.6', via: hop });
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      // A command that runs behind the hop until released.
      const running = pool.withConnection(behind, async (ssh) => {
        await ssh.execCommand('true');
        await released;
      });
      const hopPpid = await ppid(hop);
      // At the bound, with nothing idle: the hop's channels are free, but a connection goes through it, so it stays.
      const over = await ppid(a!);
      expect([pool.size, pool.idle]).toEqual([3, 1]);
      // Over the bound, an idle connection is kept a moment for its server's next command, then closed.
      expect(await ppid(a!)).toBe(over);
      await eventually(async () => [pool.size, pool.idle], ([size, idle]) => size === 2 && idle === 0);
      expect(await ppid(hop)).toBe(hopPpid);
      release();
      await running;
      // The next connection closes the idle one behind the hop; then the hop is idle too.
      await ppid(a!);
      await eventually(async () => pool.idle, (idle) => idle === 2);
      await ppid(a!);
      // The hop is now the least recently used: closed for the next one.
      await ppid(b!);
      expect(await ppid(hop)).not.toBe(hopPpid);
    } finally {
      await pool.close();
    }
  });

  test('a probe passes only when a command really runs', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, log });
    try {
      await expect(pool.probe(target())).resolves.toBeUndefined();
      const error = await pool.probe(target({ host: BROKEN_SHELL_ADDRESS })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SshError);
      expect((error as Error).message).toMatch(/accepted the login but could not run a command \(exit 1\)/);
    } finally {
      await pool.close();
    }
  });

  test('a peer that never speaks SSH times out as a retryable timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const pool = new SshPool({ connectTimeoutMs: 500, maxChannelsPerConnection: 3, log });
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const error = await pool.withConnection(target({ port }), async () => 'never').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SshError);
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      expect(pool.size).toBe(0);
    } finally {
      await pool.close();
      silent.close();
    }
  });

  test('bad credentials are an authentication error that no retry will fix', async () => {
    const pool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 3, log });
    try {
      const error = await pool.probe(target({ privateKey: undefined, password: 'wrong' })).catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'authentication', retryable: false });
      expect((error as Error).message).not.toContain('wrong');
    } finally {
      await pool.close();
    }
  });
});
