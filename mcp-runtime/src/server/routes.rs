//! What a deployment asks of the HTTP server beside `/mcp`: the liveness and readiness probes,
//! replies as plain JSON only, and the application's own routes served by the same server.
//! The settings live here; the transport serves them (`transport/http/health.rs` and the
//! router).

use std::time::Duration;

use axum::routing::MethodRouter;

use super::{HttpOptions, Server};
use crate::error::DefinitionError;

/// The liveness probe's default path.
pub(crate) const HEALTH_PATH: &str = "/healthz";
/// The readiness probe's default path.
pub(crate) const READY_PATH: &str = "/readyz";

/// The deployment settings of the HTTP endpoint.
#[derive(Debug, Clone)]
pub(crate) struct DeployOptions {
    /// Where the liveness probe is served; `None`: not served.
    pub(crate) health_path: Option<String>,
    /// Where the readiness probe is served; `None`: not served.
    pub(crate) ready_path: Option<String>,
    /// Every POST is answered with `application/json`, never an SSE stream.
    pub(crate) json_response: bool,
    /// The application's routes, in the order they were added.
    pub(crate) routes: Vec<(String, MethodRouter)>,
    /// How long `serve_http` keeps accepting connections once a shutdown starts, with the
    /// readiness probe saying 503, before it closes its listener and drains.
    pub(crate) drain_delay: Duration,
}

impl Default for DeployOptions {
    fn default() -> Self {
        Self {
            health_path: Some(HEALTH_PATH.to_owned()),
            ready_path: Some(READY_PATH.to_owned()),
            json_response: false,
            routes: Vec::new(),
            drain_delay: Duration::ZERO,
        }
    }
}

/// The paths the server serves itself, with what serves them.
fn own_paths(http: &HttpOptions) -> Vec<(String, &'static str)> {
    let mut paths = vec![(http.path.clone(), "the MCP endpoint")];
    if http.legacy_sse {
        paths.push((http.legacy_sse_path.clone(), "the legacy SSE stream"));
        paths.push((http.legacy_messages_path.clone(), "the legacy messages"));
    }
    if http.server_card.is_some() {
        paths.push((format!("{}/server-card", http.path), "the Server Card"));
        paths.push(("/.well-known/ai-catalog.json".to_owned(), "the AI Catalog"));
    }
    #[cfg(feature = "oauth")]
    if http.auth.is_some() {
        paths.push((
            "/.well-known/oauth-protected-resource".to_owned(),
            "the OAuth metadata",
        ));
    }
    paths
}

/// What `Server::build` refuses in these settings: a probe or a route of the application at a
/// path something else is served at (axum would panic when the router is built), a route
/// whose path does not start with `/`.
pub(crate) fn collisions(http: &HttpOptions) -> Vec<DefinitionError> {
    let mut taken = own_paths(http);
    let mut errors = Vec::new();
    let invalid = |name: &str, location: &str, problem: String| DefinitionError::Invalid {
        kind: "server",
        name: name.to_owned(),
        location: location.to_owned(),
        problem,
    };
    let deploy = &http.deploy;
    let probes = [
        (&deploy.health_path, "the liveness probe"),
        (&deploy.ready_path, "the readiness probe"),
    ];
    for (path, what) in probes {
        let Some(path) = path else { continue };
        match taken.iter().find(|(p, _)| p == path) {
            Some((_, other)) => errors.push(invalid(
                "health_paths",
                "Server::health_paths",
                format!("{what} is at `{path}`, where {other} is served; move one of them"),
            )),
            None => taken.push((path.clone(), what)),
        }
    }
    for (path, _) in &deploy.routes {
        if !path.starts_with('/') {
            errors.push(invalid(
                "http_route",
                "Server::http_route",
                format!("the route `{path}` must start with `/`"),
            ));
            continue;
        }
        match taken.iter().find(|(p, _)| p == path) {
            Some((_, other)) => errors.push(invalid(
                "http_route",
                "Server::http_route",
                format!(
                    "the route `{path}` is where {other} is served; add every method of a path \
                     in one `MethodRouter`, or move the route"
                ),
            )),
            None => taken.push((path.clone(), "an application route")),
        }
    }
    errors
}

impl Server {
    /// Where the liveness and readiness probes are served (`/healthz` and `/readyz` by
    /// default, on every router the server builds): `GET` (or `HEAD`) the first for 200 while
    /// the process serves; the second for 200 while this replica should get traffic, and 503
    /// from the moment a graceful shutdown starts, while the shared store
    /// ([`Server::redis`]) does not answer a `PING` (checked at most once a second, within
    /// 1 s). Neither needs an OAuth token, checks `Host` or holds any of a client's shares;
    /// both answer `Cache-Control: no-store`. [`health_routes(false)`](Self::health_routes)
    /// serves neither.
    pub fn health_paths(
        mut self,
        liveness: impl Into<String>,
        readiness: impl Into<String>,
    ) -> Self {
        self.options.http.deploy.health_path = Some(liveness.into());
        self.options.http.deploy.ready_path = Some(readiness.into());
        self
    }

    /// Serves the liveness and readiness probes (on by default; see
    /// [`health_paths`](Self::health_paths)), or not.
    pub fn health_routes(mut self, enabled: bool) -> Self {
        let deploy = &mut self.options.http.deploy;
        if enabled {
            deploy
                .health_path
                .get_or_insert_with(|| HEALTH_PATH.to_owned());
            deploy
                .ready_path
                .get_or_insert_with(|| READY_PATH.to_owned());
        } else {
            deploy.health_path = None;
            deploy.ready_path = None;
        }
        self
    }

    /// Answers every POST with `application/json`, never an SSE stream (off by default), for
    /// proxies and clients that handle only JSON. What that costs, on such a POST: the
    /// handler's progress and log notifications and its requests to the client
    /// (`ctx.elicit`, `ctx.sample`, `ctx.roots`) are not sent in the reply; in a session they
    /// go on the session's GET stream (kept in its bounded event log until the client opens
    /// it; a request to the client waits there for its answer until
    /// [`request_timeout`](Self::request_timeout)), and in the stateless era (2026-07-28)
    /// notifications are dropped. `subscriptions/listen` and the GET stream are streams by
    /// nature and stay so. A POST whose `Accept` does not list `application/json` gets 406.
    pub fn json_response(mut self, enabled: bool) -> Self {
        self.options.http.deploy.json_response = enabled;
        self
    }

    /// How long [`serve_http`](crate::McpService::serve_http) goes on accepting connections
    /// and serving once a shutdown starts (Ctrl-C, SIGTERM), with the readiness probe
    /// answering 503 (0 by default: the listener closes at once). A load balancer or
    /// Kubernetes takes a few probe periods to notice a replica going away; set this to about
    /// that (`periodSeconds × failureThreshold`) so no new connection meets a closed port.
    /// Then requests in flight get [`shutdown_grace`](Self::shutdown_grace) to finish, as
    /// always.
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.options.http.deploy.drain_delay = delay;
        self
    }

    /// Serves one of the application's routes on the same server as the MCP endpoint, so it
    /// keeps what [`serve_http`](crate::McpService::serve_http) does: the connection limit and
    /// its per-client shares, the header and body timeouts, TCP_NODELAY, the trusted proxies'
    /// client addresses and the graceful shutdown. `route` is an axum
    /// [`MethodRouter`](axum::routing::MethodRouter): `axum::routing::get(handler)`, or any
    /// `tower::Service` through `axum::routing::any_service`. Paths are axum's (`/users/{id}`).
    ///
    /// These routes are the application's: they are served without the OAuth token check and
    /// the `Host`/`Origin` check of the MCP endpoint (add your own layers with
    /// `MethodRouter::layer`), and a path the server serves itself (the endpoint, the probes,
    /// the Server Card) fails [`build`](Self::build), as does a second route at one path (put
    /// its methods in one `MethodRouter`).
    ///
    /// ```no_run
    /// use axum::routing::get;
    /// use mcp_runtime::Server;
    ///
    /// # async fn run() -> mcp_runtime::Result<()> {
    /// Server::new("demo", "1.0.0")
    ///     .http_route("/version", get(|| async { env!("CARGO_PKG_VERSION") }))
    ///     .build()?
    ///     .serve_http("127.0.0.1:8000")
    ///     .await
    /// # }
    /// ```
    pub fn http_route(mut self, path: impl Into<String>, route: MethodRouter) -> Self {
        self.options.http.deploy.routes.push((path.into(), route));
        self
    }
}
