/**
 * Removes secret values from streamed text. The end of a chunk that could be the start of a secret
 * is held back until the next chunk shows whether it is one, so a secret split across chunks is
 * still caught, while ordinary output streams at once.
 */
export class Redactor {
  private readonly secrets: string[];
  private carry = '';

  constructor(secrets: Iterable<string>) {
    // Longest first, so a secret containing another is replaced whole.
    this.secrets = [...new Set([...secrets].filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  }

  /** Length of the longest end of text that some secret starts with. */
  private partialSecretAtEnd(text: string): number {
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, text.length); k > 0; k -= 1) {
        if (secret.startsWith(text.slice(text.length - k))) return k;
      }
    }
    return 0;
  }

  private replace(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('[redacted]');
    return out;
  }

  /** Returns the text that is safe to show now. */
  push(text: string): string {
    if (!this.secrets.length) return text;
    const combined = this.replace(this.carry + text);
    const cut = combined.length - this.partialSecretAtEnd(combined);
    this.carry = combined.slice(cut);
    return combined.slice(0, cut);
  }

  /** The held-back rest, at the end of the stream. */
  flush(): string {
    const rest = this.replace(this.carry);
    this.carry = '';
    return rest;
  }
}

/** A step's output, capped: the first and the last part are kept, and the cut is marked. */
export class CappedOutput {
  private head = '';
  private tail = '';
  private omitted = 0;
  private total = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
    initial = '',
  ) {
    if (initial) this.append(initial);
  }

  append(text: string): void {
    this.total += Buffer.byteLength(text);
    const room = this.headLimit - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.tail += text;
    if (this.tail.length > this.tailLimit) {
      const drop = this.tail.length - this.tailLimit;
      this.omitted += Buffer.byteLength(this.tail.slice(0, drop));
      this.tail = this.tail.slice(drop);
    }
  }

  get bytes(): number {
    return this.total;
  }

  toString(): string {
    return this.omitted ? `${this.head}\n… [${this.omitted} bytes of output omitted] …\n${this.tail}` : this.head + this.tail;
  }
}
