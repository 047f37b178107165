import type { Model } from 'mongoose';
import { z } from 'zod';
import { wholeNumber } from './whole-numbers';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 12;

export const pageQuerySchema = z.object({
  page: wholeNumber('page', { min: 1 }).default(1),
  per_page: wholeNumber('per_page', { min: 1, max: MAX_PER_PAGE }).default(DEFAULT_PER_PAGE),
});

export type PageQuery = z.infer<typeof pageQuerySchema>;

export const pageMetaSchema = z
  .object({
    current_page: z.number().int().min(1),
    per_page: z.number().int().min(1).max(MAX_PER_PAGE),
    total: z.number().int().min(0),
    last_page: z.number().int().min(1),
  })
  .meta({ id: 'PageMeta', description: 'Where this page lies: a page past the end is empty with the same meta.' });

export type PageMeta = z.infer<typeof pageMetaSchema>;

/** The list envelope's schema: one page of `item`s in `data`, and `meta`. */
export const pageOf = <Item extends z.ZodType>(item: Item) => z.object({ data: z.array(item), meta: pageMetaSchema });

export function pageMeta({ page, per_page }: PageQuery, total: number): PageMeta {
  return { current_page: page, per_page, total, last_page: Math.max(1, Math.ceil(total / per_page)) };
}

const skipFor = ({ page, per_page }: PageQuery) => (page - 1) * per_page;

/**
 * One page of a collection in the list envelope: `data` (each through `view`, which may ask
 * something more of each) and `meta`. Newest first unless `sort` says otherwise.
 */
export async function findPage<Doc, View>(
  model: Model<any>,
  filter: Record<string, unknown>,
  page: PageQuery,
  view: (doc: Doc) => View | Promise<View>,
  sort: Record<string, 1 | -1> = { createdAt: -1, _id: -1 },
  /** The fields read of each document (all when absent). */
  projection?: Record<string, 0 | 1>,
): Promise<{ data: View[]; meta: PageMeta }> {
  const [total, docs] = await Promise.all([model.countDocuments(filter), model.find(filter, projection).sort(sort).skip(skipFor(page)).limit(page.per_page).lean<Doc[]>()]);
  return { data: await Promise.all(docs.map(view)), meta: pageMeta(page, total) };
}
