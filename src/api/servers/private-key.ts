import { utils as ssh2Utils } from 'ssh2';
import { ApiError } from '../http/errors';

/** A 422 naming the field unless the key parses (and its passphrase decrypts it). */
export function checkPrivateKey(privateKey: string, passphrase: string | undefined) {
  const parsed = ssh2Utils.parseKey(privateKey, passphrase);
  if (!(parsed instanceof Error)) return;
  const encrypted = /encrypted|passphrase/i.test(parsed.message);
  throw new ApiError('validation_failed', 'The request body is invalid', [
    encrypted
      ? { path: 'passphrase', message: passphrase ? 'The passphrase does not decrypt private_key' : 'private_key is encrypted: send its passphrase' }
      : { path: 'private_key', message: 'private_key is not a private key OpenSSH or PEM can read' },
  ]);
}
