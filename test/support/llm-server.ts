import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type OpenAI from 'openai';

/** The assistant's content for one request, or an HTTP status to answer it with. */
export type ScriptedReply = string | number;

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: OpenAI.ChatCompletionCreateParamsNonStreaming;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A local OpenAI-compatible chat-completions endpoint: answers each request with the next scripted
 * reply and records what it was sent.
 */
export class LlmServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: ScriptedReply[] = [];

  private constructor(private readonly server: Server) {
    server.on('request', (req, res) => void this.handle(req, res));
  }

  static async start(): Promise<LlmServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return new LlmServer(server);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Queues replies, answered in order, one per request. */
  reply(...replies: ScriptedReply[]): void {
    this.replies.push(...replies);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const body = raw ? JSON.parse(raw) : null;
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      send(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', code: null } });
      return;
    }
    const next = this.replies.shift();
    if (next === undefined) {
      // 418 is neither retried by the client nor a configuration status: the test fails at once, saying why.
      send(res, 418, { error: { message: 'no scripted reply left', type: 'test_error', code: null } });
    } else if (typeof next === 'number') {
      // retry-after-ms keeps the client's retries fast.
      send(res, next, { error: { message: `scripted status ${next}`, type: 'scripted', code: null } }, { 'retry-after-ms': '10' });
    } else {
      send(res, 200, {
        id: `chatcmpl-${this.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body?.model ?? 'unknown',
        choices: [{ index: 0, message: { role: 'assistant', content: next, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    }
  }
}
