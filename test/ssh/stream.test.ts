import type { NodeSSH } from 'node-ssh';
import { openConnection } from '../../src/domain/ssh/connect';
import { capture, OutputLimitExceeded, streamBetween } from '../../src/domain/ssh/stream';
import { eventually } from '../support/eventually';
import { sharedServices } from '../support/shared';

/** Data streamed between two commands through this process, against a real sshd (two connections, as two servers). */
describe('streams between commands over SSH', () => {
  const { sshd } = sharedServices();
  let a: NodeSSH;
  let b: NodeSSH;
  const connect = async (key: string) =>
    (await openConnection({ key, host: sshd.host, port: sshd.port, username: sshd.username, privateKey: sshd.privateKey, hostKeyFingerprint: null }, 10_000)).ssh;
  // "slee[p]" matches the command, not this pgrep's own shell.
  const sleeping = async (seconds: string) => (await a.execCommand(`pgrep -f 'slee[p] ${seconds}' || true`)).stdout.trim();

  beforeAll(async () => {
    [a, b] = [await connect('stream-a'), await connect('stream-b')];
  });
  afterAll(() => {
    a.dispose();
    b.dispose();
  });

  test('one command’s output reaches the other’s input, every byte, with both exit codes', async () => {
    const result = await streamBetween({ ssh: a, command: 'head -c 5000000 /dev/zero' }, { ssh: b, command: 'wc -c' }, { onBytes: () => undefined });
    expect(result).toMatchObject({ bytes: 5_000_000, source: { exitCode: 0 }, target: { exitCode: 0 }, targetOutput: '5000000\n' });
  });

  test('a target that fails at once ends the stream at once: the source is stopped, nothing hangs', async () => {
    const started = Date.now();
    const result = await streamBetween(
      { ssh: a, command: 'head -c 500000000 /dev/zero' },
      { ssh: b, command: 'head -c 1000 >/dev/null; echo "restore failed" >&2; exit 3' },
      { onBytes: () => undefined },
    );
    expect(result.target).toMatchObject({ exitCode: 3, stderr: 'restore failed\n' });
    expect(result.source.exitCode).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('aborting a throttled stream stops both commands, their process groups included', async () => {
    const controller = new AbortController();
    const streaming = streamBetween(
      { ssh: a, command: 'cat /dev/zero | (sleep 4242.1; cat)' },
      { ssh: b, command: 'cat > /dev/null' },
      { onBytes: () => undefined, signal: controller.signal, bytesPerSecond: 100_000 },
    );
    // The source's command is running on the server.
    await eventually(() => sleeping('4242.1'), (pids) => pids !== '', 10_000);
    const aborted = Date.now();
    controller.abort();
    const result = await streaming;
    expect(result.source.signal === 'stopped' || result.source.exitCode !== 0).toBe(true);
    expect(Date.now() - aborted).toBeLessThan(4500);
    // A command that neither reads nor writes is stopped too: its whole process group was killed.
    await eventually(() => sleeping('4242.1'), (pids) => pids === '', 10_000);
  });

  test('an abort that came before the call starts nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(capture(a, 'sleep 5; echo done', { maxBytes: 100, signal: controller.signal })).rejects.toBeDefined();
  });

  test('more output than accepted is an error, never a shortened answer', async () => {
    for (let i = 0; i < 3; i += 1) {
      await expect(capture(a, 'head -c 3000 /dev/zero; sleep 0.2; head -c 3000 /dev/zero', { maxBytes: 4000 })).rejects.toBeInstanceOf(OutputLimitExceeded);
    }
    expect((await capture(a, 'printf hello; echo oops >&2; exit 2', { maxBytes: 100 })).stdout.toString()).toBe('hello');
  });
});
