import * as client from 'openid-client';
import type { OidcConfig } from '../../config';
import type { OidcClaims } from '../../domain/access/oidc-people';

// A provider's metadata is looked up again after this long, so the sign-in page learns soon that it went down (or came back).
const METADATA_KEPT_MS = 5_000;
const DISCOVERY_TIMEOUT_SECONDS = 5;

export interface Authorization {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * The console's OpenID Connect client: openid-client (certified by the OpenID Foundation) does every
 * check (issuer, audience, signature, expiry within its clock tolerance, state, nonce, PKCE); this
 * module only says what to expect.
 */
export function oidcClient(settings: OidcConfig) {
  let discovered: { at: number; configuration: Promise<client.Configuration> } | undefined;
  const issuer = new URL(settings.issuerUrl);
  const clientAuth = settings.clientSecret ? client.ClientSecretBasic(settings.clientSecret) : client.None();

  /** The provider's metadata, kept a few seconds; a failed discovery is kept as long, so a dead provider is not asked on every page load. */
  const configuration = () => {
    if (!discovered || Date.now() - discovered.at > METADATA_KEPT_MS) {
      const configuration = client.discovery(issuer, settings.clientId, undefined, clientAuth, {
        // Plain http is allowed by the configuration only to a provider on this machine.
        execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
        timeout: DISCOVERY_TIMEOUT_SECONDS,
      });
      configuration.catch(() => undefined);
      discovered = { at: Date.now(), configuration };
    }
    return discovered.configuration;
  };

  return {
    displayName: settings.displayName,

    async reachable(): Promise<boolean> {
      return configuration().then(
        () => true,
        () => false,
      );
    },

    /** Where to send the browser: the code flow with PKCE (S256), a state and a nonce. */
    async authorization(redirectUri: string): Promise<Authorization> {
      const config = await configuration();
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: settings.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url, state, nonce, codeVerifier };
    },

    /** The callback's code exchanged and its ID token checked; the person's claims, with their groups from userinfo when the ID token has none. */
    async claims(callbackUrl: URL, expected: { state: string; nonce: string; codeVerifier: string }): Promise<OidcClaims> {
      const config = await configuration();
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      let claims: Record<string, unknown> = idToken;
      if (!(settings.groupsClaim in idToken) && config.serverMetadata().userinfo_endpoint) {
        claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idToken.sub)), ...idToken };
      }
      const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);
      const groups = claims[settings.groupsClaim];
      return {
        subject: idToken.sub,
        name: text(claims.preferred_username) ?? text(claims.name),
        email: text(claims.email),
        groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : typeof groups === 'string' ? [groups] : [],
      };
    },
  };
}

export type OidcClient = ReturnType<typeof oidcClient>;
