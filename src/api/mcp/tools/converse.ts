import { answered, conversationLink, query, Refused } from './bosun-api';
import type { ToolContext } from './tool';

/* run_commands and ask: one conversation on each server a call reaches (one named, or every one having the tags, within the agent's limit). */

/** The most servers one `run_commands` or `ask` may reach, whatever the bindings allow. */
export const MAX_TARGETS_PER_CALL = 50;

/** The servers a command or instruction goes to: one named, or every server having all the tags (within the agent's limit). */
export async function targets({ api }: ToolContext, input: { server_id?: string; tags?: string[] }): Promise<string[]> {
  if (!!input.server_id === !!input.tags) throw new Refused({ status: 422, code: 'validation_failed', message: 'Give either server_id or tags (not both)' });
  if (input.server_id) return [input.server_id];
  const found: string[] = [];
  for (let page = 1; ; page += 1) {
    const listed = answered(await api.call('GET', `/servers${query({ tag: input.tags, per_page: 100, page })}`));
    found.push(...(listed.data as Array<{ id: string }>).map((s) => s.id));
    if (page >= ((listed.meta as { last_page?: number }).last_page ?? 1)) break;
  }
  if (!found.length) throw new Refused({ status: 404, code: 'not_found', message: `No server you may see has the tags ${input.tags!.join(', ')}` });
  // The blast radius: the smallest `max_targets_per_run` of the agent's role bindings caps one call.
  const me = answered(await api.call('GET', '/me')).data as { bindings: Array<{ max_targets_per_run: number | null }> };
  const limits = me.bindings.map((b) => b.max_targets_per_run).filter((n): n is number => typeof n === 'number');
  const limit = Math.min(MAX_TARGETS_PER_CALL, ...limits);
  if (found.length > limit) {
    throw new Refused({
      status: 403,
      code: 'forbidden',
      message: `${found.length} servers have these tags; you may reach at most ${limit} per call (${limits.length ? 'max_targets_per_run of your role bindings' : 'Bosun\'s limit for agents'}): nothing was started. Narrow the tags or name one server.`,
    });
  }
  return found;
}

/** One conversation per server; each answer says where it stands. */
export async function converse(context: ToolContext, servers: string[], body: { message: string; commands?: string[] }) {
  const started: Array<Record<string, unknown>> = [];
  for (const serverId of servers) {
    const answer = await context.api.call('POST', '/conversations', { chatable_type: 'server', chatable_id: serverId, ...body });
    if (answer.status === 201) {
      const created = answer.body.data as { id: string; status: string };
      started.push({ server_id: serverId, conversation_id: created.id, status: created.status, console_url: conversationLink(context, created.id) });
    } else {
      const error = (answer.body.error ?? {}) as { code?: string; message?: string };
      started.push({ server_id: serverId, refused: { status: answer.status, code: error.code ?? `http_${answer.status}`, message: error.message ?? '' } });
    }
  }
  if (started.every((s) => s.refused) && started.length === 1) throw new Refused(started[0]!.refused as Refused['answer']);
  return {
    conversations: started,
    next: 'Steps are judged by the organization\'s command policy: `read` steps run; `change` and `destructive` steps wait for a person\'s approval (open console_url), or are refused. Use wait, then get_conversation.',
  };
}
