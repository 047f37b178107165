import type { Model } from 'mongoose';
import { DeploymentModel } from '../../domain/deployments/model';
import { PipelineModel } from '../../domain/pipelines/model';
import { ScheduleModel } from '../../domain/schedules/model';
import { FreezeModel } from '../../domain/freezes/model';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../domain/access/model';
import { NotificationChannelModel } from '../../domain/notifications/model';
import { ServerModel } from '../../domain/servers/model';
import type { NameIndex, ReferenceKind } from '../../domain/config/types';

/** One object a plan will create, with the id it gets: documents of the same files may name it. */
export interface PlannedName {
  kind: ReferenceKind;
  name: string;
  id: string;
}

interface NamedRow {
  _id: unknown;
  name?: string | null;
  title?: string | null;
  email?: string | null;
}

/** Where each kind's objects and their names are (Policy is the organization's one: no lookup). */
const sources: Array<[ReferenceKind, Model<never>, Record<string, unknown>, (row: NamedRow) => string | null | undefined]> = [
  ['Deployment', DeploymentModel as never, {}, (row) => row.name],
  ['Pipeline', PipelineModel as never, {}, (row) => row.name],
  ['Schedule', ScheduleModel as never, {}, (row) => row.name],
  ['Freeze', FreezeModel as never, {}, (row) => row.name],
  ['Team', TeamModel as never, {}, (row) => row.name],
  ['ServiceAccount', IdentityModel as never, { type: 'service_account' }, (row) => row.name],
  ['Person', IdentityModel as never, { type: 'person' }, (row) => row.email ?? row.name],
  ['RoleBinding', RoleBindingModel as never, {}, (row) => row.name],
  ['NotificationChannel', NotificationChannelModel as never, {}, (row) => row.name],
  ['Server', ServerModel as never, {}, (row) => row.title],
];

/** Names with their kinds and ids, an organization's or a plan's, in one index. */
export type Names = NameIndex & {
  ambiguous(kind: ReferenceKind, name: string): boolean;
  /** The same names and the planned creations over them (nothing read again). */
  withPlanned(planned: readonly PlannedName[]): Names;
};

type NamedEntry = readonly [ReferenceKind, string, string];

function indexOf(entries: readonly NamedEntry[]): Names {
  const byName = new Map<string, string | null>();
  const byId = new Map<string, string>();
  const key = (kind: ReferenceKind, text: string) => `${kind}\u0000${text}`;
  for (const [kind, name, id] of entries) {
    const k = key(kind, name);
    byName.set(k, byName.has(k) && byName.get(k) !== id ? null : id);
    byId.set(key(kind, id), name);
  }
  return {
    idOf: (kind, name) => byName.get(key(kind, name)) ?? null,
    nameOf: (kind, id) => byId.get(key(kind, id)) ?? null,
    ambiguous: (kind, name) => byName.get(key(kind, name)) === null,
    withPlanned: (planned) => indexOf([...entries, ...planned.map(({ kind, name, id }) => [kind, name, id] as const)]),
  };
}

/**
 * The names an organization's specs may use, read once per plan: every object of every kind, then
 * the planned creations over them. A name two servers share resolves to none (`idOf` null) and
 * `ambiguous` says so, so a plan can tell "no such server" from "two servers have this title".
 */
export async function loadNames(organizationId: string, planned: readonly PlannedName[] = []): Promise<Names> {
  const rows = await Promise.all(
    sources.map(async ([kind, model, filter, nameOf]) => {
      const found = (await model.find({ organization_id: organizationId, ...filter } as never, { name: 1, title: 1, email: 1 }).lean()) as NamedRow[];
      return found.flatMap((row) => {
        const name = nameOf(row);
        return name ? [[kind, name, String(row._id)] as const] : [];
      });
    }),
  );
  return indexOf(rows.flat()).withPlanned(planned);
}
