import { Types } from 'mongoose';
import type { Actor } from '../access/actor';
import { FreezeModel, type Freeze } from './model';

/*
 * The freezes store: every write to a freeze. A freeze's fields are checked by the API before they
 * get here (a whole window, a valid cron and zone); the store keeps the name unique per organization
 * (a duplicate-key error the API answers 409) and records who wrote.
 */

/** What a freeze is made of, as written. */
export interface FreezeFields {
  name: string;
  starts_at: Date | null;
  ends_at: Date | null;
  cron: string | null;
  duration: string | null;
  time_zone: string;
  tags: string[] | null;
  note: string | null;
}

const org = (organizationId: string) => new Types.ObjectId(organizationId);

export async function createFreeze(organizationId: string, fields: FreezeFields, by: Actor): Promise<Freeze> {
  const created = await FreezeModel.create({ organization_id: org(organizationId), ...fields, created_by: by, updated_by: by });
  return created.toObject() as Freeze;
}

export const findFreeze = (organizationId: string, id: Types.ObjectId) => FreezeModel.findOne({ _id: id, organization_id: org(organizationId) }).lean<Freeze>();

export const listFreezes = (organizationId: string) => FreezeModel.find({ organization_id: org(organizationId) }).sort({ name: 1 }).lean<Freeze[]>();

/** The freeze as changed (every field given replaced), or null when it is not the organization's; `forced`: who forced a change to a managed one. */
export const updateFreeze = (organizationId: string, id: Types.ObjectId, fields: FreezeFields, by: Actor, forced: Record<string, Date | string> = {}) =>
  FreezeModel.findOneAndUpdate({ _id: id, organization_id: org(organizationId) }, { $set: { ...fields, updated_by: by, ...forced } }, { returnDocument: 'after' }).lean<Freeze>();

/** False when it is not the organization's. */
export async function deleteFreeze(organizationId: string, id: Types.ObjectId): Promise<boolean> {
  return (await FreezeModel.deleteOne({ _id: id, organization_id: org(organizationId) })).deletedCount === 1;
}
