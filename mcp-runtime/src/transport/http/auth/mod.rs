//! The HTTP server as an OAuth 2.1 resource server: a bearer token on every request of every
//! route (both eras, `subscriptions/listen`, the legacy transport), the protected resource
//! metadata (RFC 9728), and the challenges that drive a client's discovery and step-up:
//!
//! - no token (none in `Authorization`; one in the query string does not count): 401 with
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`;
//! - a malformed `Authorization` header (two of them, `Bearer` without a token, a token with
//!   characters a token68 cannot have, a token in both the header and the query): 400
//!   `invalid_request`;
//! - a token that fails validation ([`validate`]): 401 `invalid_token`;
//! - a call whose token lacks a scope the item needs: 403 `insufficient_scope` naming every scope
//!   the operation needs;
//! - with DPoP on ([`OAuth::accept_dpop`], [`dpop`]): `Authorization: DPoP <token>` and its
//!   proof; a proof that fails gets 401 `invalid_dpop_proof` in a `DPoP` challenge, a bound token
//!   sent as `Bearer` (or any bearer token when DPoP is required) 401 `invalid_token`.
//!
//! [`OAuth::accept_dpop`]: crate::OAuth::accept_dpop
//!
//! The validated caller travels to handlers as a [`Principal`]; the token itself goes nowhere,
//! unless the server keeps it for them (`OAuth::expose_access_token`).

mod dpop;
mod validate;

#[cfg(feature = "fuzzing")]
pub use self::dpop::fuzz_dpop;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub(crate) use self::validate::Validator;
use crate::context::Principal;
use crate::context::principal::AccessToken;
use crate::protocol::{Incoming, Message};
use crate::server::{Core, Dpop, OAuth};

/// The resource server: its settings, its metadata, and the validator.
pub(crate) struct Auth {
    pub(crate) config: Arc<OAuth>,
    /// The absolute URL of the metadata document, for `resource_metadata`.
    metadata_url: String,
    /// The path-suffixed metadata path (`/.well-known/oauth-protected-resource/mcp`).
    pub(crate) metadata_path: String,
    metadata: Value,
    validator: Validator,
    /// The resource's `scheme://host:port`, for a proof's `htu`.
    origin: String,
    /// The `algs` of a `DPoP` challenge: the algorithms a proof may be signed with.
    dpop_algs: String,
    proofs: dpop::Proofs,
}

/// The credential of `Authorization`.
#[derive(Debug, PartialEq, Eq)]
enum Credential<'h> {
    Bearer(&'h str),
    Dpop(&'h str),
}

/// Why a request was refused.
#[derive(Debug)]
pub(crate) enum Reject {
    /// No bearer token in `Authorization`.
    Missing,
    /// The header is not a well-formed bearer credential: 400.
    Malformed(&'static str),
    /// The token is not valid here: 401 `invalid_token`.
    Invalid(String),
    /// The authorization server could not be reached to check it: 503.
    Unavailable(String),
    /// The DPoP proof is missing or not valid for the request: 401 `invalid_dpop_proof`.
    Proof(String),
}

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl Auth {
    pub(crate) fn new(config: Arc<OAuth>) -> Arc<Self> {
        let (origin, path) = split_resource(&config.resource);
        let suffix = if path == "/" { "" } else { path };
        let metadata_url = format!("{origin}{WELL_KNOWN}{suffix}");
        let mut metadata = json!({
            "resource": config.resource,
            "authorization_servers": config.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !config.scopes_supported.is_empty() {
            metadata["scopes_supported"] = json!(config.scopes_supported);
        }
        if let Some(name) = &config.resource_name {
            metadata["resource_name"] = json!(name);
        }
        let dpop_algs: Vec<String> = validate::ALLOWED
            .iter()
            .map(|alg| format!("{alg:?}"))
            .collect();
        if config.dpop != Dpop::Off {
            metadata["dpop_signing_alg_values_supported"] = json!(dpop_algs);
        }
        if config.dpop == Dpop::Required {
            metadata["dpop_bound_access_tokens_required"] = json!(true);
        }
        Arc::new(Self {
            metadata_url,
            metadata_path: format!("{WELL_KNOWN}{suffix}"),
            metadata,
            validator: Validator::new(Arc::clone(&config)),
            origin: origin.to_owned(),
            dpop_algs: dpop_algs.join(" "),
            proofs: dpop::Proofs::default(),
            config,
        })
    }

    /// The token of `headers` (and the query string, which must not carry one too), `Bearer`,
    /// or `DPoP` when that is on.
    fn token<'h>(
        headers: &'h HeaderMap,
        query: Option<&str>,
        dpop: Dpop,
    ) -> Result<Credential<'h>, Reject> {
        let in_query = query.is_some_and(|q| {
            q.split('&')
                .any(|pair| pair.split('=').next() == Some("access_token"))
        });
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Err(Reject::Missing);
        };
        if values.next().is_some() {
            return Err(Reject::Malformed("more than one `Authorization` header"));
        }
        let value = value
            .to_str()
            .map_err(|_| Reject::Malformed("the `Authorization` header is not ASCII"))?;
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        let dpop = scheme.eq_ignore_ascii_case("dpop") && dpop != Dpop::Off;
        if !scheme.eq_ignore_ascii_case("bearer") && !dpop {
            // Another scheme is no token at all: the challenge says which one to use.
            return Err(Reject::Missing);
        }
        let token = token.trim_matches(' ');
        if token.is_empty() {
            return Err(Reject::Malformed("a scheme without a token"));
        }
        if !is_token68(token) {
            return Err(Reject::Malformed(
                "the bearer token has characters a token cannot have",
            ));
        }
        if in_query {
            return Err(Reject::Malformed(
                "a token in both the `Authorization` header and the query string",
            ));
        }
        Ok(if dpop {
            Credential::Dpop(token)
        } else {
            Credential::Bearer(token)
        })
    }

    /// The caller of a request (its method and path), or why there is none.
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
        (method, path): (&str, &str),
    ) -> Result<Arc<Principal>, Reject> {
        match Self::token(headers, query, self.config.dpop)? {
            Credential::Bearer(_) if self.config.dpop == Dpop::Required => Err(Reject::Invalid(
                "this server takes DPoP-bound tokens only".to_owned(),
            )),
            Credential::Bearer(token) => {
                let principal = self.validator.validate(token).await?;
                // Whatever this server takes: a bound token is only good with its key's proof.
                if dpop::bound_key(principal.claims()).is_some() {
                    return Err(Reject::Invalid(
                        "a DPoP-bound token is not good without its proof".to_owned(),
                    ));
                }
                if self.config.expose_access_token {
                    // A copy for this request: the cached principal never holds a token.
                    let mut principal = Principal::clone(&principal);
                    principal.access_token = Some(AccessToken(token.to_owned()));
                    return Ok(Arc::new(principal));
                }
                Ok(principal)
            }
            Credential::Dpop(token) => {
                let mut proofs = headers.get_all("dpop").iter();
                let (Some(proof), None) = (proofs.next(), proofs.next()) else {
                    return Err(Reject::Proof("one `DPoP` header is needed".to_owned()));
                };
                let proof = proof
                    .to_str()
                    .map_err(|_| Reject::Proof("the `DPoP` header is not ASCII".to_owned()))?;
                let url = format!("{}{path}", self.origin);
                let target = dpop::Target {
                    method,
                    url: &url,
                    token,
                };
                let key = self
                    .proofs
                    .check(proof, &target, validate::now_secs())
                    .map_err(Reject::Proof)?;
                let principal = self.validator.validate(token).await?;
                match dpop::bound_key(principal.claims()) {
                    Some(bound) if bound == key => Ok(principal),
                    Some(_) => Err(Reject::Invalid(
                        "the token is bound to another key than the proof's".to_owned(),
                    )),
                    None => Err(Reject::Invalid("the token is not DPoP-bound".to_owned())),
                }
            }
        }
    }

    /// The `WWW-Authenticate` values of a challenge: `Bearer` (unless DPoP is required) and
    /// `DPoP` (when it is on); an `invalid_dpop_proof` error goes in the `DPoP` one only.
    fn challenges(&self, error: Option<(&str, &str)>, scope: Option<&str>) -> Vec<HeaderValue> {
        let proof_error = error.is_some_and(|(error, _)| error == "invalid_dpop_proof");
        let mut challenges = Vec::new();
        if self.config.dpop != Dpop::Required {
            let error = if proof_error { None } else { error };
            challenges.push(self.challenge("Bearer", error, scope));
        }
        if self.config.dpop != Dpop::Off {
            challenges.push(self.challenge("DPoP", error, scope));
        }
        challenges
    }

    /// The `WWW-Authenticate` value of one challenge.
    fn challenge(
        &self,
        scheme: &str,
        error: Option<(&str, &str)>,
        scope: Option<&str>,
    ) -> HeaderValue {
        let mut value = String::from(scheme);
        let mut params = Vec::new();
        if scheme == "DPoP" {
            params.push(format!("algs=\"{}\"", self.dpop_algs));
        }
        if let Some((error, description)) = error {
            params.push(format!("error=\"{error}\""));
            params.push(format!("error_description=\"{}\"", quote_safe(description)));
        }
        params.push(format!("resource_metadata=\"{}\"", self.metadata_url));
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            params.push(format!("scope=\"{}\"", quote_safe(scope)));
        }
        value.push(' ');
        value.push_str(&params.join(", "));
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    fn respond(
        &self,
        status: StatusCode,
        error: Option<(&str, &str)>,
        scope: Option<&str>,
    ) -> Response {
        let body = match error {
            Some((error, description)) => {
                json!({"error": error, "error_description": description}).to_string()
            }
            None => {
                json!({"error": "unauthorized", "error_description": "a bearer token is required"})
                    .to_string()
            }
        };
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for challenge in self.challenges(error, scope) {
            headers.append(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }

    /// The answer to a refused request.
    pub(crate) fn reject(&self, reject: &Reject) -> Response {
        let supported = self
            .config
            .challenge_scopes
            .as_ref()
            .unwrap_or(&self.config.scopes_supported)
            .join(" ");
        match reject {
            Reject::Missing => self.respond(StatusCode::UNAUTHORIZED, None, Some(&supported)),
            Reject::Malformed(why) => self.respond(
                StatusCode::BAD_REQUEST,
                Some(("invalid_request", why)),
                None,
            ),
            Reject::Invalid(why) | Reject::Proof(why) => {
                let error = if matches!(reject, Reject::Proof(_)) {
                    "invalid_dpop_proof"
                } else {
                    "invalid_token"
                };
                tracing::debug!(reason = %why, error, "a credential was refused");
                self.respond(
                    StatusCode::UNAUTHORIZED,
                    Some((error, why)),
                    Some(&supported),
                )
            }
            Reject::Unavailable(why) => {
                tracing::warn!(reason = %why, "an access token could not be checked");
                let mut response = (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the authorization server could not be reached; try again",
                )
                    .into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                response
            }
        }
    }

    /// 403 `insufficient_scope`, naming every scope the operation needs.
    pub(crate) fn forbidden(&self, needed: &[String], missing: &[&str]) -> Response {
        let description = format!("this operation needs the scope `{}`", missing.join(" "));
        self.respond(
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", &description)),
            Some(&needed.join(" ")),
        )
    }

    /// The 403 for the first request of `incoming` whose scopes `principal` lacks.
    pub(crate) fn check_scopes(
        &self,
        core: &Core,
        principal: Option<&Principal>,
        incoming: &Incoming,
    ) -> Result<(), Response> {
        let (Some(principal), Incoming::Single(Ok(Message::Request(request)))) =
            (principal, incoming)
        else {
            // Batches are checked request by request in dispatch (a JSON-RPC error each).
            return Ok(());
        };
        let registry = core.registry();
        let Some(needed) = crate::server::auth::operation_scopes(
            &registry,
            &core.options.scopes,
            &request.method,
            &request.params,
        ) else {
            return Ok(());
        };
        let missing = principal.missing_scopes(&needed);
        if missing.is_empty() {
            Ok(())
        } else {
            Err(self.forbidden(&needed, &missing))
        }
    }

    /// The metadata document.
    fn metadata_response(&self) -> Response {
        let mut response = (StatusCode::OK, self.metadata.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=3600"),
        );
        response
    }
}

/// `GET /.well-known/oauth-protected-resource[/path]`.
pub(crate) async fn metadata(State(auth): State<Arc<Auth>>) -> Response {
    auth.metadata_response()
}

/// The middleware before every MCP route: a valid token, or the challenge.
pub(crate) async fn require_token(
    State(auth): State<Arc<Auth>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let uri = request.uri();
    let query = uri.query();
    let target = (request.method().as_str(), uri.path());
    match auth.authenticate(request.headers(), query, target).await {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(reject) => auth.reject(&reject),
    }
}

/// `https://host:port` and the rest (`/path?query`, or empty) of a URL.
pub(super) fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path = url
        .get(after_scheme..)
        .and_then(|rest| rest.find('/'))
        .map_or(url.len(), |i| after_scheme + i);
    url.split_at_checked(path).unwrap_or((url, ""))
}

/// `https://host:port` and `/path` of a resource URI.
fn split_resource(resource: &str) -> (&str, &str) {
    match split_origin(resource) {
        (origin, "") => (origin, "/"),
        (origin, path) => (origin, path.split(['?', '#']).next().unwrap_or(path)),
    }
}

/// RFC 7235 token68: what a bearer token may be made of.
fn is_token68(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// A value fit for a quoted-string: no quotes, backslashes or control characters.
fn quote_safe(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_paths_follow_the_resource_path() {
        assert_eq!(
            split_resource("https://mcp.example.com/mcp"),
            ("https://mcp.example.com", "/mcp")
        );
        assert_eq!(
            split_resource("http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080", "/")
        );
        let auth = Auth::new(Arc::new(
            OAuth::new("https://mcp.example.com/tenant/mcp").authorization_server("https://as"),
        ));
        assert_eq!(
            auth.metadata_url,
            "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp"
        );
    }

    #[test]
    fn bearer_headers_are_read_strictly() {
        let headers = |values: &[&str]| {
            let mut map = HeaderMap::new();
            for v in values {
                map.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
            }
            map
        };
        assert!(matches!(
            Auth::token(&headers(&[]), None, Dpop::Off),
            Err(Reject::Missing)
        ));
        assert!(matches!(
            Auth::token(&headers(&[]), Some("access_token=abc"), Dpop::Off),
            Err(Reject::Missing)
        ));
        assert!(matches!(
            Auth::token(&headers(&["Basic abc"]), None, Dpop::Off),
            Err(Reject::Missing)
        ));
        assert!(matches!(
            Auth::token(&headers(&["Bearer"]), None, Dpop::Off),
            Err(Reject::Malformed(_))
        ));
        assert!(matches!(
            Auth::token(&headers(&["Bearer a b"]), None, Dpop::Off),
            Err(Reject::Malformed(_))
        ));
        assert!(matches!(
            Auth::token(&headers(&["Bearer abc", "Bearer abc"]), None, Dpop::Off),
            Err(Reject::Malformed(_))
        ));
        assert!(matches!(
            Auth::token(
                &headers(&["Bearer abc"]),
                Some("x=1&access_token=abc"),
                Dpop::Off
            ),
            Err(Reject::Malformed(_))
        ));
        assert_eq!(
            Auth::token(&headers(&["bearer a.b-c_d~"]), None, Dpop::Off).ok(),
            Some(Credential::Bearer("a.b-c_d~"))
        );
        // `DPoP` is a scheme only when DPoP is on.
        assert!(matches!(
            Auth::token(&headers(&["DPoP abc"]), None, Dpop::Off),
            Err(Reject::Missing)
        ));
        assert_eq!(
            Auth::token(&headers(&["dpop abc"]), None, Dpop::Accepted).ok(),
            Some(Credential::Dpop("abc"))
        );
        assert!(matches!(
            Auth::token(&headers(&["DPoP"]), None, Dpop::Required),
            Err(Reject::Malformed(_))
        ));
    }
}
