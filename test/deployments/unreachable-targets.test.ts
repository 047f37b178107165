import net from 'node:net';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { executionRecord } from '../support/fixtures';
import { addFleet } from '../support/server-fleet';
import { Sshd } from '../support/sshd';

/*
 * A fleet run over 20 targets of which 3 refuse connections (their sshd stopped: nothing listens)
 * and 2 hang (a TCP server that accepts and never says a word), with a connect timeout of 2 s.
 * Every server is verified first, on two private sshd: the 15 good ones on one, the 5 bad ones on
 * another that is then stopped. Two organizations hold the same 20 addresses, so the strict run and
 * the lenient one run side by side.
 */

const CONNECT_TIMEOUT_MS = 2000;
const GOOD = Array.from({ length: 15 }, (_, i) => `127.0.72.${i + 1}`);
const REFUSED = ['127.0.72.16', '127.0.72.17', '127.0.72.18'];
const HANGING = ['127.0.72.19', '127.0.72.20'];
/**
 * A server that does not answer is retried a second apart while a next attempt starts within twice
 * the connect timeout of the first (activities/step-run.ts), each attempt taking at most the connect
 * timeout: the step ends within three connect timeouts (it was 8 attempts and 45 s of backoff).
 */
const UNREACHABLE_BOUND_MS = 3 * CONNECT_TIMEOUT_MS;
/** What a loaded 2-core machine adds around the attempts (workflow tasks, writes). */
const SLACK_MS = 12_000;

/** A peer that accepts TCP connections and never answers: a hung host, a blackholing firewall that completes the handshake. */
async function silentPeer(host: string, port: number) {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    accepted: () => accepted,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let bosun: Bosun;
let good: Sshd;
let doomed: Sshd;
let peers: Array<Awaited<ReturnType<typeof silentPeer>>>;
const record = executionRecord('unreachable');

/** An organization's servers at these addresses, in this order (the run batches its targets in it). */
async function fleetOf(org: string, order: string[]): Promise<{ ops: User; servers: string[] }> {
  const ops = await asUser(bosun, org);
  const servers = await addFleet(ops, order.map((host) => ({ host, title: `host-${host.split('.')[3]}`, sshd: GOOD.includes(host) ? good.info : doomed.info })));
  return { ops, servers };
}

let strict: { ops: User; servers: string[] };
let lenient: { ops: User; servers: string[] };

beforeAll(async () => {
  [good, doomed] = await Promise.all([Sshd.startPrivate(GOOD), Sshd.startPrivate([...REFUSED, ...HANGING])]);
  bosun = await startBosun({ healthIntervalSeconds: 3600, env: { SSH_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) } });
  // The five bad ones make one batch of five (a batch waits for its slowest target: one such wait per run): the second of four.
  const order = [...GOOD.slice(0, 5), ...REFUSED, ...HANGING, ...GOOD.slice(5)];
  [strict, lenient] = await Promise.all([fleetOf('unreachable-strict', order), fleetOf('unreachable-lenient', order)]);
  await doomed.stop({ dropSessions: true });
  peers = await Promise.all(HANGING.map((host) => silentPeer(host, doomed.info.port)));
}, 180_000);
afterAll(async () => {
  strict?.ops.close();
  lenient?.ops.close();
  await bosun?.stop();
  await Promise.all([good?.stop({ dropSessions: true }), ...(peers ?? []).map((peer) => peer.close())]);
  record.remove();
});

type Target = { host: string; status: string; error: string | null; batch: number; started_at: string | null; completed_at: string | null };

const steps = (tag: string) => [
  { name: 'first', command: record.note(`${tag}-first`) },
  { name: 'second', command: record.note(`${tag}-second`) },
];

/** A bad target failed on its first step, for the reason its address gives, within the attempts' bound. */
function expectFailedForItsReason(target: Target) {
  expect(target.status).toBe('failed');
  const why = REFUSED.includes(target.host) ? /refused/ : /Timed out connecting/;
  expect(target.error).toMatch(new RegExp(`^Step "first" \\(1/2\\) failed on host-\\d+: .*${why.source}`));
  const tookMs = Date.parse(target.completed_at!) - Date.parse(target.started_at!);
  expect(tookMs).toBeLessThan(UNREACHABLE_BOUND_MS + SLACK_MS);
}

jest.setTimeout(240_000);

describe('unreachable and hanging targets in a fleet run', () => {
  test('both runs end within the connect timeout’s bound: refused and hanging targets fail with their reason; max_failures decides what else runs', async () => {
    const strictDeployment = await strict.ops.define({ targets: { server_ids: strict.servers }, strategy: { batch_size: 5, max_failures: 2 }, steps: steps('strict') });
    const lenientDeployment = await lenient.ops.define({ targets: { server_ids: lenient.servers }, strategy: { batch_size: 5, max_failures: 5 }, steps: steps('lenient') });
    const triggeredAt = Date.now();
    const [strictRun, lenientRun] = await Promise.all(
      [
        [strict.ops, strictDeployment.id],
        [lenient.ops, lenientDeployment.id],
      ].map(async ([ops, id]) => (ops as User).waitForRun(id as string, (await (ops as User).trigger(id as string)).run_id, undefined, 180_000)),
    );

    // One batch waits for its bad targets: the whole run takes that bound and its good batches' few seconds.
    for (const run of [strictRun, lenientRun]) expect(Date.parse(run!.completed_at) - triggeredAt).toBeLessThan(UNREACHABLE_BOUND_MS + 3 * SLACK_MS);

    // Strict: the second batch's five failures are over the 2 allowed, so batches 3 and 4 never start.
    expect(strictRun).toMatchObject({ status: 'failed', strategy: { batch_size: 5, max_failures: 2, batches: 4 } });
    expect(strictRun!.summary).toMatchObject({ total: 20, success: 5, failed: 5, skipped: 10, running: 0, queued: 0 });
    expect(strictRun!.error).toMatch(/^5 of 20 targets failed \(more than the 2 allowed: later batches skipped\)/);
    const strictTargets = strictRun!.targets as Target[];
    for (const target of strictTargets.filter((t) => t.batch === 2)) expectFailedForItsReason(target);
    expect(strictTargets.filter((t) => t.batch > 2).map((t) => t.status)).toEqual(Array(10).fill('skipped'));
    for (const host of GOOD.slice(0, 5)) expect([record.count('strict-first', host), record.count('strict-second', host)]).toEqual([1, 1]);
    for (const host of GOOD.slice(5)) expect(record.count('strict-first', host)).toBe(0);
    // Each attempt's reason is in the step's output, that it was retried, and when it was given up.
    const [refused, hanging] = await Promise.all([strict.servers[5]!, strict.servers[8]!].map((id) => strict.ops.getTarget(strictDeployment.id, strictRun!.id, id)));
    expect(refused.steps[0].output).toMatch(/refused: is sshd running and the port right\?; retrying/);
    expect(hanging.steps[0].output).toMatch(/Timed out connecting to .*; retrying/);
    for (const target of [refused, hanging]) expect(target.steps[0].output).toMatch(/; given up after \d+\.\d s ---/);
    for (const target of [refused, hanging]) expect(target.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'skipped']);

    // Lenient: five failures are allowed, so every batch runs and every good target succeeds; the run still fails.
    expect(lenientRun).toMatchObject({ status: 'failed', strategy: { batch_size: 5, max_failures: 5, batches: 4 } });
    expect(lenientRun!.summary).toMatchObject({ total: 20, success: 15, failed: 5, skipped: 0 });
    expect(lenientRun!.error).toMatch(/^5 of 20 targets failed \(5 allowed: every batch ran\)/);
    for (const target of (lenientRun!.targets as Target[]).filter((t) => t.batch === 2)) expectFailedForItsReason(target);
    for (const host of GOOD) expect([record.count('lenient-first', host), record.count('lenient-second', host)]).toEqual([1, 1]);

    // The hanging peers were really tried, and each attempt given up on.
    for (const peer of peers) expect(peer.accepted()).toBeGreaterThan(0);
  });
});
