import { z } from 'zod';
import { timestampSchema } from '../http/timestamps';

export const secretSchema = z.object({ name: z.string(), updated_at: timestampSchema }).meta({ id: 'Secret', description: 'A secret’s name; its value is never shown' });

export const toSecretView = (s: { name: string; updatedAt: Date }): z.infer<typeof secretSchema> => ({ name: s.name, updated_at: s.updatedAt.toISOString() });
