import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';
import { requiredText, text } from '../http/text';


export const MAX_NOTES_LENGTH = 4000;

export const createMigrationPlanSchema = z
  .strictObject({
    title: requiredText('title', 120),
    source_server_id: objectId,
    target_server_id: objectId,
    notes: text('notes', { max: MAX_NOTES_LENGTH }).default(''),
  })
  .refine((plan) => plan.source_server_id.toLowerCase() !== plan.target_server_id.toLowerCase(), {
    path: ['target_server_id'],
    message: 'the target must be another server than the source',
  });

export type CreateMigrationPlanInput = z.infer<typeof createMigrationPlanSchema>;
