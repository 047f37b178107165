import type { Request } from 'express';
import { recordAuditEvent } from '../../domain/audit/pending-entries';
import type { AuditActor } from '../../domain/audit/model';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';

/*
 * Sign-ins to the console in the audit trail: each sign-in, each refused one whose organization is
 * known (a real token revoked, expired or disabled; any OpenID Connect sign-in, in OIDC_ORGANIZATION),
 * and each sign-out. A token that matches nothing names no organization: it is refused, rate-limited
 * per address and logged, never filed in someone's trail.
 */

export interface SignInRecord {
  organizationId: string;
  actor: AuditActor;
  outcome: string;
  method: 'token' | 'oidc';
  details?: Record<string, unknown>;
  action?: 'session.sign_in' | 'session.sign_out';
  target?: { kind: string; id: string | null };
}

export const principalActor = (principal: Principal, sessionId: string | null): AuditActor => ({
  type: principal.identity.type,
  id: principal.identity.id,
  name: principal.identity.name,
  token_id: principal.tokenId,
  session_id: sessionId,
});

/** One sign-in (or refusal, or sign-out) entry; a failure to record it is logged and does not refuse the person. */
export async function recordSignIn(req: Request, log: Logger, record: SignInRecord): Promise<void> {
  await recordAuditEvent(
    {
      organizationId: record.organizationId,
      actor: record.actor,
      sourceAddress: req.ip ?? null,
      action: record.action ?? 'session.sign_in',
      target: record.target ?? { kind: 'session', id: record.actor.session_id ?? null },
      details: { method: record.method, ...record.details },
    },
    record.outcome,
  ).catch((err: Error) => log.error({ err: err.message }, 'could not record a sign-in in the audit trail'));
}
