/*
 * An inventory as Bosun reads it, whatever its format: hosts by their inventory name, with the
 * address, port, user, groups and jump hosts the file gives them, and the line each was declared on.
 */

export const INVENTORY_FORMATS = ['ansible-ini', 'ansible-yaml', 'ssh-config'] as const;
export type InventoryFormat = (typeof INVENTORY_FORMATS)[number];

export interface InventoryHost {
  /** The host's name in the inventory: the server's title. */
  name: string;
  /** Where to connect (ansible_host / HostName); the name itself when not given. */
  host: string;
  port?: number;
  username?: string;
  /** Every group the host belongs to, its groups' parents included (never `all` or `ungrouped`). */
  groups: string[];
  /** Jump hosts by name, in hop order (ProxyJump / `-J`). */
  via: string[];
  /** 1-based line the host is declared on. */
  line: number;
}

export interface ParsedInventory {
  hosts: InventoryHost[];
  /** What was read but not used (an Include, a Match block…), with its line. */
  warnings: string[];
}

/** The file cannot be read as its format: nothing of it is used. */
export class InventoryParseError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'InventoryParseError';
  }
}
