"""OAuth 2.1 resource-server mode (`--oauth-issuer`, `--oauth-resource`): token checks, the
caller's principal, RFC 9728 metadata (specs/oauth.md, "The server"; decision 33)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from ...exposure import checked_url, parse_tool_scopes
from .config import HttpConfig
from .errors import TokenRefused, error_response, refusal

if TYPE_CHECKING:
    from .issuer_keys import IssuerKeys

# PyJWT and the cryptography package under it (issuer_keys.py) take some 60 ms to import:
# loaded only by a server given --oauth-issuer, when its ResourceServer is made.

METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
#: Seconds of clock difference forgiven between us and the issuer (exp, nbf, iat).
LEEWAY_SECONDS: Final = 30


@dataclass(frozen=True)
class Grant:
    """What a checked access token grants: who (issuer and subject), and which scopes."""

    issuer: str
    subject: str
    scopes: frozenset[str]
    #: The token's `exp` (seconds since the epoch): an operator login lasts no longer.
    expires: float | None = None

    @property
    def principal(self) -> str:
        """The caller's fingerprint (hex, like a static token's digest, never the token)."""
        return hashlib.sha256(f"oauth\n{self.issuer}\n{self.subject}".encode()).hexdigest()


GRANT_KEY: Final = web.RequestKey("codex_mcp_oauth_grant", Grant)


def _scopes_of(claims: dict[str, Any]) -> frozenset[str]:
    """`scope` (RFC 8693/9068: space-separated) or `scp` (a list, or a string)."""
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(str(each) for each in value)
    return frozenset()


def _quoted(text: str) -> str:
    """A value safe inside a quoted-string of WWW-Authenticate: printable ASCII, no
    backslash, double quotes made single."""
    return "".join(c if " " <= c <= "~" and c != "\\" else "?" for c in text).replace('"', "'")


class ResourceServer:
    def __init__(self, config: HttpConfig) -> None:
        # The settings were checked when the HttpConfig was made (exposure.check_oauth).
        issuer = config.oauth_issuer or ""
        self.issuer = issuer
        self.scopes = frozenset(scope for entry in config.oauth_scope for scope in entry.split())
        #: Only to offer their scopes in the metadata; the policy requires them.
        self.tool_rules = parse_tool_scopes(list(config.oauth_tool_scope))
        from .issuer_keys import IssuerKeys

        self.keys: IssuerKeys = IssuerKeys(issuer)
        self.metadata_paths: list[str] = []
        self.use_resource(config.oauth_resource or f"http://127.0.0.1{config.prefix}/mcp")
        #: On loopback without --oauth-resource, the URL the server turns out to listen on
        #: (its port may be chosen at start): see `use_resource`.
        self.resource_from_listener = not config.oauth_resource

    def use_resource(self, value: str) -> None:
        """This server's resource URI (the audience its tokens must name), and from it
        where its metadata is: the root form and the one suffixed with the resource's
        path (RFC 9728, section 3.1), which is the one a 401 names."""
        resource = checked_url(value, "--oauth-resource")
        path = resource.path.rstrip("/")
        self.resource = value
        self.metadata_url = str(resource.with_path(METADATA_PATH + path))
        self.metadata_paths = sorted({METADATA_PATH, METADATA_PATH + path})

    def add_routes(self, app: web.Application) -> None:
        for path in self.metadata_paths:
            app.router.add_get(path, self._metadata)

    async def close(self) -> None:
        await self.keys.close()

    def is_metadata(self, request: web.Request) -> bool:
        return request.path in self.metadata_paths

    def metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        }
        offered = self.scopes.union(*(scopes for _, scopes in self.tool_rules))
        if offered:
            document["scopes_supported"] = sorted(offered)
        return document

    async def _metadata(self, request: web.Request) -> web.Response:
        return web.json_response(self.metadata(), headers={"Cache-Control": "max-age=300"})

    # -- tokens ------------------------------------------------------------------
    async def authenticate(self, token: str) -> Grant:
        """The grant of a valid token. Raises TokenRefused."""
        import jwt

        from .errors import IssuerUnreachable, UnknownKey
        from .issuer_keys import ALGORITHMS, shown

        # Whatever the caller sent is refused here, each way with its reason: a JWT is
        # ASCII; its header a JSON object (depth bounded by the parser's recursion limit)
        # whose alg and kid are strings (PyJWT checks kid), with no `crit` extension
        # (RFC 7515, 4.1.11: we understand none, so a token needing one is refused).
        if not token.isascii():
            raise TokenRefused("the bearer token is not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except (jwt.InvalidTokenError, RecursionError):
            raise TokenRefused("the bearer token is not a JWT") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise TokenRefused(f"tokens signed with {shown(algorithm)} are not accepted")
        if "crit" in header:
            raise TokenRefused("the token needs header extensions (crit) this server does not know")
        kid = header.get("kid")
        try:
            key = await self.keys.key(kid if isinstance(kid, str) else None, algorithm)
        except UnknownKey as error:
            raise TokenRefused(f"invalid token: {error}") from None
        except IssuerUnreachable as error:
            raise TokenRefused(f"cannot check tokens now: {error}", status=503) from None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.resource,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRefused("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise TokenRefused(f"the token is not for this resource ({self.resource})") from None
        except jwt.InvalidIssuerError:
            raise TokenRefused(f"the token is not from {self.issuer}") from None
        except jwt.MissingRequiredClaimError as error:
            raise TokenRefused(f"the token has no {error.claim!r} claim") from None
        except jwt.InvalidTokenError as error:
            raise TokenRefused(f"invalid token: {shown(str(error))}") from None
        except RecursionError:  # claims nested past the parser's limit
            raise TokenRefused("invalid token: its claims are nested too deep") from None
        expires = claims["exp"]  # checked by PyJWT: int() of it is a time not yet past
        return Grant(self.issuer, str(claims["sub"]), _scopes_of(claims), float(int(expires)))

    def missing_for(self, grant: Grant, message: Any) -> frozenset[str]:
        """The server's own scopes the grant lacks (a tool's are the policy's: admission.py
        asks it, policy/decide.py)."""
        return frozenset(self.scopes - grant.scopes)

    # -- answers -----------------------------------------------------------------
    def unauthorized(
        self, message: str, status: int = 401, token_given: bool = True
    ) -> web.Response:
        if status != 401:  # the issuer is unreachable: not the client's fault
            unreachable = error_response(status, message, headers={"Retry-After": "5"})
            return refusal(unreachable, "issuer_unreachable")
        challenge = f'Bearer resource_metadata="{self.metadata_url}"'
        if self.scopes:
            challenge += f', scope="{" ".join(sorted(self.scopes))}"'
        if token_given:
            challenge += f', error="invalid_token", error_description="{_quoted(message)}"'
        response = error_response(401, message, headers={"WWW-Authenticate": challenge})
        return refusal(response, "wrong_credential" if token_given else "no_credential")

    def insufficient_scope(
        self, grant: Grant, missing: frozenset[str], request_id: Any = None
    ) -> web.Response:
        """403 naming every scope the request needs (those held too, so a client that
        authorizes again for exactly these loses nothing)."""
        wanted = " ".join(sorted(grant.scopes | missing))
        message = f"this request needs the scope {' '.join(sorted(missing))}"
        challenge = (
            f'Bearer error="insufficient_scope", scope="{wanted}", '
            f'resource_metadata="{self.metadata_url}", error_description="{message}"'
        )
        response = error_response(
            403, message, request_id=request_id, headers={"WWW-Authenticate": challenge}
        )
        return refusal(response, "scope")


RESOURCE_SERVER_KEY: Final = web.AppKey("oauth_resource_server", ResourceServer)
