/** An organization secret's name (`PUT /api/v1/secrets/NAME`, `${secret:NAME}` in config files): letters, digits, underscores. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
