// A real OpenID provider for the sign-in tests: panva's oidc-provider (certified by the OpenID
// Foundation), run as a child process because it is an ES module the tests' CommonJS cannot load.
// Its settings arrive as JSON in OIDC_TEST_SETTINGS; it prints {"issuer": ...} once it listens.
import Provider from 'oidc-provider';

const { port, clients, accounts, clockSkewSeconds = 0, idTokenTtlSeconds = 3600 } = JSON.parse(process.env.OIDC_TEST_SETTINGS ?? '{}');

// A provider whose clock is clockSkewSeconds off Bosun's (behind when negative): every time it stamps on a token moves.
if (clockSkewSeconds) {
  const realNow = Date.now;
  Date.now = () => realNow() + clockSkewSeconds * 1000;
}

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients,
  // Any login name is an account (the dev interactions' form); its claims are the settings' for that name.
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({ sub, ...(accounts[sub] ?? {}) }),
  }),
  claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  pkce: { required: () => true },
  cookies: { keys: ['oidc-test-cookie-key'] },
  ttl: { IdToken: idTokenTtlSeconds },
});
// Quieter test logs: the dev interactions' warning says what the test already knows.
provider.on('server_error', (_ctx, error) => process.stderr.write(`server_error: ${error.stack}\n`));

provider.listen(port, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ issuer })}\n`));
