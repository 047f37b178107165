import { Types } from 'mongoose';
import { ConversationModel } from '../../src/domain/conversations/model';
import { ServerModel } from '../../src/domain/servers/model';

/** The ids schemathesis is given for read, change and trigger operations, so those reach real data. */
export interface Seeded {
  serverIds: string[];
  deploymentId: string;
  runId: string;
  conversationId: string;
  stepId: string;
  planId: string;
  /** A token for the fuzzer to revoke (not its own). */
  tokenId: string;
}

/**
 * Data for the fuzzer to find: servers, a deployment with a queued run, a conversation, a migration
 * plan, a secret, a token to revoke. What a worker would write is written here (no worker runs, so
 * nothing the fuzzer sends is ever executed anywhere): one server verified, so triggers and
 * conversations are accepted, and a step already approved, so decisions reach their checks (a pending
 * one would get the 503 of a decision no worker takes, tested in
 * test/conversations/decisions-without-workers.test.ts).
 */
export async function seed(api: string, token: string): Promise<Seeded> {
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`seeding: ${method} ${path} answered ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const server = (title: string, port: number) =>
    call('POST', '/servers', { title, host: '127.0.0.1', port, username: 'deploy', auth_method: 'password', password: 'fuzz-password' });

  const source = (await server('fuzz-source', 1)).data.id as string;
  const target = (await server('fuzz-target', 2)).data.id as string;
  await ServerModel.updateOne(
    { _id: source },
    {
      $set: {
        status: 'verified',
        host_key_fingerprint: 'SHA256:fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz',
        fingerprint: { os: { name: 'Debian GNU/Linux', version: '12', kernel: '6.1.0' }, cpu_cores: 2, ram: '4 GiB', disk: '40 GiB' },
        verified_at: new Date(),
      },
    },
  );
  const deploymentId = (await call('POST', '/deployments', { name: 'fuzz-release', server_id: source, steps: [{ name: 'hello', command: 'echo hello' }] })).data.id as string;
  const runId = (await call('POST', `/deployments/${deploymentId}/run`)).run_id as string;
  const conversationId = (await call('POST', '/conversations', { chatable_type: 'server', chatable_id: source, message: 'show disk usage' })).data.id as string;
  const planId = (await call('POST', '/migration-plans', { title: 'fuzz-move', source_server_id: source, target_server_id: target })).data.id as string;
  await call('PUT', '/secrets/FUZZ_SECRET', { value: 'fuzz-secret-value' });
  const tokenId = (await call('POST', '/tokens', { name: 'fuzz-revocable', scopes: ['read'] })).data.id as string;
  const stepId = new Types.ObjectId();
  const conversation = await ConversationModel.findById(conversationId).orFail();
  await ConversationModel.updateOne(
    { _id: conversationId },
    {
      $set: { 'messages.0.planned': true },
      $push: {
        steps: {
          _id: stepId, message_id: conversation.messages[0]!._id, title: 'Disk usage', command: 'df -h', target: 'server',
          server_id: new Types.ObjectId(source), risk: 'read', status: 'pending', created_at: new Date(),
          approval: { decision: 'approved', decided_by: 'fuzz', decided_at: new Date() },
        },
      },
      $inc: { seq: 1 },
    },
  );
  return { serverIds: [source, target], deploymentId, runId, conversationId, stepId: stepId.toString(), planId, tokenId };
}
