import { DeployExit } from './exit';
import { errorMessage, type BosunApi } from './http';

const OBJECT_ID = /^[0-9a-f]{24}$/i;

/**
 * A thing of a list (`/deployments`, `/pipelines`) named by its name (unique in an organization) or
 * its id. A token that may not list them (no `read` scope) can still name one by id; a ref that is
 * one's id and another's name is refused as ambiguous.
 */
async function resolveByName(api: BosunApi, what: string, list: string, ref: string): Promise<string> {
  const byName: string[] = [];
  let byId = false;
  for (let page = 1; ; page += 1) {
    const res = await api.request('GET', `${list}?per_page=100&page=${page}`);
    if (res.status === 403 && OBJECT_ID.test(ref)) return ref;
    if (res.status === 403) throw new DeployExit(2, `Naming a ${what} by its name takes a token with the read scope (it lists the ${what}s); give its id instead`);
    if (res.status !== 200) throw new DeployExit(2, `Could not list ${what}s: ${errorMessage(res.body)}`);
    for (const d of res.body.data as Array<{ id: string; name: string }>) {
      if (d.name === ref) byName.push(d.id);
      if (d.id === ref) byId = true;
    }
    const meta = res.body.meta as { last_page?: number } | undefined;
    if (!meta?.last_page || page >= meta.last_page) break;
  }
  if (byName.length === 1 && byId) throw new DeployExit(2, `"${ref}" is one ${what}'s id and another's name (${byName[0]}): give the id of the one you mean`);
  if (byName.length === 1) return byName[0]!;
  if (byId || OBJECT_ID.test(ref)) return ref;
  throw new DeployExit(2, `No ${what} named "${ref}" (nor with that id) in this token's organization`);
}

export const resolveDeployment = (api: BosunApi, ref: string) => resolveByName(api, 'deployment', '/deployments', ref);

export const resolvePipeline = (api: BosunApi, ref: string) => resolveByName(api, 'pipeline', '/pipelines', ref);
