import { z } from 'zod';

/** A run's or a conversation's `temporal_ui_url`, present only when TEMPORAL_UI_URL is set. */
export const temporalUiUrlSchema = z.url().optional().describe('The workflow’s page in the Temporal Web UI; only when TEMPORAL_UI_URL is set');
