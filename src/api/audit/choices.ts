import { z } from 'zod';
import { IdentityModel } from '../../domain/access/model';
import { ServerModel } from '../../domain/servers/model';
import type { Operation } from '../openapi/operation';
import { routeAction } from './actions';
import { recordedRoutes } from './recorder';

/** The actions no route names: Bosun's commands and decisions, ticks, sign-ins, agents' tool calls (docs/audit.md). */
const ACTIONS_OF_NO_ROUTE = [
  'command.run',
  'schedule.tick',
  'session.sign_in',
  'session.sign_out',
  'mcp.tool_call',
  'run.fail_orphaned',
  'run.expire_gate',
  'run.rollback',
  'run.finish_rollback',
  'run.hold_frozen',
  'run.release_frozen',
];

/** How many actors and servers the choices hold at most: a filter box offers names, it is no directory. */
export const MAX_CHOICES = 1000;

export const auditChoicesSchema = z
  .object({
    actors: z.array(z.object({ type: z.enum(['person', 'service_account']), id: z.string(), name: z.string() })).describe(`The organization’s people and service accounts, by name (at most ${MAX_CHOICES})`),
    servers: z.array(z.object({ id: z.string(), name: z.string() })).describe(`The organization’s servers, by title (at most ${MAX_CHOICES})`),
    actions: z.array(z.string()).describe('Every action the trail records, sorted'),
  })
  .meta({ id: 'AuditChoices' });

/** Every action the trail can hold: each recorded route's (as the recorder names them) and those no route names. */
export function knownActions(operations: readonly Operation[]): string[] {
  const recorded = recordedRoutes(operations);
  const routes = operations.map((op) => `${op.method.toUpperCase()} ${op.path}`).filter(recorded);
  return [...new Set([...routes.map((route) => routeAction(route).action), ...ACTIONS_OF_NO_ROUTE])].sort();
}

/** What the trail's filters offer an organization's auditor: who may have acted, the servers, the actions. */
export async function auditChoices(organizationId: string, actions: string[]): Promise<z.infer<typeof auditChoicesSchema>> {
  const [identities, servers] = await Promise.all([
    IdentityModel.find({ organization_id: organizationId }, { type: 1, name: 1 }).sort({ name: 1 }).limit(MAX_CHOICES).lean(),
    ServerModel.find({ organization_id: organizationId }, { title: 1 }).sort({ title: 1 }).limit(MAX_CHOICES).lean(),
  ]);
  return {
    actors: identities.map((identity) => ({ type: identity.type as 'person' | 'service_account', id: String(identity._id), name: identity.name })),
    servers: servers.map((server) => ({ id: String(server._id), name: server.title })),
    actions,
  };
}
