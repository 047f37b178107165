import { DeployExit } from './exit';
import { bosunApiFromEnvironment, errorMessage } from './http';

/*
 * The API calls of the commands that manage things (people, schedules, freezes): one call that must
 * answer a status, every page of a list, an item by its id or name, and an action whose DeployExit
 * becomes the command's exit. A refusal is exit 1 with the API's reason (2 when the token is refused).
 */

export type Json = Record<string, any>;

export const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export const printJson = (value: unknown): void => print(JSON.stringify(value, null, 2));

/** `--param name=value` options as a trigger's parameters. */
export function parseParams(pairs: string[]): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new DeployExit(2, `--param takes name=value (got "${pair}")`);
    parameters[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return parameters;
}

/** One call that must answer `status`; its `data`. */
export async function call(method: string, path: string, status: number, body?: unknown): Promise<Json> {
  const res = await bosunApiFromEnvironment().request(method, path, {}, body);
  if (res.status !== status) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
  return (res.body as Json).data;
}

/** Every item of a list (pages of 100; a list without `meta` is one page). */
export async function all(path: string): Promise<Json[]> {
  const items: Json[] = [];
  for (let page = 1; ; page += 1) {
    const res = await bosunApiFromEnvironment().request('GET', `${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`);
    if (res.status !== 200) throw new DeployExit(res.status === 401 ? 2 : 1, errorMessage(res.body));
    items.push(...((res.body as Json).data as Json[]));
    const meta = (res.body as Json).meta as { last_page?: number } | undefined;
    if (!meta?.last_page || page >= meta.last_page) return items;
  }
}

/** An item named by its id or its (unique) name. */
export async function find(path: string, what: string, idOrName: string): Promise<Json> {
  const found = (await all(path)).filter((item) => item.id === idOrName || item.name === idOrName);
  if (found.length !== 1) throw new DeployExit(found.length ? 2 : 1, found.length ? `More than one ${what} is named "${idOrName}": give its id` : `No ${what} "${idOrName}"`);
  return found[0]!;
}

/** How a command ends with an exit code and a line on stderr (the program's own way of exiting). */
export type Fail = (code: number, message: string) => never;

/** A command's action, its DeployExit becoming the command's exit. */
export const action =
  <A extends unknown[]>(fn: (...args: A) => Promise<void>, fail: Fail) =>
  async (...args: A) => {
    try {
      await fn(...args);
    } catch (error) {
      if (error instanceof DeployExit) fail(error.code, error.message);
      throw error;
    }
  };
