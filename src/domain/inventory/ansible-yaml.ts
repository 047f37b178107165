import { isMap, isScalar, LineCounter, parseDocument, type Node, type YAMLMap } from 'yaml';
import { AnsibleInventory, type Vars } from './ansible-groups';
import { InventoryParseError, type ParsedInventory } from './inventory';

/*
 * Ansible's YAML inventory: groups (usually under `all`) of `hosts`, `vars` and `children`, each
 * child a group in turn. Parsed by `yaml`, whose nodes keep their offsets: errors name their line.
 */

const GROUP_KEYS = new Set(['hosts', 'vars', 'children']);

export function parseAnsibleYaml(content: string): ParsedInventory {
  const lineCounter = new LineCounter();
  const document = parseDocument(content, { lineCounter, uniqueKeys: true });
  const error = document.errors[0];
  if (error) throw new InventoryParseError(error.linePos?.[0].line ?? 1, error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''));
  const lineOf = (node: Node | null | undefined) => (node?.range ? lineCounter.linePos(node.range[0]).line : 1);
  const warnings: string[] = [];
  const inventory = new AnsibleInventory();

  /** A map, or null for an empty value (`web1:`); anything else is an error at `at`. */
  const mapOrEmpty = (value: unknown, at: Node | null | undefined, what: string): YAMLMap | null => {
    if (value === null || value === undefined || (isScalar(value) && (value.value === null || value.value === ''))) return null;
    if (isMap(value)) return value;
    throw new InventoryParseError(lineOf((value as Node | null) ?? at), `${what} must be a mapping`);
  };
  const entries = (map: YAMLMap | null) =>
    (map?.items ?? []).map((pair) => {
      const key = pair.key as Node;
      const name = isScalar(key) ? String(key.value) : null;
      if (name === null) throw new InventoryParseError(lineOf(key), 'a key must be a plain name');
      return { name, key, value: pair.value as Node | null };
    });
  const varsOf = (map: YAMLMap | null): Vars => {
    const vars: Vars = {};
    for (const { name, value } of entries(map)) vars[name] = isScalar(value) ? String(value.value ?? '') : JSON.stringify(value?.toJSON() ?? null);
    return vars;
  };

  const readGroup = (name: string, value: Node | null, at: Node): void => {
    inventory.group(name, lineOf(at));
    for (const { name: key, key: keyNode, value: part } of entries(mapOrEmpty(value, at, `group "${name}"`))) {
      if (!GROUP_KEYS.has(key)) {
        warnings.push(`line ${lineOf(keyNode)}: "${key}" in group "${name}" is not hosts, vars or children: ignored`);
      } else if (key === 'hosts') {
        for (const host of entries(mapOrEmpty(part, keyNode, `hosts of "${name}"`))) {
          inventory.addHosts(name, host.name, varsOf(mapOrEmpty(host.value, host.key, `variables of host "${host.name}"`)), lineOf(host.key));
        }
      } else if (key === 'vars') {
        for (const [k, v] of Object.entries(varsOf(mapOrEmpty(part, keyNode, `vars of "${name}"`)))) inventory.setGroupVar(name, k, v, lineOf(keyNode));
      } else {
        for (const child of entries(mapOrEmpty(part, keyNode, `children of "${name}"`))) {
          inventory.addChild(name, child.name, lineOf(child.key));
          readGroup(child.name, child.value, child.key);
        }
      }
    }
  };

  for (const group of entries(mapOrEmpty(document.contents, null, 'the inventory'))) readGroup(group.name, group.value, group.key);
  return { hosts: inventory.resolve(), warnings };
}
