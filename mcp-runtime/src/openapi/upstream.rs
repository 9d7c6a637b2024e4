//! Where an API's requests go and with what credentials: [`Upstream`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::context::Context;
use crate::tool::{BoxFuture, ToolError};

/// A hook that gives each request its `Authorization` value (or none) from the MCP request it
/// serves: the place for an OAuth token exchange (RFC 8693) or any credential of your own. See
/// [`Upstream::authorize_with`].
pub type Authorize =
    Arc<dyn Fn(Context) -> BoxFuture<Result<Option<String>, ToolError>> + Send + Sync>;

/// How an [`Upstream`] authenticates each request, beside its static headers.
#[derive(Clone)]
pub(crate) enum Credential {
    None,
    /// `Authorization: Bearer <token>`, read once from the environment.
    Bearer(HeaderValue),
    /// The MCP caller's own access token, when it was issued for `audience` too.
    ForwardCaller {
        audience: String,
    },
    /// A function of the request.
    Custom(Authorize),
}

/// Why an [`Upstream`] could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl ConfigError {
    pub(crate) fn new(message: String) -> Self {
        Self(message)
    }
}

/// Where an API's requests go, the credentials they carry and the bounds they are held to.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::openapi::Upstream;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let upstream = Upstream::new("https://api.example.com/v1")?
///     .header("X-Api-Version", "2024-01-01")?
///     .timeout(Duration::from_secs(10));
/// # let _ = upstream;
/// # Ok(())
/// # }
/// ```
///
/// | bound | default | past it |
/// |---|---|---|
/// | [`Upstream::timeout`] | 30 s a request, response body included (10 s to connect) | a tool error naming the timeout |
/// | [`Upstream::max_response_bytes`] | 8 MiB a response body | a tool error; the rest is not read |
/// | [`Upstream::max_error_bytes`] | 4 KiB of an error body in the tool error | the body is cut at a character boundary, with `…` |
/// | redirects | 5, to the same scheme, host and port only | the redirect itself is the answer (a tool error for a non-2xx) |
#[derive(Clone)]
pub struct Upstream {
    pub(crate) base_url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) credential: Credential,
    pub(crate) timeout: Duration,
    pub(crate) max_response_bytes: usize,
    pub(crate) max_error_bytes: usize,
    pub(crate) client: reqwest::Client,
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be secrets: their names only.
        let credential = match &self.credential {
            Credential::None => "none",
            Credential::Bearer(_) => "bearer",
            Credential::ForwardCaller { .. } => "the caller's token",
            Credential::Custom(_) => "custom",
        };
        f.debug_struct("Upstream")
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("credential", &credential)
            .field("timeout", &self.timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_error_bytes", &self.max_error_bytes)
            .finish()
    }
}

impl Upstream {
    /// Requests go to `base_url` (`http` or `https`) followed by each operation's path, so a
    /// base with a path (`https://api.example.com/v1`) prefixes it.
    pub fn new(base_url: impl Into<String>) -> Result<Self, ConfigError> {
        let base_url = base_url.into();
        let parsed = reqwest::Url::parse(&base_url)
            .map_err(|e| ConfigError(format!("the base URL `{base_url}` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(ConfigError(format!(
                "the base URL `{base_url}` is not an http or https URL with a host"
            )));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(ConfigError(format!(
                "the base URL `{base_url}` has a query or a fragment; give the scheme, host and path only"
            )));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::custom(same_origin))
            .build()
            .map_err(|e| ConfigError(format!("the HTTP client could not be built: {e}")))?;
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            headers: HeaderMap::new(),
            credential: Credential::None,
            timeout: Duration::from_secs(30),
            max_response_bytes: 8 << 20,
            max_error_bytes: 4 << 10,
            client,
        })
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Sends `name: value` with every request (an API key header, a version header).
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, ConfigError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ConfigError(format!("`{name}` is not a header name")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| ConfigError(format!("the value of `{name}` is not a header value")))?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Sends `Authorization: Bearer <token>`, the token read now from the environment variable
    /// `var` (an error when it is unset or empty, so a server never starts unauthenticated by
    /// mistake).
    pub fn bearer_from_env(mut self, var: &str) -> Result<Self, ConfigError> {
        let token = std::env::var(var).unwrap_or_default();
        if token.is_empty() {
            return Err(ConfigError(format!(
                "the environment variable `{var}` is unset or empty"
            )));
        }
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ConfigError(format!("the token in `{var}` is not a header value")))?;
        value.set_sensitive(true);
        self.credential = Credential::Bearer(value);
        Ok(self)
    }

    /// Sends the MCP caller's own OAuth access token (`Authorization: Bearer`), when the token's
    /// `aud` names `audience`, the upstream API: forwarding, for a deployment where the MCP
    /// server and the API are one protected resource to the authorization server.
    ///
    /// The server must keep the token for handlers with `OAuth::expose_access_token` (the
    /// `oauth` feature); a request without one (stdio, HTTP without OAuth, a DPoP-bound token,
    /// which is worthless without its client's key) gets a tool error, and so does a token
    /// whose audience does not name `audience`. MCP forbids passing a token through to a
    /// resource it was not issued for (the confused deputy of the spec's security best
    /// practices); this checks the audience so that cannot happen by mistake. Where the API is
    /// a resource of its own, exchange the token instead ([`Upstream::authorize_with`]).
    pub fn forward_caller_token(mut self, audience: impl Into<String>) -> Self {
        self.credential = Credential::ForwardCaller {
            audience: audience.into(),
        };
        self
    }

    /// Gives each request the `Authorization` value `authorize` returns for the MCP request it
    /// serves (`None`: no header); an `Err` is the tool's error. For a token exchange (RFC 8693)
    /// with the caller's token ([`Principal`](crate::Principal)), or a credential fetched and
    /// cached by your own code.
    pub fn authorize_with<F>(mut self, authorize: F) -> Self
    where
        F: Fn(Context) -> BoxFuture<Result<Option<String>, ToolError>> + Send + Sync + 'static,
    {
        self.credential = Credential::Custom(Arc::new(authorize));
        self
    }

    /// How long a request may take, its body included (30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest response body read (8 MiB); a larger one is a tool error.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// How much of an error body goes into the tool error (4 KiB).
    pub fn max_error_bytes(mut self, bytes: usize) -> Self {
        self.max_error_bytes = bytes;
        self
    }
}

/// Follows at most 5 redirects, each to the scheme, host and port the request went to: headers
/// set for the API (keys, tokens) never go to another origin.
fn same_origin(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let Some(first) = attempt.previous().first() else {
        return attempt.stop();
    };
    let next = attempt.url();
    let same = first.scheme() == next.scheme()
        && first.host_str() == next.host_str()
        && first.port_or_known_default() == next.port_or_known_default();
    if same && attempt.previous().len() <= 5 {
        attempt.follow()
    } else {
        attempt.stop()
    }
}
