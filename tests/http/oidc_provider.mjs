// An OpenID-certified authorization server for the client login tests: panva's oidc-provider
// (npm, installed by .ci/node-tools.sh into .tools/oidc-provider) on 127.0.0.1, set up as the
// OAuth 2.1 authorization server of one MCP resource server, through its documented
// configuration only:
// - dynamic client registration (RFC 7591), PKCE required, refresh tokens rotated;
// - resource indicators (RFC 8707): the MCP resource is the only one it issues tokens for;
//   its access tokens are JWTs (RS256, keys at the JWKS URL) with `aud` = the resource and the
//   resource's scopes `mcp` and `echo.use`;
// - the development interactions (a login form, then a consent form: plain HTML forms the
//   test's browser stand-in posts).
//
//   node oidc_provider.mjs <oidc-provider's lib/index.js> <resource URL> <access token TTL s>
//       [refresh]
//
// `refresh`: "any" (the default) issues a refresh token to every client allowed the grant;
// "oidc-core" keeps oidc-provider's own rule (only for offline_access, which OpenID Connect
// Core section 11 honours only with prompt=consent).
//
// Prints {"issuer": URL} once it listens, then one JSON line per token endpoint request:
// {"grant": {"grant_type", "resource", "scope", "error"?}} (what the client sent, and the
// refusal if any). Ends when stdin closes.
//
// The http://127.0.0.1 issuer: oidc-provider takes any web URI as issuer (its https
// requirement is a deployment matter); its cookies are not `secure` unless the request was.
import { createServer } from "node:http";

const [, , lib, resource, ttl, refresh = "any"] = process.argv;
const { default: Provider, errors } = await import(lib);

const http = createServer();
await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${http.address().port}`;

const provider = new Provider(issuer, {
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A request naming no resource gets none (no JWT for nobody); one naming another
      // resource is refused (invalid_target).
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return {
          scope: "mcp echo.use",
          audience: resource,
          accessTokenTTL: Number(ttl),
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
  ...(refresh === "any"
    ? { issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token") }
    : {}),
  rotateRefreshToken: () => true,
  pkce: { required: () => true },
  scopes: ["openid", "offline_access"],
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  ttl: {
    AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? Number(ttl),
    RefreshToken: 3600,
    Grant: 3600,
    Session: 3600,
    Interaction: 600,
    AuthorizationCode: 60,
  },
});

function report(ctx, error) {
  if (ctx.path !== "/token") return;
  const params = ctx.oidc?.params ?? {};
  const grant = {
    grant_type: params.grant_type ?? null,
    resource: params.resource ?? null,
    scope: params.scope ?? null,
  };
  if (error) grant.error = `${error.error ?? error.name}: ${error.error_description ?? ""}`;
  console.log(JSON.stringify({ grant }));
}
provider.on("grant.success", (ctx) => report(ctx));
provider.on("grant.error", (ctx, error) => report(ctx, error));

http.on("request", provider.callback());
console.log(JSON.stringify({ issuer }));
process.stdin.resume();
process.stdin.on("end", () => http.close(() => process.exit(0)));
