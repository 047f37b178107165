/**
 * Polls until check() returns a value that satisfies done, or fails with the last value seen: how a
 * test waits for a condition instead of sleeping for a time it hopes is long enough.
 */
export async function eventually<T>(check: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await check();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`Condition not met after ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
    last = await check();
  }
  return last;
}
