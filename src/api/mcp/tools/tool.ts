import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { AgentApi } from '../loopback';

/* What one MCP tool is: its name, what an agent reads of it, the schema of its input, and what it does. */

export interface ToolContext {
  api: AgentApi;
  /** Where a person opens the console (links to approve what an agent asked for). */
  consoleBase: string;
  /** Called around every tool call: the audit trail's entry, and its outcome. */
  audit<T extends CallToolResult>(tool: string, args: Record<string, unknown>, call: () => Promise<T>): Promise<T>;
  /** How `wait` sleeps between reads (tests need not change it). */
  pollMs?: number;
}

export interface BosunTool<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  annotations: ToolAnnotations;
  /** The tool's answer (its structured content), from calls onto Bosun's API as the agent. */
  run(args: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<Record<string, unknown>>;
}

/** A tool, its arguments' type inferred from its schema. */
export const defineTool = <S extends z.ZodRawShape>(tool: BosunTool<S>): BosunTool<S> => tool;

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const ACTS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
