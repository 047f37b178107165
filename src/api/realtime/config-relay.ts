import { AuditEntryModel } from '../../domain/audit/model';
import { changeShaped, type ChangeListener } from '../../domain/change-streams';
import { ConfigSourceModel } from '../../domain/config-sources/model';

/*
 * `ConfigChanged` (docs/events.md): what the console's Config page and a managed definition's page
 * show changed — an apply (by any path: the API, the CLI, a source's sync), a source made, changed,
 * deleted or synced, a managed definition changed by force. Heard on the API's one change stream:
 * the trail's entries (written for every path, once the change is done) and the sources' own status.
 */

/** Trail entries of a change to what is kept in Git; `details.force` marks a change that overrode a source. */
const CONFIG_ACTIONS = ['config.apply', 'config.create', 'config.update', 'config.delete', 'config_source.create', 'config_source.update', 'config_source.delete'];

/** A burst of changes (an apply of 500 documents: 501 entries) is told once, then once more after it. */
export const CONFIG_CHANGED_QUIET_MS = 250;

/** Calls `told(organization)` at most once per quiet period per organization, and once after a period in which more came. */
function coalesced(told: (organizationId: string) => void, quietMs: number) {
  const waiting = new Map<string, { again: boolean }>();
  const tell = (organizationId: string) => {
    const open = waiting.get(organizationId);
    if (open) {
      open.again = true;
      return;
    }
    told(organizationId);
    const period = { again: false };
    waiting.set(organizationId, period);
    setTimeout(() => {
      waiting.delete(organizationId);
      if (period.again) tell(organizationId);
    }, quietMs).unref();
  };
  return tell;
}

const organizationOf = (change: unknown) => {
  const id = (change as { fullDocument?: { organization_id?: unknown } }).fullDocument?.organization_id;
  return id ? String(id) : null;
};

/** The listeners (one per collection, each shaping what it is given) whose changes tell an organization its config changed. */
export function configRelay(organizationConfigChanged: (organizationId: string) => void, quietMs = CONFIG_CHANGED_QUIET_MS): ChangeListener[] {
  const tell = coalesced(organizationConfigChanged, quietMs);
  const onChange = (change: unknown) => {
    const organization = organizationOf(change);
    if (organization) tell(organization);
  };
  return [
    {
      collections: [AuditEntryModel.collection.collectionName],
      match: {
        operationType: 'insert',
        'fullDocument.outcome': 'ok',
        $or: [{ 'fullDocument.action': { $in: CONFIG_ACTIONS } }, { 'fullDocument.details.force': true }],
      },
      shape: changeShaped({ organization_id: '$fullDocument.organization_id' }),
      onChange,
    },
    {
      // Its status (a sync began, applied, failed, found drift): the post-image names its organization. A delete is the trail's.
      collections: [ConfigSourceModel.collection.collectionName],
      shape: changeShaped({ organization_id: '$fullDocument.organization_id' }),
      onChange,
    },
  ];
}
