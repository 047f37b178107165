import type { KindAdapter } from '../../../domain/config/types';

/** Every kind's adapter, in the order an apply writes them (what others reference first). */
export const CONFIG_ADAPTERS: readonly KindAdapter[] = [];

/** A plan's or apply's body at most: the files whole (each at most 5 MiB, checked by the files layer). */
export const CONFIG_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
