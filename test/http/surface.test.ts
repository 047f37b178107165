import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { pageAt } from '../../src/api/console/pages';
import { userWithToken } from '../support/client';
import { connectSocket, type BosunSocket } from '../support/socket';
import type { DeploymentRunUpdatedEvent } from '../../src/domain/events';

const METRICS_TOKEN = 'scrape-surface-7c1e';
const emitWithoutAck = (socket: BosunSocket, event: string, request: unknown) => (socket.emit as (event: string, request: unknown) => void)(event, request);

/** The edges of the HTTP and Socket.IO surface a client meets first. */
describe('the HTTP and Socket.IO surface', () => {
  let bosun: Bosun;
  let token: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await startBosun({ metricsToken: METRICS_TOKEN });
    token = await bosun.token('surface');
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await bosun.stop();
  });

  test('a path parameter with bad percent-encoding is a 400 in the envelope, on every route, never a 500', async () => {
    const malformed = ['%zz', '%', '%4', '%E0%A4%A', '%C0%AF', '%ff', 'abc%2', '%%30'];
    const routes = [
      ['get', '/servers/X'], ['delete', '/servers/X'], ['post', '/servers/X/verify'],
      ['get', '/deployments/X'], ['post', '/deployments/X/run'], ['get', '/deployments/X/runs/X'], ['post', '/deployments/1b2c3d4e5f60718293a4b5c6/runs/X/cancel'],
      ['get', '/conversations/X'], ['post', '/conversations/X/messages'], ['post', '/conversations/X/steps/X/approve'],
      ['get', '/migration-plans/X'], ['put', '/secrets/X'], ['delete', '/secrets/X'],
    ] as const;
    for (const bad of malformed) {
      for (const [method, route] of routes) {
        const res = await bosun.api[method](`/api/v1${route.replaceAll('X', bad)}`).set(bearer(token));
        expect([method, route, bad, res.status, res.body.error?.code]).toEqual([method, route, bad, 400, 'bad_request']);
        expect(res.body.error.message).toContain('percent-encoding');
      }
    }
    // A well-formed escape still reaches the route: an id that is no id is just not found.
    expect((await bosun.api.get('/api/v1/servers/%41').set(bearer(token))).status).toBe(404);
  });

  test('the Bearer scheme is case-insensitive', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      expect([scheme, (await bosun.api.get('/api/v1/servers').set('Authorization', `${scheme} ${token}`)).status]).toEqual([scheme, 200]);
    }
    expect((await bosun.api.get('/api/v1/servers').set('Authorization', `Basic ${token}`)).status).toBe(401);
    // The same for METRICS_TOKEN on /metrics.
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      expect([scheme, (await bosun.api.get('/metrics').set('Authorization', `${scheme} ${METRICS_TOKEN}`)).status]).toEqual([scheme, 200]);
    }
    expect((await bosun.api.get('/metrics').set('Authorization', `bearer not-${METRICS_TOKEN}`)).status).toBe(401);
  });

  test('a body that is valid JSON but not an object says so; malformed JSON says that', async () => {
    const send = (body: string) => bosun.api.post('/api/v1/servers').set(bearer(token)).set('Content-Type', 'application/json').send(body);
    for (const [body, kind] of [['null', 'null'], ['"hi"', 'a string'], ['42', 'a number'], ['true', 'a boolean']] as const) {
      const res = await send(body);
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({
        code: 'validation_failed',
        message: `The request body is valid JSON but ${kind}; send a JSON object`,
        details: [{ path: '', message: `expected a JSON object, received ${kind}` }],
      });
    }
    const malformed = await send('{"title": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toEqual({ code: 'malformed_json', message: 'The request body is not valid JSON' });
  });

  test('a known path with another method answers 405 with Allow; an unknown path stays 404', async () => {
    const patch = await bosun.api.patch('/api/v1/servers').set(bearer(token)).send({});
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe('GET, HEAD, POST');
    expect(patch.body.error).toEqual({ code: 'method_not_allowed', message: 'PATCH is not allowed on /api/v1/servers; it takes GET, HEAD, POST' });
    const put = await bosun.api.put('/api/v1/deployments/1b2c3d4e5f60718293a4b5c6/run').set(bearer(token)).send({});
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('POST');
    expect((await bosun.api.delete('/api/v1/policy').set(bearer(token))).headers.allow).toBe('GET, HEAD, PUT');
    expect((await bosun.api.get('/api/v1/nothing-here').set(bearer(token))).status).toBe(404);
    expect((await bosun.api.get('/api/v1/servers/1b2c3d4e5f60718293a4b5c6/nothing').set(bearer(token))).status).toBe(404);
    // Outside the API too (no token needed to be told): health, metrics, the reference, the home page.
    for (const [method, path, allow] of [
      ['post', '/healthz', 'GET, HEAD'], ['delete', '/readyz', 'GET, HEAD'], ['put', '/metrics', 'GET, HEAD'], ['post', '/', 'GET, HEAD'],
      ['delete', '/docs', 'GET, HEAD'], ['post', '/docs/init.js', 'GET, HEAD'], ['post', '/api/v1/openapi.json', 'GET, HEAD'],
    ] as const) {
      const res = await bosun.api[method](path);
      expect([method, path, res.status, res.headers.allow, res.body.error?.code]).toEqual([method, path, 405, allow, 'method_not_allowed']);
    }
    expect((await bosun.api.post('/nothing-here')).status).toBe(404);
    // OPTIONS is answered, with the same Allow.
    const options = await bosun.api.options('/api/v1/servers').set(bearer(token));
    expect([options.status, options.headers.allow]).toEqual([200, 'GET, HEAD, POST']);
    expect((await bosun.api.options('/healthz')).headers.allow).toBe('GET, HEAD');
  });

  test('each response carries one set of RateLimit headers', async () => {
    const res = await bosun.api.get('/api/v1/servers').set(bearer(token));
    const raw = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
    const names = raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.filter((n) => n === 'ratelimit')).toHaveLength(1);
    expect(names.filter((n) => n === 'ratelimit-policy')).toHaveLength(1);
  });

  test('GET / points a person and a client to the API, its reference and health', async () => {
    const json = await bosun.api.get('/');
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ name: 'Bosun', links: { api: '/api/v1', docs: '/docs', openapi: '/api/v1/openapi.json', health: '/healthz' } });
    const html = await bosun.api.get('/').set('Accept', 'text/html');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.text).toContain('<a href="/docs">/docs</a>');
  });

  test('the console: every page URL answers the same page under a strict Content-Security-Policy; its bundle is served, cached for good', async () => {
    const page = await bosun.api.get('/deployments/0123456789abcdef01234567/runs/0123456789abcdef01234567').set('Accept', 'text/html');
    expect(page.status).toBe(200);
    const csp = page.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    // No inline script: the page only loads its bundle.
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/console\/app-[0-9a-f]{16}\.js)"/.exec(page.text)![1]!;
    const style = /href="(\/console\/app-[0-9a-f]{16}\.css)"/.exec(page.text)![1]!;
    const js = await bosun.api.get(script);
    expect([js.status, js.headers['content-type']]).toEqual([200, expect.stringMatching(/javascript/)]);
    expect(js.headers['cache-control']).toMatch(/immutable/);
    expect((await bosun.api.get(style)).status).toBe(200);
    expect((await bosun.api.get('/console/nothing-here.js')).status).toBe(404);
    expect((await bosun.api.get('/servers').set('Accept', 'text/html')).text).toBe(page.text);
  });

  test('every console URL docs/console.md documents answers the console on a direct load (a reload, a pasted link), and the console knows its page', async () => {
    const documented = [...readFileSync(path.join(__dirname, '../../docs/console.md'), 'utf8').matchAll(/`(\/[^`]*)`/g)]
      .map((m) => m[1]!)
      .filter((url) => !/^\/(usr|api|docs|console|metrics)\b/.test(url));
    expect(documented).toEqual(expect.arrayContaining(['/freezes', '/servers/{id}', '/deployments/{id}/runs/{run}/targets/{server}', '/people/{id}']));
    const id = '0123456789abcdef01234567';
    const page = (await bosun.api.get('/servers').set('Accept', 'text/html')).text;
    const answers: Array<[string, number, boolean, string | undefined]> = [];
    for (const url of new Set(documented.map((url) => url.replace(/\{[a-z]+\}/g, id)))) {
      const res = await bosun.api.get(url).set('Accept', 'text/html');
      answers.push([url, res.status, res.text === page, pageAt(url.replace(/[?#].*$/, ''))?.name]);
    }
    expect(answers.filter(([, status, same, name]) => status !== 200 || !same || !name)).toEqual([]);
  });

  test('Socket.IO: a run subscription without an acknowledgement still subscribes; a refused one is told why', async () => {
    const serverId = await userWithToken(bosun, token).addServer({ host: '127.0.0.5' });
    // The step prints until it is cancelled: a subscription made at any moment sees some of it.
    const deployment = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'no-ack', server_id: serverId, steps: [{ name: 'tick', command: 'while :; do echo tick; sleep 0.2; done' }] });
    const trigger = await bosun.api.post(`/api/v1/deployments/${deployment.body.data.id}/run`).set(bearer(token));
    const runId = trigger.body.run_id as string;

    const socket = await connectSocket(bosun.url, token);
    sockets.push(socket);
    const events: DeploymentRunUpdatedEvent[] = [];
    const refusals: unknown[] = [];
    socket.on('DeploymentRunUpdated', (event) => events.push(event));
    socket.on('subscription_error', (info) => refusals.push(info));
    emitWithoutAck(socket, 'subscribe', { run_id: runId });
    emitWithoutAck(socket, 'subscribe', { run_id: '1b2c3d4e5f60718293a4b5c6' });
    emitWithoutAck(socket, 'subscribe_conversation', { conversation_id: 'nope' });

    await eventually(async () => events.some((e) => e.output?.data.includes('tick')), Boolean);
    expect((await bosun.api.post(`/api/v1/deployments/${deployment.body.data.id}/runs/${runId}/cancel`).set(bearer(token))).status).toBe(202);
    await eventually(async () => events.map((e) => e.status), (s) => s.includes('cancelled'));
    expect(events.every((e) => e.run_id === runId)).toBe(true);
    await eventually(async () => refusals.length, (n) => n === 2);
    expect(refusals).toEqual(expect.arrayContaining([
      { event: 'subscribe', request: { run_id: '1b2c3d4e5f60718293a4b5c6' }, error: { code: 'not_found', message: expect.any(String) } },
      { event: 'subscribe_conversation', request: { conversation_id: 'nope' }, error: { code: 'not_found', message: expect.any(String) } },
    ]));
  });

  test('Socket.IO: a conversation subscription without an acknowledgement still subscribes', async () => {
    const serverId = await userWithToken(bosun, token).addServer({ host: '127.0.0.6' });
    const created = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: 'show the hostname' });
    const id = created.body.data.id as string;
    const status = async () => (await bosun.api.get(`/api/v1/conversations/${id}`).set(bearer(token))).body.data.status as string;
    await eventually(status, (s) => s !== 'running');

    const socket = await connectSocket(bosun.url, token);
    sockets.push(socket);
    const updates: string[] = [];
    socket.on('ConversationUpdated', (event) => event.conversation_id === id && updates.push(event.status));
    emitWithoutAck(socket, 'subscribe_conversation', { conversation_id: id });
    // Follow-ups until one's events arrive (the first does, unless it ended before the subscription was made).
    await eventually(async () => {
      if (updates.length === 0 && (await status()) !== 'running') {
        await bosun.api.post(`/api/v1/conversations/${id}/messages`).set(bearer(token)).send({ message: 'show uptime' });
      }
      return updates;
    }, (seen) => seen.includes('completed'), 60_000);
  });
});
