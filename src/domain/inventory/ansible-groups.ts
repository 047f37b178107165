import { expandHostPattern } from './host-ranges';
import { hopsInSshArgs } from './jump-hosts';
import { InventoryParseError, type InventoryHost } from './inventory';

/*
 * Ansible's inventory semantics, shared by its INI and YAML forms: groups with hosts, vars and
 * children (a host of a child group is in its parents too); a host's variables are `all`'s, then
 * its groups' from the outermost to the innermost, then its own (later ones win).
 */

export type Vars = Record<string, string>;

interface Group {
  hosts: Set<string>;
  vars: Vars;
  children: Set<string>;
}

interface HostEntry {
  vars: Vars;
  line: number;
  /** Lines its variables were given on, for errors about them. */
  varLines: Record<string, number>;
}

const GROUP_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const IMPLICIT_GROUPS = new Set(['all', 'ungrouped']);

export class AnsibleInventory {
  private readonly groups = new Map<string, Group>();
  private readonly hosts = new Map<string, HostEntry>();

  group(name: string, line: number): Group {
    if (!GROUP_NAME.test(name)) throw new InventoryParseError(line, `"${name}" is not a group name (letters, digits, _ . -)`);
    let group = this.groups.get(name);
    if (!group) this.groups.set(name, (group = { hosts: new Set(), vars: {}, children: new Set() }));
    return group;
  }

  /** A host line of `group`: its pattern (ranges expanded, `name:port` understood) and variables. */
  addHosts(groupName: string, pattern: string, vars: Vars, line: number): void {
    const group = this.group(groupName, line);
    const [, name = pattern, port] = /^(.+?):(\d+)$/.exec(pattern) ?? [];
    let names: string[];
    try {
      names = expandHostPattern(name);
    } catch (error) {
      throw new InventoryParseError(line, (error as Error).message);
    }
    const own = port === undefined ? vars : { ansible_port: port, ...vars };
    for (const host of names) {
      group.hosts.add(host);
      const entry = this.hosts.get(host) ?? { vars: {}, line, varLines: {} };
      Object.assign(entry.vars, own);
      for (const key of Object.keys(own)) entry.varLines[key] = line;
      this.hosts.set(host, entry);
    }
  }

  setGroupVar(groupName: string, key: string, value: string, line: number): void {
    this.group(groupName, line).vars[key] = value;
  }

  addChild(parent: string, child: string, line: number): void {
    if (parent === child) throw new InventoryParseError(line, `group "${parent}" cannot be its own child`);
    this.group(child, line);
    this.group(parent, line).children.add(child);
  }

  /** Every host with its groups and variables applied. */
  resolve(): InventoryHost[] {
    const parents = new Map<string, Set<string>>();
    for (const [name, group] of this.groups) for (const child of group.children) parents.set(child, (parents.get(child) ?? new Set()).add(name));
    const ancestry = new Map<string, string[]>();
    /** A group and every group above it, outermost first. */
    const lineage = (name: string, seen: Set<string> = new Set()): string[] => {
      const known = ancestry.get(name);
      if (known) return known;
      if (seen.has(name)) return [];
      seen.add(name);
      const above = [...(parents.get(name) ?? [])].flatMap((p) => lineage(p, seen));
      const result = [...new Set([...above, name])];
      ancestry.set(name, result);
      return result;
    };
    const direct = new Map<string, string[]>();
    for (const [name, group] of this.groups) for (const host of group.hosts) direct.set(host, [...(direct.get(host) ?? []), name]);

    return [...this.hosts].map(([name, entry]) => {
      const groups = [...new Set((direct.get(name) ?? []).flatMap((g) => lineage(g)))];
      const vars: Vars = { ...this.groups.get('all')?.vars };
      for (const g of groups) if (g !== 'all') Object.assign(vars, this.groups.get(g)!.vars);
      Object.assign(vars, entry.vars);
      return toHost(name, vars, groups.filter((g) => !IMPLICIT_GROUPS.has(g)), entry);
    });
  }
}

function toHost(name: string, vars: Vars, groups: string[], entry: HostEntry): InventoryHost {
  const lineOf = (key: string) => entry.varLines[key] ?? entry.line;
  const first = (...keys: string[]) => keys.find((k) => vars[k] !== undefined && vars[k] !== '');
  const portKey = first('ansible_port', 'ansible_ssh_port');
  const port = portKey ? Number(vars[portKey]) : undefined;
  if (portKey && (!Number.isInteger(port) || port! < 1 || port! > 65535)) {
    throw new InventoryParseError(lineOf(portKey), `${portKey} of ${name} is "${vars[portKey]}", not a port (1 to 65535)`);
  }
  const hostKey = first('ansible_host', 'ansible_ssh_host');
  const userKey = first('ansible_user', 'ansible_ssh_user');
  const argsKey = first('ansible_ssh_common_args', 'ansible_ssh_extra_args');
  let via: string[] = [];
  try {
    via = argsKey ? hopsInSshArgs(vars[argsKey]!) : [];
  } catch (error) {
    throw new InventoryParseError(lineOf(argsKey!), `${argsKey} of ${name}: ${(error as Error).message}`);
  }
  return {
    name,
    host: hostKey ? vars[hostKey]! : name,
    ...(port !== undefined ? { port } : {}),
    ...(userKey ? { username: vars[userKey] } : {}),
    groups,
    via,
    line: entry.line,
  };
}
