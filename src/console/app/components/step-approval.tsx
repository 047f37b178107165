// The controls of a conversation's step that waits for a person: approve or reject it.
import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Conversation, ConversationStep } from '../api-types';
import { session } from '../session';
import { ErrorNote } from './common';

/**
 * A waiting step's decision: Approve and run / Reject for a person who may write conversations;
 * anyone else (a service account — CI, an AI agent) is told a person must decide.
 */
export function StepApproval({ step, number, conversationId, onChanged }: { step: ConversationStep; number: number; conversationId: string; onChanged: (c: Conversation) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  if (!session.can('conversations:write') || session.get()?.identity.type !== 'person') {
    return <p class="warning">Waits for a person with the conversations:write scope to approve or reject it (a service account cannot).</p>;
  }

  const decide = async (action: 'approve' | 'reject') => {
    setBusy(true);
    setError(null);
    try {
      onChanged((await api<{ data: Conversation }>('POST', `/api/v1/conversations/${conversationId}/steps/${step.id}/${action}`)).data);
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="approval" role="group" aria-label={`Decide on step ${number}`}>
      <p>
        This step waits for a person: it is <strong>{step.risk}</strong>. Read the command above before deciding.
      </p>
      <button type="button" class="primary" disabled={busy} onClick={() => void decide('approve')}>
        Approve and run
      </button>{' '}
      <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
        Reject
      </button>
      <ErrorNote error={error} />
    </div>
  );
}
