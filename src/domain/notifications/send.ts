import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';

/*
 * One attempt at a delivery: the body for the channel's type (a Standard Webhooks JSON payload, or a
 * Slack Block Kit message), signed, POSTed to an address already checked (`allowedAddresses`), within
 * ATTEMPT_TIMEOUT_MS; the receiver's answer read up to RESPONSE_LIMIT_BYTES.
 */

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const RESPONSE_LIMIT_BYTES = 64 * 1024;
/** What an attempt keeps of the receiver's answer. */
export const RESPONSE_EXCERPT_BYTES = 200;

export interface Outgoing {
  url: string;
  /** The checked address the request connects to (DNS is not asked again between the check and the connection). */
  address: { address: string; family: 4 | 6 };
  body: string;
  headers: Record<string, string>;
  /** A pool of kept-alive connections to `address` alone; none: a connection of its own. */
  agent?: http.Agent | https.Agent;
}

export interface Answer {
  status: number;
  /** The first RESPONSE_LIMIT_BYTES of the body; `truncated` when there was more. */
  body: Buffer;
  truncated: boolean;
}

/** The Standard Webhooks headers: the same `webhook-id` on every attempt of a delivery. */
export function signedHeaders(secret: string, messageId: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}

/** POSTs `body`; resolves with the answer (any status), rejects on a connection error or the timeout. */
export function post({ url, address, body, headers, agent }: Outgoing, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<Answer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  return new Promise((resolve, reject) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const request = client.request(
      target,
      { method: 'POST', lookup: pinned, signal, agent: agent ?? false, headers: { 'content-type': 'application/json', 'user-agent': 'Bosun-Notifications', 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks), truncated });
        response.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = RESPONSE_LIMIT_BYTES - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size = RESPONSE_LIMIT_BYTES;
            truncated = true;
            // The rest is not read: the answer so far is all that is kept.
            response.destroy();
            done();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', done);
        response.on('error', (error) => (truncated ? undefined : reject(error)));
      },
    );
    request.on('error', (error) => reject(signal.aborted ? new Error(`no answer within ${timeoutMs / 1000} s`) : error));
    request.end(body);
  });
}

interface SlackSource {
  type: string;
  summary?: string;
  console_url?: string | null;
  run?: { failed_step?: { name: string; last_lines: string } | null };
}

/** A Slack incoming-webhook message (Block Kit): the summary, for a failure its step's last lines, and a link to the console page. */
export function slackMessage(event: SlackSource & Record<string, unknown>): Record<string, unknown> {
  const summary = event.summary ?? event.type;
  const awaitsApproval = ['run.awaiting_approval', 'run.approval_expiring', 'conversation.awaiting_approval', 'pipeline.awaiting_approval'].includes(event.type);
  const blocks: Record<string, unknown>[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${escapeSlack(summary)}*` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `\`${event.type}\` · ${String(event.at ?? '')}` }] },
  ];
  const failed = event.run?.failed_step;
  if (failed?.last_lines) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `Step *${escapeSlack(failed.name)}*:\n\`\`\`${escapeSlack(failed.last_lines).slice(-2800)}\`\`\`` } });
  if (event.console_url) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: awaitsApproval ? 'Review and approve' : 'Open in Bosun' }, url: event.console_url, ...(awaitsApproval ? { style: 'primary' } : {}) }] });
  }
  return { text: summary, blocks };
}

const escapeSlack = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
