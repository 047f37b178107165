import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';
import { requiredText } from '../http/text';
import { CHATABLE_TYPES } from '../../domain/conversations/model';

/** The longest instruction accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 2000;

const message = requiredText('message', MAX_MESSAGE_LENGTH);

/** Commands one conversation may be given to run as they are. */
export const MAX_LITERAL_COMMANDS = 30;

export const startConversationSchema = z
  .strictObject({
    chatable_type: z.enum(CHATABLE_TYPES, { message: 'chatable_type must be "server" or "migration_plan"' }),
    chatable_id: objectId,
    message,
    require_approval: z.boolean().default(false),
    commands: z
      .array(requiredText('command', MAX_MESSAGE_LENGTH))
      .min(1, { message: 'commands needs at least one command' })
      .max(MAX_LITERAL_COMMANDS, { message: `at most ${MAX_LITERAL_COMMANDS} commands` })
      .optional()
      .describe('Commands to run as they are, one step each, instead of planning `message` (which then says why they run); each is judged by the command policy'),
  })
  .refine((body) => !body.commands || body.chatable_type === 'server', { message: 'commands are for a conversation about a server', path: ['commands'] });

export const followUpSchema = z.strictObject({ message });

export const conversationListQuerySchema = z.object({
  chatable_type: z.enum(CHATABLE_TYPES, { message: 'chatable_type must be "server" or "migration_plan"' }).optional(),
  chatable_id: objectId.optional(),
});

export type StartConversationInput = z.infer<typeof startConversationSchema>;
