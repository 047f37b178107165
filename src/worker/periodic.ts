/**
 * Runs `round` now (or first after `everyMs`, with `now: false`) and then `everyMs` after each round ends (never two at once), until stopped. The
 * stop waits for a round in flight: nothing a round calls outlives the connections it uses (a Temporal
 * call sent as Bosun stops would otherwise fail on a closed channel, after Bosun said it had stopped).
 * A round handles its own failures; one that throws anyway is passed to `failed`.
 */
export function periodically(everyMs: number, round: () => Promise<unknown>, failed: (err: unknown) => void, { now = true } = {}): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const wait = () => {
    timer = setTimeout(next, everyMs);
    timer.unref();
  };
  const next = () => {
    current = round()
      .then(() => undefined, failed)
      .finally(() => {
        if (!stopped) wait();
      });
  };
  if (now) next();
  else wait();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await current;
  };
}
