/**
 * `work` on every item, at most `lanes` at a time: each lane takes the next item as soon as it is free,
 * so items start in their order. `index` is the item's place in `items`.
 */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}
