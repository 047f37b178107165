import net from 'node:net';
import { LlmPlanner } from '../../src/domain/planner/llm';
import { bearer, conversationEnded, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { LlmServer } from '../support/llm-server';
import { connectSocket } from '../support/socket';

const SECRET_VALUE = 'S3cret-db-passw0rd-4f9a71';
const LLM_KEY = 'sk-llm-key-never-logged-77c2d1';
// Printed by commands that never spell the secret out, so only their output carries it.
const PRINT_SECRET = `printf '%s%s\\n' '${SECRET_VALUE.slice(0, 9)}' '${SECRET_VALUE.slice(9)}'`;

/** Every JSON line Bosun logs, kept in memory. */
class CapturedLog {
  readonly lines: string[] = [];
  write(chunk: string) {
    this.lines.push(...chunk.split('\n').filter(Boolean));
  }
  /**
   * All lines, followed by every base64 string in them decoded: at trace level the Temporal SDK logs
   * activity inputs and results as base64 payloads, where a plain grep would miss a secret.
   */
  get searchable() {
    const decoded: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === 'string' && value.length >= 8 && value.length % 4 === 0 && /^[A-Za-z0-9+/]+=*$/.test(value)) {
        decoded.push(Buffer.from(value, 'base64').toString('utf8'));
      } else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    };
    this.entries().forEach(walk);
    return [...this.lines, ...decoded].join('\n');
  }
  entries() {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

describe('logs: JSON lines with request ids, and no secret in any of them', () => {
  const log = new CapturedLog();
  let llm: LlmServer;
  let bosun: Bosun;
  let stopped = false;
  /** What no line may contain, by name. */
  let secrets: Record<string, string>;

  // A whole working session at trace level, then Bosun stopped so everything the worker and the relays had to say is written: the tests read its log.
  beforeAll(async () => {
    llm = await LlmServer.start();
    bosun = await startBosun({
      logTo: log,
      logLevel: 'trace',
      planner: new LlmPlanner({ baseUrl: llm.baseUrl, apiKey: LLM_KEY, model: 'ops-model', maxAttempts: 1, maxReplans: 0, timeoutMs: 5000 }),
    });
    const token = await bosun.token('leaky', ['admin'], 'admin-token');
    const keyServer = await userWithToken(bosun, token).addServer({ host: '127.0.0.1' });
    const passwordServer = await userWithToken(bosun, token).addServer({ host: '127.0.0.2', auth_method: 'password' });
    expect((await bosun.api.put('/api/v1/secrets/DB_PASSWORD').set(bearer(token)).send({ value: SECRET_VALUE })).status).toBe(200);

    // A refused body carrying credentials, and a failed authentication with a guessed token.
    const { port, username, password, privateKey } = bosun.sshd;
    expect((await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title: 'x', host: '127.0.0.3', port, username, auth_method: 'password', password, private_key: privateKey })).status).toBe(422);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(`${token}x`))).status).toBe(401);

    for (const serverId of [keyServer, passwordServer]) {
      const deployment = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
        name: `print-${serverId}`, server_id: serverId, steps: [{ name: 'print', command: PRINT_SECRET }, { name: 'fail', command: `${PRINT_SECRET} >&2; exit 4` }],
      });
      const run = await userWithToken(bosun, token).runToEnd(deployment.body.data.id);
      expect(run.status).toBe('failed');
      expect(run.steps[0].output).toBe('[redacted]\n');
    }

    const socket = await connectSocket(bosun.url, token);
    socket.close();

    llm.reply(JSON.stringify({ steps: [{ title: 'Print it', command: PRINT_SECRET, target: 'server', risk: 'read', transfer: null }], cannot_plan: null }));
    const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: keyServer, message: 'print the database password' });
    expect(started.status).toBe(201);
    const done = await eventually(
      async () => (await bosun.api.get(`/api/v1/conversations/${started.body.data.id}`).set(bearer(token))).body.data,
      conversationEnded,
      60_000,
    );
    expect(done.status).toBe('completed');
    expect(llm.requests[0]!.authorization).toBe(`Bearer ${LLM_KEY}`);

    await bosun.stop();
    stopped = true;
    secrets = {
      'API token': token,
      'SSH password': password,
      'organization secret': SECRET_VALUE,
      'LLM API key': LLM_KEY,
      // Every line of the key's body, and the body as one string (JSON escapes its newlines).
      ...Object.fromEntries(privateKey.split('\n').filter((line) => line.length > 16 && !line.startsWith('-----')).map((line, i) => [`private key line ${i + 1}`, line])),
    };
  });
  afterAll(async () => {
    if (!stopped) await bosun?.stop();
    await llm?.close();
  });

  test('a whole working session at trace level leaves no secret in the logs', () => {
    expect(log.lines.length).toBeGreaterThan(100);
    // Debug and trace lines were written: the level was really that low.
    expect(log.entries().some((e) => (e.level as number) <= 20)).toBe(true);
    const searchable = log.searchable;
    // The decoding works: the run's workflow input (its ids) is there in the clear.
    expect(searchable).toContain('"runId"');
    const leaks = Object.entries(secrets).filter(([, value]) => searchable.includes(value)).map(([name]) => name);
    expect(leaks).toEqual([]);
    // The requests were logged (the one with the guessed token too), without their credentials.
    expect(log.entries().some((e) => e.msg === 'request completed' && (e.res as { statusCode: number }).statusCode === 401)).toBe(true);
  });

  test('every line logged while handling a request carries its id, which the response returns as X-Request-Id', async () => {
    const lines = log.entries().filter((e) => e.req_id !== undefined);
    // The session made at least 15 requests (how many polls it took varies with the machine's
    // speed): each of them logged under its own id.
    expect(new Set(lines.map((e) => e.req_id)).size).toBeGreaterThanOrEqual(15);
    // The request's own lines carry req_id (lines other code logs meanwhile: 'request ids' below).
    for (const line of lines.filter((e) => e.req !== undefined)) expect(line.req_id).toBe((line.req as { id: string }).id);
    // Once per line, whichever way it got there.
    expect(log.lines.filter((line) => (line.match(/"req_id":/g) ?? []).length > 1)).toEqual([]);
  });
});

describe('request ids', () => {
  const log = new CapturedLog();
  let bosun: Bosun;

  beforeAll(async () => {
    bosun = await startBosun({ logTo: log, logLevel: 'info' });
  });
  afterAll(() => bosun.stop());

  test('a valid X-Request-Id is kept, anything else replaced; the id is on every line of the request, including service lines', async () => {
    const given = await bosun.api.get('/healthz').set('X-Request-Id', 'ci-build-4711.step-3');
    expect(given.headers['x-request-id']).toBe('ci-build-4711.step-3');
    const replaced = await bosun.api.get('/healthz').set('X-Request-Id', 'no spaces or "quotes" allowed');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    // Temporal answering no more: /readyz logs why it is not ready through the service logger, not the request log's.
    await bosun.temporal.connection.close();
    const notReady = await bosun.api.get('/readyz').set('X-Request-Id', 'probe-1');
    expect(notReady.status).toBe(503);
    const lines = log.entries().filter((e) => e.req_id === 'probe-1');
    expect(lines.map((e) => e.msg)).toEqual(expect.arrayContaining(['not ready', 'request errored']));
  });

  test('a request whose client goes away before the answer is logged as aborted, with its id and without its headers', async () => {
    const token = await bosun.token('aborting', ['admin'], 'abort-token');
    const { port } = new URL(bosun.url);
    // A body announced at 100 bytes, 10 sent, then the connection dropped: the request never completes.
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const answered = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
    socket.write(
      `POST /api/v1/servers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: gone-1\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n{"title":"',
    );
    // Bosun has read the request's head and handed it to the app (Node answers "100 Continue" as it does): the client goes now.
    expect(await answered).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    socket.destroy();
    const lines = await eventually(
      async () => log.entries().filter((e) => e.req_id === 'gone-1'),
      (found) => found.some((e) => e.msg === 'request aborted'),
      5000,
    );
    // Logged once, as the client's doing (a warning), not as a failure of Bosun's.
    expect(lines).toEqual([expect.objectContaining({ msg: 'request aborted', level: 40, req: expect.objectContaining({ id: 'gone-1', method: 'POST', url: '/api/v1/servers' }) })]);
    expect(JSON.stringify(lines)).not.toContain(token);
  });
});
