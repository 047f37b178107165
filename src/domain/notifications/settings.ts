import type { Types } from 'mongoose';
import { OrganizationModel } from '../organizations/model';

/** An organization's notification settings: loopback and private receivers allowed unless refused. */
export interface NotificationSettings {
  refuse_private_addresses: boolean;
}

export async function notificationSettings(organizationId: string | Types.ObjectId): Promise<NotificationSettings> {
  const organization = await OrganizationModel.findById(organizationId, { notification_settings: 1 }).lean();
  return { refuse_private_addresses: organization?.notification_settings?.refuse_private_addresses ?? false };
}

export async function setNotificationSettings(organizationId: string, settings: NotificationSettings): Promise<NotificationSettings> {
  await OrganizationModel.updateOne({ _id: organizationId }, { $set: { notification_settings: settings } });
  return notificationSettings(organizationId);
}
