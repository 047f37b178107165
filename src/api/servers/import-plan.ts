import type { Types } from 'mongoose';
import type { InventoryHost } from '../../domain/inventory/inventory';
import { QUARANTINE_TAG } from '../../domain/servers/quarantine';
import { ApiError } from '../http/errors';
import { MAX_TAGS, serverAddressSchema, tagSchema } from './schemas';

/*
 * An import's diff: each inventory host matched to the server an earlier import of the same source
 * made of it (by inventory name), or else to a server added by hand at the same user@host:port
 * (adopted; or one of that source the inventory renamed), or else to be added; servers of that source the inventory no longer lists are missing.
 */

/** What the plan needs of an existing server. */
export interface KnownServer {
  _id: Types.ObjectId;
  title: string;
  host: string;
  port: number;
  username: string;
  tags: string[];
  inventory?: { source: string; name: string; tags: string[]; via?: string[] } | null;
}

/** A host as it would be in Bosun. */
export interface DesiredServer {
  title: string;
  host: string;
  port: number;
  username: string;
  /** The tags the import gives it (its groups' and the defaults'). */
  importTags: string[];
  via: string[];
  line: number;
}

export interface PlannedChange {
  server: KnownServer;
  desired: DesiredServer;
  tags: string[];
  fields: Record<string, { from: unknown; to: unknown }>;
}

export interface ImportPlan {
  add: Array<DesiredServer & { tags: string[] }>;
  change: PlannedChange[];
  unchanged: Array<{ server: KnownServer; desired: DesiredServer }>;
  missing: KnownServer[];
  warnings: string[];
}

const invalid = (line: number, message: string) => new ApiError('validation_failed', `The inventory cannot be imported: line ${line}: ${message}`, [{ path: 'content', message: `line ${line}: ${message}` }]);
const addressOf = (s: { username: string; host: string; port: number }) => `${s.username}@${s.host}:${s.port}`;
const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Each host as a server: its user (or the default), port 22 unless given, its groups as tags (those that are tag words). */
function desiredServers(hosts: InventoryHost[], defaults: { username?: string; tags?: string[] }, warnings: string[]): DesiredServer[] {
  const refusedGroups = new Set<string>();
  const byAddress = new Map<string, DesiredServer>();
  return hosts.map((h) => {
    const username = h.username ?? defaults.username;
    if (!username) throw invalid(h.line, `${h.name} has no user: give ansible_user (or User), or defaults.username`);
    const parsed = serverAddressSchema.safeParse({ title: h.name, host: h.host, port: h.port ?? 22, username });
    if (!parsed.success) throw invalid(h.line, `${h.name}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const groupTags = h.groups.map((g) => g.toLowerCase()).filter((tag) => {
      const ok = tag !== QUARANTINE_TAG && tagSchema.safeParse(tag).success;
      if (!ok && !refusedGroups.has(tag)) {
        refusedGroups.add(tag);
        warnings.push(`line ${h.line}: group "${tag}" is not a tag word (lowercase letters, digits and . _ : -, not "${QUARANTINE_TAG}"): no tag for it`);
      }
      return ok;
    });
    const importTags = [...new Set([...(defaults.tags ?? []), ...groupTags])];
    const desired = { ...parsed.data, importTags, via: h.via, line: h.line };
    const twin = byAddress.get(addressOf(desired));
    if (twin) throw invalid(h.line, `${h.name} is ${addressOf(desired)}, as ${twin.title} (line ${twin.line}) is: one server cannot be two hosts`);
    byAddress.set(addressOf(desired), desired);
    if (h.via.includes(h.name)) throw invalid(h.line, `${h.name} cannot be its own jump host`);
    return desired;
  });
}

/** A re-import replaces the tags the last import gave, keeping those a person added; at most MAX_TAGS. */
function mergedTags(server: KnownServer | null, desired: DesiredServer, warnings: string[]): string[] {
  const previous = server?.inventory?.tags ?? [];
  const kept = (server?.tags ?? []).filter((t) => !previous.includes(t));
  const tags = [...new Set([...kept, ...desired.importTags])];
  if (tags.length <= MAX_TAGS) return tags;
  warnings.push(`line ${desired.line}: ${desired.title} would have ${tags.length} tags: only the first ${MAX_TAGS} are kept`);
  return tags.slice(0, MAX_TAGS);
}

export function planImport(source: string, hosts: InventoryHost[], defaults: { username?: string; tags?: string[] }, known: KnownServer[], warnings: string[]): ImportPlan {
  const desired = desiredServers(hosts, defaults, warnings);
  const fromSource = new Map(known.filter((s) => s.inventory?.source === source).map((s) => [s.inventory!.name, s]));
  const byAddress = new Map(known.map((s) => [addressOf(s), s]));
  const plan: ImportPlan = { add: [], change: [], unchanged: [], missing: [], warnings };
  const matched = new Set<string>();

  const names = new Set(desired.map((d) => d.title));
  for (const d of desired) {
    const holder = byAddress.get(addressOf(d));
    // At this address: a server added by hand (adopted), or one of this source renamed in the inventory.
    const takeable = holder && (!holder.inventory || (holder.inventory.source === source && !names.has(holder.inventory.name))) ? holder : null;
    const server = fromSource.get(d.title) ?? takeable;
    if (holder && holder !== server) {
      throw new ApiError('conflict', `line ${d.line}: ${d.title} is ${addressOf(d)}, already the server "${holder.title}"${holder.inventory ? ` (imported from ${holder.inventory.source})` : ''}`);
    }
    if (server?.tags.includes(QUARANTINE_TAG)) warnings.push(`line ${d.line}: ${d.title} is quarantined: it stays so until the tag is removed (PATCH its tags)`);
    if (!server) {
      plan.add.push({ ...d, tags: mergedTags(null, d, warnings) });
      continue;
    }
    matched.add(server._id.toString());
    const tags = mergedTags(server, d, warnings);
    const fields: PlannedChange['fields'] = {};
    for (const key of ['host', 'port', 'username'] as const) if (server[key] !== d[key]) fields[key] = { from: server[key], to: d[key] };
    if (!sameSet(server.tags, tags)) fields.tags = { from: server.tags, to: tags };
    const via = server.inventory?.via ?? [];
    if (!sameList(via, d.via)) fields.via = { from: via, to: d.via };
    if (server !== fromSource.get(d.title) && server.title !== d.title) fields.title = { from: server.title, to: d.title };
    if (server.inventory?.source !== source) fields.inventory = { from: null, to: { source, name: d.title } };
    if (Object.keys(fields).length) plan.change.push({ server, desired: d, tags, fields });
    else plan.unchanged.push({ server, desired: d });
  }
  plan.missing = [...fromSource.values()].filter((s) => !matched.has(s._id.toString()));
  return plan;
}
