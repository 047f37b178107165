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

  /** Length of the longest end of text that any secret starts with. */
  private partialSecretAtEnd(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      // The leftmost start that fits is this secret's longest; only starts that would beat `longest` matter.
      for (let i = Math.max(0, text.length - (secret.length - 1)); i < text.length - longest; i += 1) {
        if (text.charCodeAt(i) === secret.charCodeAt(0) && secret.startsWith(text.slice(i))) {
          longest = text.length - i;
          break;
        }
      }
    }
    return longest;
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

const isContinuationByte = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * A step's output, capped in bytes (UTF-8, as stored): the first and the last part are kept, the
 * cut is marked, and no character is split.
 */
export class CappedOutput {
  private head = '';
  private headBytes = 0;
  private headFull = false;
  private tail: Buffer = Buffer.alloc(0);
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
    let bytes = Buffer.from(text, 'utf8');
    this.total += bytes.length;
    if (!this.headFull) {
      const room = this.headLimit - this.headBytes;
      if (bytes.length <= room) {
        this.head += text;
        this.headBytes += bytes.length;
        return;
      }
      let cut = room;
      while (cut > 0 && isContinuationByte(bytes[cut])) cut -= 1;
      this.head += bytes.subarray(0, cut).toString('utf8');
      this.headBytes += cut;
      this.headFull = true;
      bytes = bytes.subarray(cut);
    }
    this.tail = Buffer.concat([this.tail, bytes]);
    if (this.tail.length > this.tailLimit) {
      const drop = this.tail.length - this.tailLimit;
      this.omitted += drop;
      this.tail = this.tail.subarray(drop);
    }
  }

  get bytes(): number {
    return this.total;
  }

  /** Nothing was cut: `toString()` is all of it. */
  get whole(): boolean {
    return this.omitted === 0;
  }

  toString(): string {
    // The cut may have left the tail starting inside a character: drop those bytes too.
    let skip = 0;
    while (this.omitted && isContinuationByte(this.tail[skip])) skip += 1;
    const tail = this.tail.subarray(skip).toString('utf8');
    const omitted = this.omitted + skip;
    return omitted ? `${this.head}\n… [${omitted} bytes of output omitted] …\n${tail}` : this.head + tail;
  }
}
