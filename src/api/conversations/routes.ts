import { sendStepLog } from '../logs/step-log';
import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { conversationListQuerySchema, followUpSchema, startConversationSchema } from './schemas';
import type { ConversationService } from './service';
import { cameThroughAgentDoor } from '../mcp/agent-door';

export function conversationRoutes(conversations: ConversationService): Router {
  const router = Router();
  const id = (req: { params: Record<string, string | string[] | undefined> }, name = 'id') => req.params[name] as string;

  router.post('/', requireAction('conversations:write'), async (req, res) => {
    const created = await conversations.start(principalOf(req), validate(startConversationSchema, req.body), { viaAgentDoor: cameThroughAgentDoor(req) });
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/', requireAction('read'), async (req, res) => {
    const { page, per_page, ...filter } = req.query;
    const pageQuery = validate(pageQuerySchema, { page, per_page }, 'query');
    res.json(await conversations.list(principalOf(req), validate(conversationListQuerySchema, filter, 'query'), pageQuery));
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await conversations.get(principalOf(req), id(req)) });
  });

  router.get('/:id/steps/:stepId/log', requireAction('read'), async (req, res) => {
    await sendStepLog(req, res, await conversations.stepLogOf(principalOf(req), id(req), id(req, 'stepId')));
  });

  router.post('/:id/messages', requireAction('conversations:write'), async (req, res) => {
    const { message } = validate(followUpSchema, req.body);
    res.status(202).json({ data: await conversations.followUp(principalOf(req), id(req), message, { viaAgentDoor: cameThroughAgentDoor(req) }) });
  });

  router.post('/:id/cancel', requireAction('conversations:write'), async (req, res) => {
    res.status(202).json({ data: await conversations.cancel(principalOf(req), id(req)) });
  });

  for (const [action, approved] of [['approve', true], ['reject', false]] as const) {
    router.post(`/:id/steps/:stepId/${action}`, requireAction('conversations:write'), async (req, res) => {
      res.status(202).json({ data: await conversations.decide(principalOf(req), id(req), id(req, 'stepId'), approved) });
    });
  }

  return router;
}
