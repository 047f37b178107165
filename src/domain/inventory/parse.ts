import { parseAnsibleIni } from './ansible-ini';
import { parseAnsibleYaml } from './ansible-yaml';
import { parseSshConfig } from './ssh-config';
import type { InventoryFormat, ParsedInventory } from './inventory';

/** The hosts of an inventory in `format`; throws InventoryParseError (with the line) when any of it cannot be read. */
export function parseInventory(format: InventoryFormat, content: string): ParsedInventory {
  switch (format) {
    case 'ansible-ini':
      return parseAnsibleIni(content);
    case 'ansible-yaml':
      return parseAnsibleYaml(content);
    case 'ssh-config':
      return parseSshConfig(content);
  }
}
