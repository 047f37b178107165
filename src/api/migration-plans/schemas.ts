import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';


export const MAX_NOTES_LENGTH = 4000;

export const createMigrationPlanSchema = z
  .strictObject({
    title: z.string().trim().min(1, 'title is required').max(120),
    source_server_id: objectId,
    target_server_id: objectId,
    notes: z.string().max(MAX_NOTES_LENGTH, `notes must be at most ${MAX_NOTES_LENGTH} characters`).default(''),
  })
  .refine((plan) => plan.source_server_id.toLowerCase() !== plan.target_server_id.toLowerCase(), {
    path: ['target_server_id'],
    message: 'the target must be another server than the source',
  });

export type CreateMigrationPlanInput = z.infer<typeof createMigrationPlanSchema>;
