import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';

/**
 * AES-256-GCM encryption of secrets at rest. The associated data binds a ciphertext to the record it
 * belongs to, so a ciphertext copied onto another record does not decrypt.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The master key must be 32 bytes');
    this.key = key;
  }

  encrypt(plaintext: string, associatedData: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64'), tag.toString('base64'), body.toString('base64')].join(':');
  }

  /** A keyed digest (HMAC-SHA256) of `text` for `purpose`: equal texts compare equal, and nobody without the key can guess them from it. */
  digest(text: string, purpose: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\0${text}`).digest('base64url');
  }

  decrypt(sealed: string, associatedData: string): string {
    const [version, iv, tag, body] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('Unrecognised secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

/** Accepts 32 bytes as 64 hex characters or as base64. */
export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) {
    throw new Error('BOSUN_SECRET_KEY must be 32 bytes, as 64 hex characters or base64 (try: openssl rand -base64 32)');
  }
  return key;
}

/** The master key from BOSUN_SECRET_KEY, or else from <home>/secret.key, generated (mode 0600) on first use. */
export function loadMasterKey(configured: string | undefined, home: string): { key: Buffer; source: string } {
  if (configured) return { key: parseMasterKey(configured), source: 'BOSUN_SECRET_KEY' };
  const file = path.join(home, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(home, { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another Bosun process created it between the check and the write: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  chmodSync(file, 0o600);
  return { key: parseMasterKey(readFileSync(file, 'utf8')), source: file };
}
