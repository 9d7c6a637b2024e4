//! Who a request over authorized HTTP was made for: the validated access token's subject,
//! client, scopes and claims (see [`Server::oauth`](crate::Server)). The token itself is kept
//! only where the server opts in (`OAuth::expose_access_token`), for a handler that forwards it.

use serde_json::{Map, Value};

/// The caller an access token vouched for, available to handlers as
/// [`Context::principal`](super::Context::principal) or as a parameter of type `Principal`.
/// Requests over stdio, and over HTTP without OAuth, carry none.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    pub(crate) subject: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) issuer: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) claims: Map<String, Value>,
    pub(crate) access_token: Option<AccessToken>,
}

/// The bearer token a request came with, kept only with `OAuth::expose_access_token`; its
/// `Debug` never shows it.
#[derive(Clone, PartialEq)]
pub(crate) struct AccessToken(pub(crate) String);

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken(..)")
    }
}

impl Principal {
    /// Builds a principal from validated claims: `sub`, `client_id` (or `azp`), `iss` and the
    /// space-separated `scope` (or a `scp` array).
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) => {
                scope.split_ascii_whitespace().map(str::to_owned).collect()
            }
            (_, Some(Value::Array(scopes))) => scopes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            (_, Some(Value::String(scope))) => {
                scope.split_ascii_whitespace().map(str::to_owned).collect()
            }
            _ => Vec::new(),
        };
        Self {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            issuer: text("iss").unwrap_or_default(),
            scopes,
            claims,
            access_token: None,
        }
    }

    /// The token's subject (`sub`): the user, or for a client-credentials token the client.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The authorization server that issued the token (`iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Every claim of the token (or of the introspection response).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// The access token itself, as the request carried it: only on a server that opted in with
    /// `OAuth::expose_access_token` (the `oauth` feature), and never for a DPoP-bound token
    /// (worthless without its client's key). For a handler that forwards it to an API that is
    /// the same protected resource, or exchanges it (RFC 8693) for one of the API's own; MCP
    /// forbids passing it through to any other resource. Keep it out of logs and results.
    pub fn access_token(&self) -> Option<&str> {
        self.access_token.as_ref().map(|t| t.0.as_str())
    }

    /// Who this is, for binding state to it: the issuer and the subject (else the client).
    pub fn binding_key(&self) -> String {
        format!(
            "{}\u{0}{}",
            self.issuer,
            self.subject
                .as_deref()
                .or(self.client_id.as_deref())
                .unwrap_or("")
        )
    }

    /// The scopes of `required` this principal lacks.
    pub fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|s| !self.has_scope(s))
            .map(String::as_str)
            .collect()
    }
}
