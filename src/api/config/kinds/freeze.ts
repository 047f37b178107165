import { Types } from 'mongoose';
import { FreezeModel, type Freeze } from '../../../domain/freezes/model';
import type { FreezeFields } from '../../../domain/freezes/store';
import { actorOf } from '../../../domain/tokens/service';
import { createFreezeSchema, type CreateFreezeInput } from '../../freezes/schemas';
import { freezeFields, wakeFrozenRuns, type FrozenRunsDeps } from '../../freezes/service';
import { checked, managedByOf, ruleProblems, schemaProblems, type NamedKindAdapter } from './references-b';

/** A freeze's spec: the API's create body without its name (the document's). */
const fileSchema = createFreezeSchema.omit({ name: true });

/** A freeze's fields as files write them: one kind of window's fields only, the create body's order. */
function freezeSpec(fields: FreezeFields): Record<string, unknown> {
  const window = fields.cron ? { cron: fields.cron, duration: fields.duration } : { starts_at: fields.starts_at!.toISOString(), ends_at: fields.ends_at!.toISOString() };
  return { ...window, time_zone: fields.time_zone, tags: fields.tags, note: fields.note };
}

const storedFields = (f: Freeze): FreezeFields => ({
  name: f.name,
  starts_at: f.starts_at ?? null,
  ends_at: f.ends_at ?? null,
  cron: f.cron ?? null,
  duration: f.duration ?? null,
  time_zone: f.time_zone,
  tags: f.tags ? [...f.tags] : null,
  note: f.note ?? null,
});

/** Freezes: a window checked whole by the API's own freezeFields; frozen runs told after an apply changed any. */
export function createFreezeKind(deps: FrozenRunsDeps): NamedKindAdapter {
  return {
    kind: 'Freeze',
    fileSchema,
    nameSchema: createFreezeSchema.shape.name,

    async current(organizationId) {
      const found = await FreezeModel.find({ organization_id: new Types.ObjectId(organizationId) }).sort({ name: 1 }).lean<Freeze[]>();
      return found.map((f) => ({ id: f._id.toString(), name: f.name, spec: freezeSpec(storedFields(f)), managed_by: managedByOf(f.managed_by) }));
    },

    async check(spec) {
      const parsed = fileSchema.safeParse(spec);
      if (!parsed.success) return checked(schemaProblems(parsed.error), () => ({}));
      try {
        const fields = freezeFields({ ...parsed.data, name: 'checked' } as CreateFreezeInput, null);
        return checked([], () => freezeSpec(fields));
      } catch (error) {
        return checked(ruleProblems(error), () => ({}));
      }
    },

    async write(context, object) {
      const fields = freezeFields({ ...fileSchema.parse(object.spec), name: object.name } as CreateFreezeInput, null);
      const by = actorOf(context.principal);
      const organization_id = new Types.ObjectId(context.organizationId);
      if (!object.existing) {
        await FreezeModel.create([{ _id: new Types.ObjectId(object.id), organization_id, ...fields, created_by: by, updated_by: by, managed_by: object.managed_by }], { session: context.session });
        return;
      }
      await FreezeModel.updateOne({ _id: new Types.ObjectId(object.id), organization_id }, { $set: { ...fields, updated_by: by, managed_by: object.managed_by } }, { session: context.session });
    },

    async remove(context, id) {
      await FreezeModel.deleteOne({ _id: new Types.ObjectId(id), organization_id: new Types.ObjectId(context.organizationId) }, { session: context.session });
    },

    // The API deletes a freeze whatever runs wait on it: the waiting runs then go on.
    pruneBlocker: async () => null,

    async afterApply(organizationId, changed) {
      if (changed.written.length || changed.removed.length) await wakeFrozenRuns(deps, organizationId);
    },
  };
}
