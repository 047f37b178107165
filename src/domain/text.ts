/** The text, or its first max - 1 characters and an ellipsis: what fits in a one-line summary. */
export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
