import { getMaxListeners, setMaxListeners } from 'node:events';
import type { Context } from '@temporalio/activity';

/**
 * Calls one activity may make at once through activityClientCall, each holding a listener on its
 * signal while it runs (the notification drain hands subjects over 16 at a time): beyond Node's 10
 * that is no leak, and Node's warning that it might be one would only mislead whoever reads the log.
 */
const CALLS_AT_ONCE = 64;

/**
 * A Temporal client call of a long activity, cancelled with the activity. The SDK ties every client
 * call made inside an activity to the activity's cancellation signal with a listener it never removes
 * (@temporalio/client's Connection, `abortSignal.addEventListener('abort', () => call.cancel())`): over
 * a notification drain's minutes, one per signal sent would pile up on that one signal, each holding
 * its finished call. So each call gets a signal of its own, which goes with the call, and the activity's
 * signal only holds a listener while the call runs.
 */
export async function activityClientCall<T>(context: Context, call: () => Promise<T>): Promise<T> {
  const own = new AbortController();
  const abort = () => own.abort(context.cancellationSignal.reason);
  if (getMaxListeners(context.cancellationSignal) < CALLS_AT_ONCE) setMaxListeners(CALLS_AT_ONCE, context.cancellationSignal);
  if (context.cancellationSignal.aborted) abort();
  else context.cancellationSignal.addEventListener('abort', abort, { once: true });
  try {
    return await context.client.withAbortSignal(own.signal, call);
  } finally {
    context.cancellationSignal.removeEventListener('abort', abort);
  }
}
