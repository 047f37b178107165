import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { Sshd } from '../support/sshd';
import { BosunProcess } from '../support/processes';
import { ServerModel } from '../../src/domain/servers/model';
import { serverHealthSweepWorkflowId } from '../../src/domain/contracts/workflow-ids';

describe('a verified server is watched: offline when unreachable, verified again when back', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;
  /** An sshd that logs each login and each command its sessions start (LogLevel VERBOSE). */
  let logged: Sshd | undefined;
  let ops: User | undefined;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 1 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('watchers');
  });
  afterAll(async () => {
    await sshd.stop();
    await logged?.stop({ dropSessions: true });
    ops?.close();
    await bosun.stop();
  });

  /** The workflows a Temporal UI query lists, by id and type. */
  const listed = async (query: string) => {
    const found: Array<{ id: string; type: string }> = [];
    for await (const workflow of bosun.temporal.workflow.list({ query })) found.push({ id: workflow.workflowId, type: workflow.type });
    return found;
  };

  const status = async (id: string) => (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data;

  test('sshd stopped → offline with the reason; sshd back → verified', async () => {
    const { host, port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'watched', host, port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    await eventually(() => status(id), (s) => s.status === 'verified');
    const checked = await eventually(() => status(id), (s) => s.last_checked_at !== null && s.last_checked_at !== s.verified_at);
    expect(checked.status).toBe('verified');

    await sshd.stop();
    const offline = await eventually(() => status(id), (s) => s.status === 'offline', 20_000);
    expect(offline.last_error).toMatch(/refused/);

    await sshd.resume();
    const back = await eventually(() => status(id), (s) => s.status === 'verified', 20_000);
    expect(back.last_error).toBeNull();
    expect(back.fingerprint).not.toBeNull();
  });

  test('a health check that meets a different host key marks the server unverified', async () => {
    const { host, port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'rekeyed', host: '127.0.0.2', port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    const pinned = (await eventually(() => status(id), (s) => s.status === 'verified')).host_key_fingerprint;
    await sshd.stop();
    sshd.rotateHostKey();
    await sshd.resume();
    const distrusted = await eventually(() => status(id), (s) => s.status === 'unverified', 20_000);
    expect(distrusted.last_error).toMatch(/Host key .* changed/);
    expect(distrusted.host_key_fingerprint).toBe(pinned);
    expect(host).toBe('127.0.0.1');
  });

  test("an organization's servers are watched by one health sweep: all offline when their sshd stops, verified again when it is back", async () => {
    const fleet = await Sshd.startPrivate(['127.0.75.1', '127.0.75.2', '127.0.75.3']);
    try {
      const team = await asUser(bosun, 'health-sweep');
      const ids = await Promise.all(['127.0.75.1', '127.0.75.2', '127.0.75.3'].map((host) => team.addServer({ host, sshd: fleet.info })));
      const organizationId = String((await ServerModel.findById(ids[0], { organization_id: 1 }).lean())!.organization_id);
      // What the Temporal UI lists for the organization: one sweep, no workflow of a server's own.
      const watching = await eventually(
        () => listed(`BosunOrganization = "${organizationId}" AND ExecutionStatus = "Running" AND WorkflowType STARTS_WITH "serverHealth"`),
        (found) => found.length === 1,
      );
      expect(watching).toEqual([{ id: serverHealthSweepWorkflowId(organizationId), type: 'serverHealthSweepWorkflow' }]);

      await fleet.stop({ dropSessions: true });
      for (const id of ids) expect((await eventually(() => team.getServer(id), (s) => s.status === 'offline', 20_000)).last_error).toMatch(/refused/);
      await fleet.resume();
      for (const id of ids) expect((await eventually(() => team.getServer(id), (s) => s.status === 'verified', 20_000)).last_error).toBeNull();
      team.close();
    } finally {
      await fleet.stop({ dropSessions: true });
    }
  });

  test("after an upgrade, a server's own health monitor ends at its next check; a sweep lost is started again at a worker's start", async () => {
    const team = await asUser(bosun, 'health-upgrade');
    const id = await team.addServer({ host: '127.0.0.6' });
    const organizationId = String((await ServerModel.findById(id, { organization_id: 1 }).lean())!.organization_id);
    const sweep = bosun.temporal.workflow.getHandle(serverHealthSweepWorkflowId(organizationId));
    await eventually(async () => (await sweep.describe()).status.name, (s) => s === 'RUNNING');
    // As an older Bosun left it: the server's own monitor, running; and its organization's sweep lost (a Temporal reset, say).
    const own = await bosun.temporal.workflow.start('serverHealthWorkflow', { taskQueue: bosun.taskQueue, workflowId: `server-health-${id}`, args: [{ serverId: id, organizationId, intervalSeconds: 1 }] });
    await sweep.terminate('lost');
    expect((await eventually(() => own.describe(), (d) => d.status.name !== 'RUNNING')).status.name).toBe('COMPLETED');
    // A worker starting (a second one here, on the same data) starts the organization's sweep again, and the server is watched.
    const worker = new BosunProcess({ ...bosun.env, WORKER_METRICS_PORT: '0', SERVER_HEALTH_INTERVAL_SECONDS: '1' }, ['--role', 'worker']);
    try {
      await worker.ready();
      const again = await eventually(() => listed(`WorkflowId = "${serverHealthSweepWorkflowId(organizationId)}" AND ExecutionStatus = "Running"`), (found) => found.length === 1);
      expect(again).toEqual([{ id: serverHealthSweepWorkflowId(organizationId), type: 'serverHealthSweepWorkflow' }]);
      const before = (await team.getServer(id)).last_checked_at;
      await eventually(() => team.getServer(id), (s) => s.last_checked_at !== before);
    } finally {
      await worker.stop('SIGTERM');
      team.close();
    }
  });

  test('a server is probed over the connection its run left pooled: one fresh login in five probes; its sshd gone with its sessions → offline at once', async () => {
    logged = await Sshd.startPrivate(['127.0.74.1'], { logConnections: true, config: ['LogLevel VERBOSE'] });
    ops = await asUser(bosun, 'health-pooled');
    const id = await ops.addServer({ host: '127.0.74.1', sshd: logged.info, title: 'pooled' });
    const deployment = await ops.define({ targets: { server_ids: [id] }, steps: [{ name: 'noop', command: 'true' }] });
    expect(await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id)).toMatchObject({ status: 'success' });

    const [logins0, commands0] = [logged.loginsAccepted(), logged.commandsStarted()];
    const probes = await eventually(async () => logged!.commandsStarted() - commands0, (n) => n >= 10, 40_000);
    // Every fifth probe logs in afresh (the host key and sshd's listener checked again); the others run `true` over the pooled connection.
    // (One more: a fresh probe's login may be in the log before its command.)
    expect(logged.loginsAccepted() - logins0).toBeLessThanOrEqual(Math.ceil(probes / 5) + 1);
    expect((await ops.getServer(id)).status).toBe('verified');

    await logged.stop({ dropSessions: true });
    const offline = await eventually(() => ops!.getServer(id), (s) => s.status === 'offline', 20_000);
    expect(offline.last_error).toMatch(/refused/);
  });
});
