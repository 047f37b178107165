import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import type { SecretBox } from './secret-box';

/** A value an organization marks as secret: redacted from every step's output before it is stored or sent. */
const organizationSecretSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    name: { type: String, required: true },
    value: { type: String, required: true, select: false },
  },
  { timestamps: true },
);
organizationSecretSchema.index({ organization_id: 1, name: 1 }, { unique: true });

export type OrganizationSecret = InferSchemaType<typeof organizationSecretSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export const OrganizationSecretModel = model('OrganizationSecret', organizationSecretSchema);

export const secretAssociatedData = (organizationId: string, name: string) => `secret:${organizationId}:${name}`;

/** Every secret value of an organization, decrypted, for redaction. */
export async function organizationSecretValues(organizationId: string, box: SecretBox): Promise<string[]> {
  return openSecrets(await OrganizationSecretModel.find({ organization_id: organizationId }).select('+value').lean(), organizationId, box);
}

/** The values of an organization's secret documents (read with their sealed values), decrypted. */
export const openSecrets = (secrets: ReadonlyArray<Pick<OrganizationSecret, 'name' | 'value'>>, organizationId: string, box: SecretBox): string[] =>
  secrets.map((s) => box.decrypt(s.value, secretAssociatedData(organizationId, s.name)));
