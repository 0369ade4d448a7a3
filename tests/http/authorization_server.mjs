// A real authorization server for the resource-server tests: oauth2-mock-server (npm,
// installed by .ci/node-tools.sh) on 127.0.0.1, set up through its documented events only.
// It signs JWT access tokens with RS256 keys it publishes at its JWKS URL, and serves
// OpenID discovery, the authorization endpoint (PKCE) and the token endpoint.
//
//   node authorization_server.mjs <path to oauth2-mock-server's dist/index.mjs>
//
// Prints one JSON line {"issuer": URL} once it listens. What the events add, because the
// mock leaves it out:
// - RFC 8707: an access token's `aud` is the `resource` the client asked for (at the
//   authorization endpoint, or the token endpoint), else the `aud` it sent;
// - the scope the user authorized goes into the token (the mock writes "dummy");
// - a client credentials token's subject is the client's id;
// - a client whose id starts with "expired" gets tokens that expired two minutes ago.
// A line "rotate" on stdin adds a new key and signs the next token with it; the reply is
// {"rotated": KID}.
import readline from "node:readline";

const { OAuth2Server } = await import(process.argv[2]);

const server = new OAuth2Server();
let keys = 1;
await server.issuer.keys.generate("RS256", { kid: `key-${keys}` });
const authorized = new Map(); // code -> {scope, resource}

function clientOf(req) {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
  if (basic) return decodeURIComponent(Buffer.from(basic[1], "base64").toString().split(":")[0]);
  return req.body?.client_id;
}

server.service.on("beforeAuthorizeRedirect", (redirect, req) => {
  const code = redirect.url.searchParams.get("code");
  if (code) authorized.set(code, { scope: req.query.scope, resource: req.query.resource });
});

server.service.on("beforeTokenSigning", (token, req) => {
  const body = req.body ?? {};
  const grant = body.code !== undefined ? authorized.get(body.code) : undefined;
  const payload = token.payload;
  if (!("scope" in payload)) return; // the ID token (its audience is the client)
  const audience = body.resource ?? grant?.resource ?? body.aud;
  if (audience !== undefined) payload.aud = audience;
  if (grant?.scope !== undefined) payload.scope = grant.scope;
  const client = clientOf(req);
  if (body.grant_type === "client_credentials" && client) payload.sub = client;
  if (client?.startsWith("expired")) {
    payload.exp = payload.iat - 120;
    payload.nbf = payload.iat - 180;
  }
});

server.service.on("beforeResponse", (response, req) => {
  const grant = req.body?.code !== undefined ? authorized.get(req.body.code) : undefined;
  if (grant?.scope !== undefined) response.body.scope = grant.scope;
});

await server.start(0, "127.0.0.1");
server.issuer.url = `http://127.0.0.1:${server.address().port}`; // not "localhost"
console.log(JSON.stringify({ issuer: server.issuer.url }));

readline.createInterface({ input: process.stdin }).on("line", async (line) => {
  if (line.trim() !== "rotate") return;
  const old = `key-${keys}`;
  keys += 1;
  const kid = `key-${keys}`;
  await server.issuer.keys.generate("RS256", { kid });
  server.issuer.keys.get(old); // the old key goes to the back: the next token uses the new one
  console.log(JSON.stringify({ rotated: kid }));
});
process.stdin.on("end", () => server.stop().then(() => process.exit(0)));
