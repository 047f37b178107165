import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/*
 * A webhook receiver on loopback, as a team would run one: it records every request, verifies its
 * signature with the Standard Webhooks reference verifier (the `standardwebhooks` package) once the
 * channel's secret is known, and answers as the test says — 204, a status, silence (a hang), or an
 * oversized body. It can stop listening and start again on the same port (an outage).
 */

export interface Received {
  /** The request's path and query, as the sender addressed it. */
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  json: any;
  /** Whether the reference verifier accepted it (null until a secret is known). */
  verified: boolean | null;
  at: number;
}

export type Answer = { status: number; body?: string } | 'hang';

export class WebhookReceiver {
  readonly received: Received[] = [];
  secret: string | null = null;
  /** What to answer; a promise holds the answer until it settles (the request waits meanwhile). */
  answer: (request: Received) => Answer | Promise<Answer> = () => ({ status: 204 });
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const header = (name: string) => String(req.headers[name] ?? '');
        const received: Received = { path: req.url ?? '', id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature'), body, json: safeJson(body), verified: null, at: Date.now() };
        if (this.secret) received.verified = verifies(this.secret, body, req.headers);
        this.received.push(received);
        const answer = await this.answer(received);
        if (answer === 'hang') return;
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '');
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening (connections refused), dropping open ones. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests whose body is the event of this type (and, given, of this subject). */
  events(type?: string): Received[] {
    return this.received.filter((r) => !type || r.json?.type === type);
  }
}

function verifies(secret: string, body: string, headers: http.IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, { 'webhook-id': String(headers['webhook-id']), 'webhook-timestamp': String(headers['webhook-timestamp']), 'webhook-signature': String(headers['webhook-signature']) });
    return true;
  } catch {
    return false;
  }
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const startReceiver = () => new WebhookReceiver().start();
