//! OAuth 2.1 resource-server settings (HTTP, the `oauth` feature): what `Server::oauth`
//! collects, and the scopes an operation needs. The transport (`transport/http/auth`) validates
//! tokens and answers the challenges; dispatch checks the scopes again before a handler runs.

#[cfg(feature = "oauth")]
use std::borrow::Cow;
#[cfg(feature = "oauth")]
use std::time::Duration;

#[cfg(feature = "oauth")]
use serde_json::Value;

#[cfg(feature = "oauth")]
use crate::protocol::Members;

#[cfg(feature = "oauth")]
use super::registry::Registry;
use crate::context::Principal;
use crate::protocol::ErrorObject;

/// How access tokens are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg(feature = "oauth")]
pub enum TokenValidation {
    /// JWT access tokens (RFC 9068) verified against the issuer's JWKS, found through its
    /// metadata (RFC 8414 or OpenID discovery). The default.
    Jwt,
    /// Every token sent to the issuer's introspection endpoint (RFC 7662), with this server's
    /// client credentials (HTTP Basic). Answers are cached briefly
    /// ([`OAuth::introspection_cache`]); a revoked token is refused once its entry expires.
    Introspection {
        /// This server's client id at the authorization server.
        client_id: String,
        /// Its client secret.
        client_secret: String,
    },
}

/// The OAuth 2.1 resource-server configuration of an HTTP server: which resource it is, which
/// authorization servers it trusts, and how tokens are checked. Audience checking is always on:
/// a token is accepted only when it was issued for [`resource`](Self::new).
///
/// ```
/// use mcp_runtime::{OAuth, Server};
///
/// let server = Server::new("notes", "1.0.0").oauth(
///     OAuth::new("https://notes.example.com/mcp")
///         .authorization_server("https://auth.example.com")
///         .scopes_supported(["notes:read", "notes:write"]),
/// );
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
#[cfg(feature = "oauth")]
pub struct OAuth {
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) validation: TokenValidation,
    pub(crate) leeway: Duration,
    pub(crate) jwks_min_refresh: Duration,
    pub(crate) jwks_max_age: Duration,
    pub(crate) introspection_cache: Duration,
    pub(crate) verified_cache: Duration,
    pub(crate) resource_name: Option<String>,
    pub(crate) hide_unauthorized: bool,
    pub(crate) challenge_scopes: Option<Vec<String>>,
    pub(crate) dpop: Dpop,
    pub(crate) expose_access_token: bool,
}

/// Whether DPoP-bound tokens (RFC 9449) are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg(feature = "oauth")]
pub(crate) enum Dpop {
    /// Bearer tokens only; a `DPoP` credential is no token at all.
    Off,
    /// Both: a DPoP-bound token with its proof, an unbound one as `Bearer`.
    Accepted,
    /// DPoP-bound tokens with their proofs only.
    Required,
}

#[cfg(feature = "oauth")]
impl OAuth {
    /// A resource server for `resource`, this server's canonical URI (RFC 8707: scheme, host,
    /// port and path of the MCP endpoint, no fragment), e.g. `https://mcp.example.com/mcp`.
    pub fn new(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            validation: TokenValidation::Jwt,
            leeway: Duration::from_secs(30),
            jwks_min_refresh: Duration::from_secs(30),
            jwks_max_age: Duration::from_secs(3600),
            introspection_cache: Duration::from_secs(5),
            verified_cache: Duration::from_secs(60),
            resource_name: None,
            hide_unauthorized: false,
            challenge_scopes: None,
            dpop: Dpop::Off,
            expose_access_token: false,
        }
    }

    /// Trusts the authorization server whose issuer identifier is `issuer` (its metadata is
    /// read from `/.well-known/oauth-authorization-server`, else
    /// `/.well-known/openid-configuration`). At least one is needed.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes this server understands, advertised in its metadata (`offline_access` is
    /// never advertised) and in the `scope` of a 401 challenge.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported.extend(
            scopes
                .into_iter()
                .map(Into::into)
                .filter(|s| s != "offline_access"),
        );
        self
    }

    /// How tokens are checked: [`TokenValidation::Jwt`] (the default) or introspection.
    pub fn validation(mut self, validation: TokenValidation) -> Self {
        self.validation = validation;
        self
    }

    /// Checks every token through the issuer's introspection endpoint (RFC 7662).
    pub fn introspection(
        self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.validation(TokenValidation::Introspection {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        })
    }

    /// The clock skew allowed on `exp` and `nbf` (30 s by default, at most 5 minutes).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(Duration::from_secs(300));
        self
    }

    /// The JWKS is fetched again on a token with an unknown `kid` (a key rotation) at most this
    /// often (30 s by default), and in any case once it is older than `max_age` (1 hour).
    pub fn jwks_refresh(mut self, min_interval: Duration, max_age: Duration) -> Self {
        self.jwks_min_refresh = min_interval;
        self.jwks_max_age = max_age;
        self
    }

    /// How long an introspection answer is reused for the same token (5 s by default; never
    /// past the token's `exp`). Zero asks every time.
    pub fn introspection_cache(mut self, ttl: Duration) -> Self {
        self.introspection_cache = ttl;
        self
    }

    /// The scopes a 401 challenge asks for: what a client without a token should request first
    /// (by default every scope of [`scopes_supported`](Self::scopes_supported)). Naming the
    /// least a client needs keeps tokens narrow: an operation that needs more answers 403
    /// `insufficient_scope` with its scopes, and the client steps up.
    pub fn challenge_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.challenge_scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How long a JWT whose signature and claims were checked is remembered (by its SHA-256),
    /// so the same token on the next request skips the signature check: 60 s by default, never
    /// past the token's `exp`. Zero checks the signature on every request.
    pub fn verified_token_cache(mut self, ttl: Duration) -> Self {
        self.verified_cache = ttl;
        self
    }

    /// Leaves out of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list` the items the caller's token lacks a scope for (off by
    /// default: lists show everything, and using such an item gets 403). Filtered lists are
    /// built per request, not served from the list cache.
    pub fn hide_unauthorized(mut self, hide: bool) -> Self {
        self.hide_unauthorized = hide;
        self
    }

    /// Takes DPoP-bound access tokens (RFC 9449, SEP-1932) beside bearer tokens: a request with
    /// `Authorization: DPoP <token>` and a `DPoP` proof is served when the proof is valid for it
    /// (signed by the key in its header, for this method and URL, `iat` within 5 minutes, the
    /// token's hash in `ath`, never seen before on this replica) and the token's `cnf.jkt` is
    /// that key's thumbprint. A DPoP-bound token sent as `Bearer` is refused. The metadata lists
    /// `dpop_signing_alg_values_supported`, and 401s add a `DPoP` challenge. Off by default.
    pub fn accept_dpop(mut self) -> Self {
        self.dpop = Dpop::Accepted;
        self
    }

    /// As [`accept_dpop`](Self::accept_dpop), and refuses bearer tokens: every request needs a
    /// DPoP-bound token and its proof. The metadata says `dpop_bound_access_tokens_required`.
    pub fn require_dpop(mut self) -> Self {
        self.dpop = Dpop::Required;
        self
    }

    /// Keeps each request's bearer token in its [`Principal`](crate::Principal)
    /// ([`Principal::access_token`](crate::Principal::access_token)), for handlers that forward
    /// it (`openapi::Upstream::forward_caller_token`, which checks the token's audience names
    /// the API) or exchange it (RFC 8693). Off by default: the MCP spec forbids passing a token
    /// through to a resource it was not issued for, so a server holds none unless its author
    /// says it must. DPoP-bound tokens are never kept: they are worthless without the client's
    /// key.
    pub fn expose_access_token(mut self) -> Self {
        self.expose_access_token = true;
        self
    }

    /// A human-readable name for the metadata's `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// What is wrong with this configuration, if anything.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.authorization_servers.is_empty() {
            problems.push("`OAuth` needs at least one authorization server".to_owned());
        }
        let resource = &self.resource;
        let local = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
            .iter()
            .any(|p| resource.starts_with(p));
        if !(resource.starts_with("https://") || local) || resource.contains('#') {
            problems.push(format!(
                "the OAuth resource `{resource}` must be an absolute https URI without a \
                 fragment (http only on loopback)"
            ));
        }
        for issuer in &self.authorization_servers {
            let local = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                .iter()
                .any(|p| issuer.starts_with(p));
            if !(issuer.starts_with("https://") || local) {
                problems.push(format!(
                    "the issuer `{issuer}` must be an https URI (http only on loopback)"
                ));
            }
        }
        problems
    }
}

/// The scopes an operation needs: the server's own ([`Server::required_scopes`]) and those of
/// the item it calls (`tools/call`, `prompts/get`, `resources/read`), in that order, without
/// repeats. `None` for other methods and for items that do not exist (those are answered as
/// usual).
///
/// [`Server::required_scopes`]: crate::Server::required_scopes
#[cfg(feature = "oauth")]
pub(crate) fn operation_scopes(
    registry: &Registry,
    server_scopes: &[String],
    method: &str,
    params: &impl Members,
) -> Option<Vec<String>> {
    let text = |key| params.get(key).and_then(Value::as_str);
    let item: &[Cow<'static, str>] = match method {
        "tools/call" => &registry.tools.get(text("name")?)?.0.metadata.scopes,
        "prompts/get" => &registry.prompts.get(text("name")?)?.0.metadata.scopes,
        "resources/read" => {
            &registry
                .resources
                .resolve(text("uri")?)?
                .0
                .metadata
                .metadata
                .scopes
        }
        _ => return None,
    };
    let mut scopes: Vec<String> = server_scopes.to_vec();
    for scope in item {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_string());
        }
    }
    Some(scopes)
}

/// The JSON-RPC error of a call whose token lacks scopes (when the transport could not answer
/// 403 itself, e.g. inside a batch).
pub(crate) fn insufficient_scope(missing: &[&str]) -> ErrorObject {
    ErrorObject::new(
        -32003,
        format!(
            "insufficient scope: this operation needs `{}`",
            missing.join(" ")
        ),
    )
    .with_data(serde_json::json!({ "error": "insufficient_scope", "scope": missing.join(" ") }))
}

/// Whether `principal` holds every scope of `scopes`.
pub(crate) fn check(principal: &Principal, scopes: &[String]) -> Result<(), ErrorObject> {
    let missing = principal.missing_scopes(scopes);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(insufficient_scope(&missing))
    }
}
