/*
 * `${secret:NAME}`: how a definition kept in Git names a value that must stay secret (an organization
 * secret, PUT /api/v1/secrets/NAME). It is stored as written and resolved only where it is used.
 */

const SECRET_REFERENCE = /^\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;

/** The secret a `${secret:NAME}` names, or null when the value is not such a reference. */
export const secretNameOf = (value: string): string | null => SECRET_REFERENCE.exec(value)?.[1] ?? null;
