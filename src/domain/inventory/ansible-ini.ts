import { AnsibleInventory, type Vars } from './ansible-groups';
import { shellWords } from './shell-words';
import { InventoryParseError, type ParsedInventory } from './inventory';

/*
 * Ansible's INI inventory. Its host lines (`web[01:03] ansible_user=deploy`) are not INI key=value
 * pairs, so it is read line by line here, as Ansible's own ini plugin does, keeping each line's number.
 */

const SECTION = /^\[([^\]]+)\]\s*$/;

function words(line: string, number: number): string[] {
  try {
    return shellWords(line);
  } catch (error) {
    throw new InventoryParseError(number, (error as Error).message);
  }
}

function keyValues(tokens: string[], number: number): Vars {
  const vars: Vars = {};
  for (const token of tokens) {
    const at = token.indexOf('=');
    if (at < 1) throw new InventoryParseError(number, `"${token}" is not a variable (name=value)`);
    vars[token.slice(0, at)] = token.slice(at + 1);
  }
  return vars;
}

export function parseAnsibleIni(content: string): ParsedInventory {
  const inventory = new AnsibleInventory();
  let group = 'ungrouped';
  let kind: 'hosts' | 'vars' | 'children' = 'hosts';
  content.split(/\r?\n/).forEach((raw, index) => {
    const number = index + 1;
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) return;
    const section = SECTION.exec(line);
    if (section) {
      const [name = '', suffix, extra] = section[1]!.split(':');
      if (extra !== undefined || (suffix !== undefined && suffix !== 'vars' && suffix !== 'children')) {
        throw new InventoryParseError(number, `[${section[1]}] is not a section Ansible knows ([group], [group:vars] or [group:children])`);
      }
      inventory.group(name, number);
      [group, kind] = [name, suffix ?? 'hosts'];
      return;
    }
    if (line.startsWith('[')) throw new InventoryParseError(number, 'a section header must be [name], alone on its line');
    if (kind === 'vars') {
      const at = line.indexOf('=');
      if (at < 1) throw new InventoryParseError(number, `"${line}" is not a variable (name=value) of [${group}:vars]`);
      const value = words(line.slice(at + 1), number).join(' ');
      inventory.setGroupVar(group, line.slice(0, at).trim(), value, number);
    } else if (kind === 'children') {
      const [child, ...rest] = words(line, number);
      if (!child || rest.length) throw new InventoryParseError(number, `"${line}" is not a group name of [${group}:children]`);
      inventory.addChild(group, child, number);
    } else {
      const [pattern, ...vars] = words(line, number);
      if (pattern) inventory.addHosts(group, pattern, keyValues(vars, number), number);
    }
  });
  return { hosts: inventory.resolve(), warnings: [] };
}
