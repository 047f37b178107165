import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';
import { requiredText } from '../http/text';
import { CHATABLE_TYPES } from '../../domain/conversations/model';

/** The longest instruction accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 2000;

const message = requiredText('message', MAX_MESSAGE_LENGTH);

export const startConversationSchema = z.strictObject({
  chatable_type: z.enum(CHATABLE_TYPES, { message: 'chatable_type must be "server" or "migration_plan"' }),
  chatable_id: objectId,
  message,
  require_approval: z.boolean().default(false),
});

export const followUpSchema = z.strictObject({ message });

export const conversationListQuerySchema = z.object({
  chatable_type: z.enum(CHATABLE_TYPES, { message: 'chatable_type must be "server" or "migration_plan"' }).optional(),
  chatable_id: objectId.optional(),
});

export type StartConversationInput = z.infer<typeof startConversationSchema>;
