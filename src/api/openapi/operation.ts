import { z } from 'zod';
import type { ErrorCode } from '../http/errors';
import { objectIdSchema } from '../http/ids';
import type { Scope } from '../../domain/access/scopes';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Parameter {
  schema: z.ZodType;
  description: string;
  required?: boolean;
}

export interface ResponseSpec {
  description: string;
  /** The body; none for 204. */
  body?: z.ZodType;
  /** Of the body; application/json unless said. */
  contentType?: string;
  /** The same answer in other media types, by type (a step's log as text/plain). */
  alternatives?: Record<string, z.ZodType>;
  headers?: Record<string, Parameter>;
}

/**
 * One route as the OpenAPI document describes it, built from the zod schemas the route validates with.
 * `path` is spelled as Express spells it (`/api/v1/servers/:id`), so a test can hold it against the router.
 */
export interface Operation {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * What the route requires: an action (a token scope of the same name) some role binding of the
   * caller grants for what the request touches; `any`: authentication alone; null: no API token.
   */
  scope: Scope | 'any' | null;
  /** The action must be granted for the whole organization (people, tokens, settings), not for some servers. */
  everywhere?: boolean;
  /** Security requirements of a route without an API token (none unless given). */
  security?: Array<Record<string, string[]>>;
  params?: Record<string, Parameter>;
  query?: z.ZodObject;
  headers?: Record<string, Parameter>;
  body?: { schema: z.ZodType; required: boolean };
  responses: Record<number, ResponseSpec>;
  /** Failures besides those of every authenticated route (401, 403, 429) and of every write's body (400, 413, 415, 422). */
  errors: ErrorCode[];
  /**
   * What the route refuses (422) although the schema allows it: the rules no JSON Schema can state
   * (a private key that parses, a server that exists), named in the 422's description.
   */
  beyondSchema?: string[];
}

export const idParam = (what: string): Parameter => ({ schema: objectIdSchema, description: `The ${what}’s id` });

/** A single resource's envelope. */
export const dataOf = <Item extends z.ZodType>(item: Item) => z.object({ data: item });

export const locationHeader = (what: string): Record<string, Parameter> => ({
  Location: { schema: z.string(), description: `The path of the new ${what}`, required: true },
});
