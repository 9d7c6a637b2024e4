//! The builder's settings in groups, as hyper's and tonic's builders keep theirs: [`Limits`]
//! (every bound of the crate docs' limits table, with its documented default),
//! [`HttpOptions`] (the Streamable HTTP endpoint) and [`TaskOptions`] (the task store's
//! bounds). `Server::limits`, `Server::http_options` and `Server::task_options` set a group at
//! once; the single setters (`Server::max_message_size`, ...) set one value of it.
//!
//! Each group's `Default` is read from the server's own defaults, so what the docs say, what
//! `Limits::default()` holds and what a server gets with nothing set cannot drift apart.

use std::time::Duration;

use super::{Options, Server};

/// Every bound a server puts on what clients can make it hold or wait for: the limits table of
/// the crate docs (*Limits*), one value with the documented defaults. [`Server::limits`] sets
/// them all; start from `Limits::default()` and change what you need.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::{Limits, Server};
///
/// let server = Server::new("demo", "1.0.0").limits(
///     Limits::default()
///         .max_message_size(1024 * 1024)
///         .max_in_flight_requests(32)
///         .handler_timeout(Duration::from_secs(30)),
/// );
/// # let _ = server;
/// ```
///
/// The HTTP bounds (connections, sessions, header and body timeouts, event logs) apply only to
/// Streamable HTTP and the legacy SSE transport; a stdio server ignores them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    max_message_size: usize,
    max_nesting_depth: usize,
    request_bytes_total: usize,
    client_share: u8,
    max_in_flight_requests: usize,
    stream_buffer: usize,
    max_subscriptions: usize,
    max_subscription_uri: usize,
    subscription_bytes_total: usize,
    handler_timeout: Option<Duration>,
    request_timeout: Duration,
    shutdown_grace: Duration,
    stream_buffer_total: usize,
    event_buffer: usize,
    event_log_bytes: (usize, usize),
    max_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    max_sessions: usize,
    max_sessions_per_peer: Option<usize>,
    initialize_timeout: Duration,
    session_idle_timeout: Duration,
    stream_resume_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self::of(&Options::default())
    }
}

/// The HTTP bounds' defaults, for a build without HTTP (where they are never used, only shown):
/// the same as the HTTP settings' own (a test checks).
#[cfg_attr(feature = "http", allow(dead_code))]
struct HttpDefaults {
    unread_total: usize,
    event_buffer: usize,
    session_log_bytes: usize,
    total_log_bytes: usize,
    max_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    max_sessions: usize,
    max_sessions_per_peer: Option<usize>,
    initialize_timeout: Duration,
    session_idle: Duration,
    resume_grace: Duration,
}

#[cfg_attr(feature = "http", allow(dead_code))]
const HTTP_DEFAULTS: HttpDefaults = HttpDefaults {
    unread_total: 128 * 1024 * 1024,
    event_buffer: 1_000,
    session_log_bytes: 1024 * 1024,
    total_log_bytes: 128 * 1024 * 1024,
    max_connections: 512,
    header_read_timeout: Duration::from_secs(10),
    body_read_timeout: Duration::from_secs(30),
    max_sessions: 10_000,
    max_sessions_per_peer: None,
    initialize_timeout: Duration::from_secs(10),
    session_idle: Duration::from_secs(30 * 60),
    resume_grace: Duration::from_secs(10),
};

impl Limits {
    /// The limits `options` hold.
    fn of(options: &Options) -> Self {
        #[cfg(feature = "http")]
        let http = &options.http;
        #[cfg(not(feature = "http"))]
        let http = &HTTP_DEFAULTS;
        Self {
            max_message_size: options.max_message_size,
            max_nesting_depth: options.max_nesting_depth,
            request_bytes_total: options.request_bytes_total,
            client_share: options.client_share,
            max_in_flight_requests: options.max_in_flight,
            stream_buffer: options.stream_buffer,
            max_subscriptions: options.max_subscriptions,
            max_subscription_uri: options.max_subscription_uri,
            subscription_bytes_total: options.subscription_bytes_total,
            handler_timeout: options.handler_timeout,
            request_timeout: options.request_timeout,
            shutdown_grace: options.shutdown_grace,
            stream_buffer_total: http.unread_total,
            event_buffer: http.event_buffer,
            event_log_bytes: (http.session_log_bytes, http.total_log_bytes),
            max_connections: http.max_connections,
            header_read_timeout: http.header_read_timeout,
            body_read_timeout: http.body_read_timeout,
            max_sessions: http.max_sessions,
            max_sessions_per_peer: http.max_sessions_per_peer,
            initialize_timeout: http.initialize_timeout,
            session_idle_timeout: http.session_idle,
            stream_resume_grace: http.resume_grace,
        }
    }

    /// Writes these limits into `options`.
    fn apply(self, options: &mut Options) {
        options.max_message_size = self.max_message_size;
        options.max_nesting_depth = self.max_nesting_depth;
        options.request_bytes_total = self.request_bytes_total;
        options.client_share = self.client_share;
        options.max_in_flight = self.max_in_flight_requests;
        options.stream_buffer = self.stream_buffer;
        options.max_subscriptions = self.max_subscriptions;
        options.max_subscription_uri = self.max_subscription_uri;
        options.subscription_bytes_total = self.subscription_bytes_total;
        options.handler_timeout = self.handler_timeout;
        options.request_timeout = self.request_timeout;
        options.shutdown_grace = self.shutdown_grace;
        #[cfg(feature = "http")]
        {
            let http = &mut options.http;
            http.unread_total = self.stream_buffer_total;
            http.event_buffer = self.event_buffer;
            (http.session_log_bytes, http.total_log_bytes) = self.event_log_bytes;
            http.max_connections = self.max_connections;
            http.header_read_timeout = self.header_read_timeout;
            http.body_read_timeout = self.body_read_timeout;
            http.max_sessions = self.max_sessions;
            http.max_sessions_per_peer = self.max_sessions_per_peer;
            http.initialize_timeout = self.initialize_timeout;
            http.session_idle = self.session_idle_timeout;
            http.resume_grace = self.stream_resume_grace;
        }
    }

    /// The largest message, a body or a line (16 MiB): past it, 413 over HTTP, an error naming
    /// the line's id on stdio. See [`Server::max_message_size`].
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// The deepest nesting of a message's arrays and objects (64): deeper is -32700. See
    /// [`Server::max_nesting_depth`].
    pub fn max_nesting_depth(mut self, levels: usize) -> Self {
        self.max_nesting_depth = levels.max(1);
        self
    }

    /// The bytes requests in flight hold, all clients together (192 MiB): their text as it
    /// arrives, then what parsing it builds. Past it (or past one client's share), 503 with
    /// `Retry-After` over HTTP, the request's error on stdio. See
    /// [`Server::request_bytes_total`].
    pub fn request_bytes_total(mut self, bytes: usize) -> Self {
        self.request_bytes_total = bytes;
        self
    }

    /// The percentage of each bound the clients share that one client may hold (25; 100 turns
    /// the shares off): connections, request bytes, sessions, open streams, unread stream bytes,
    /// event logs, subscriptions. See [`Server::client_share`].
    pub fn client_share(mut self, percent: u8) -> Self {
        self.client_share = percent.clamp(1, 100);
        self
    }

    /// The requests one session may have running (256): past it, -32000 at once. See
    /// [`Server::max_in_flight_requests`].
    pub fn max_in_flight_requests(mut self, requests: usize) -> Self {
        self.max_in_flight_requests = requests.max(1);
        self
    }

    /// The bytes one client stream may hold unread (4 MiB). See [`Server::stream_buffer`].
    pub fn stream_buffer(mut self, bytes: usize) -> Self {
        self.stream_buffer = bytes.max(1);
        self
    }

    /// The resource subscriptions one session or listen may hold (1,000), and the longest URI
    /// one may name (8 KiB): past either, -32602. See [`Server::max_subscriptions`].
    pub fn max_subscriptions(mut self, count: usize, uri_bytes: usize) -> Self {
        self.max_subscriptions = count;
        self.max_subscription_uri = uri_bytes;
        self
    }

    /// The bytes of subscription URIs all sessions hold together (32 MiB; one client at most
    /// its share). See [`Server::subscription_bytes_total`].
    pub fn subscription_bytes_total(mut self, bytes: usize) -> Self {
        self.subscription_bytes_total = bytes;
        self
    }

    /// How long one handler may run (no limit). See [`Server::handler_timeout`].
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = Some(timeout);
        self
    }

    /// How long a request to the client may wait for its answer (60 s). See
    /// [`Server::request_timeout`].
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long requests may finish once the client hangs up, or the server shuts down (5 s).
    /// See [`Server::shutdown_grace`].
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The bytes all HTTP streams may hold unread together (128 MiB; one client's streams at
    /// most its share). See `Server::stream_buffer_total`.
    pub fn stream_buffer_total(mut self, bytes: usize) -> Self {
        self.stream_buffer_total = bytes;
        self
    }

    /// The events each SSE stream keeps for `Last-Event-ID` (1,000).
    pub fn event_buffer(mut self, events: usize) -> Self {
        self.event_buffer = events.max(1);
        self
    }

    /// The bytes of kept events, one session's streams together (1 MiB) and all sessions' (128
    /// MiB; one client's sessions at most its share). See `Server::event_log_bytes`.
    pub fn event_log_bytes(mut self, per_session: usize, total: usize) -> Self {
        self.event_log_bytes = (per_session, total);
        self
    }

    /// The HTTP connections `serve_http` keeps open (512), one address at most its share. See
    /// `Server::max_connections`.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// How long a client may take to send a request's headers (10 s).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's body (30 s).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The HTTP sessions open at once (10,000).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// The HTTP sessions one client may hold (its share of `max_sessions`: 2,500). See
    /// `Server::max_sessions_per_peer`.
    pub fn max_sessions_per_peer(mut self, sessions: usize) -> Self {
        self.max_sessions_per_peer = Some(sessions);
        self
    }

    /// How long an HTTP session may go without `notifications/initialized` (10 s).
    pub fn initialize_timeout(mut self, timeout: Duration) -> Self {
        self.initialize_timeout = timeout;
        self
    }

    /// How long an HTTP session may stay idle (30 minutes).
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// How long the requests of a POST's event stream run on once its client went away
    /// without coming back with `Last-Event-ID` (10 s). See `Server::stream_resume_grace`.
    pub fn stream_resume_grace(mut self, grace: Duration) -> Self {
        self.stream_resume_grace = grace;
        self
    }
}

/// The Streamable HTTP endpoint: its path, the legacy HTTP+SSE transport, the `Host`/`Origin`
/// check, the reverse proxies trusted to name the client, sessions or none.
/// [`Server::http_options`] sets them all; its bounds are in [`Limits`], OAuth is
/// [`Server::oauth`](crate::Server).
///
/// ```
/// use mcp_runtime::{HttpOptions, Server};
///
/// let server = Server::new("demo", "1.0.0").http_options(
///     HttpOptions::default()
///         .path("/api/mcp")
///         .allowed_hosts(["mcp.example.com"])
///         .trusted_proxies(["10.0.0.0/8"])
///         .legacy_sse(true),
/// );
/// # let _ = server;
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    path: String,
    hosts: super::HostPolicy,
    hosts_configured: bool,
    stateless: bool,
    legacy_sse: bool,
    legacy_sse_path: String,
    legacy_messages_path: String,
    trusted_proxies: Vec<super::IpRange>,
    /// What `trusted_proxies` could not read, reported by `Server::build`.
    unreadable_proxies: Vec<String>,
    health_path: Option<String>,
    ready_path: Option<String>,
    json_response: bool,
}

#[cfg(feature = "http")]
impl Default for HttpOptions {
    fn default() -> Self {
        let http = super::HttpOptions::default();
        Self {
            path: http.path,
            hosts: http.hosts,
            hosts_configured: http.hosts_configured,
            stateless: http.stateless,
            legacy_sse: http.legacy_sse,
            legacy_sse_path: http.legacy_sse_path,
            legacy_messages_path: http.legacy_messages_path,
            trusted_proxies: http.trusted_proxies,
            unreadable_proxies: Vec::new(),
            health_path: http.deploy.health_path,
            ready_path: http.deploy.ready_path,
            json_response: http.deploy.json_response,
        }
    }
}

#[cfg(feature = "http")]
impl HttpOptions {
    /// Writes these options into `http`; what could not be read, as `build` reports it.
    fn apply(self, http: &mut super::HttpOptions) -> Vec<crate::DefinitionError> {
        http.path = self.path;
        http.hosts = self.hosts;
        http.hosts_configured = self.hosts_configured;
        http.stateless = self.stateless;
        http.legacy_sse = self.legacy_sse;
        http.legacy_sse_path = self.legacy_sse_path;
        http.legacy_messages_path = self.legacy_messages_path;
        http.trusted_proxies = self.trusted_proxies;
        http.deploy.health_path = self.health_path;
        http.deploy.ready_path = self.ready_path;
        http.deploy.json_response = self.json_response;
        self.unreadable_proxies
            .iter()
            .map(|proxy| super::unreadable_proxy(proxy, "HttpOptions::trusted_proxies"))
            .collect()
    }

    /// The endpoint's path (`/mcp`). See [`Server::http_path`].
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accepts these host names (any port) in `Host` and `Origin`, instead of the loopback
    /// names. See [`Server::allowed_hosts`].
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.hosts = super::HostPolicy::Only(hosts.into_iter().map(Into::into).collect());
        self.hosts_configured = true;
        self
    }

    /// Turns the `Host`/`Origin` check off. See [`Server::allow_any_host`].
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = super::HostPolicy::Any;
        self.hosts_configured = true;
        self
    }

    /// Adds reverse proxies (addresses or ranges: `10.0.0.5`, `10.0.0.0/8`, `fd00::/8`; none by
    /// default) whose `Forwarded` / `X-Forwarded-For` header names the client, for the fair
    /// shares, rate limits per address and telemetry. A value that is neither fails
    /// [`Server::build`]. See [`Server::trusted_proxies`].
    pub fn trusted_proxies<S: AsRef<str>>(mut self, proxies: impl IntoIterator<Item = S>) -> Self {
        for proxy in proxies {
            let proxy = proxy.as_ref();
            match super::IpRange::parse(proxy) {
                Some(range) => self.trusted_proxies.push(range),
                None => self.unreadable_proxies.push(proxy.to_owned()),
            }
        }
        self
    }

    /// Serves without sessions (off). See [`Server::stateless_http`].
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Serves the deprecated HTTP+SSE transport of 2024-11-05 too (off). See
    /// [`Server::legacy_sse`].
    pub fn legacy_sse(mut self, enabled: bool) -> Self {
        self.legacy_sse = enabled;
        self
    }

    /// The liveness and readiness probes' paths (`/healthz`, `/readyz`). See
    /// [`Server::health_paths`].
    pub fn health_paths(
        mut self,
        liveness: impl Into<String>,
        readiness: impl Into<String>,
    ) -> Self {
        self.health_path = Some(liveness.into());
        self.ready_path = Some(readiness.into());
        self
    }

    /// Serves the probes (on), or not. See [`Server::health_routes`].
    pub fn health_routes(mut self, enabled: bool) -> Self {
        let defaults = super::routes::DeployOptions::default();
        if enabled {
            self.health_path = self.health_path.or(defaults.health_path);
            self.ready_path = self.ready_path.or(defaults.ready_path);
        } else {
            self.health_path = None;
            self.ready_path = None;
        }
        self
    }

    /// Answers every POST with `application/json`, never SSE (off). See
    /// [`Server::json_response`].
    pub fn json_response(mut self, enabled: bool) -> Self {
        self.json_response = enabled;
        self
    }

    /// The legacy transport's paths (`/sse`, `/messages`); turns it on. See
    /// [`Server::legacy_sse_paths`].
    pub fn legacy_sse_paths(mut self, sse: impl Into<String>, messages: impl Into<String>) -> Self {
        self.legacy_sse = true;
        self.legacy_sse_path = sse.into();
        self.legacy_messages_path = messages.into();
        self
    }
}

/// The bounds of the task store and the timing of tasks (feature `tasks`): [`Server::task_options`]
/// sets them all.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::{Server, TaskOptions};
///
/// let server = Server::new("demo", "1.0.0")
///     .task_options(TaskOptions::default().max_live(1_000).ttl(Duration::from_secs(600)));
/// # let _ = server;
/// ```
#[cfg(feature = "tasks")]
#[derive(Clone, Default)]
pub struct TaskOptions {
    inner: crate::tasks::TaskOptions,
}

#[cfg(feature = "tasks")]
impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = &self.inner;
        f.debug_struct("TaskOptions")
            .field("max_live", &t.max_live)
            .field("max_live_per_owner", &t.max_live_per_owner)
            .field("max_result_bytes", &t.max_result_bytes)
            .field("result_bytes_total", &t.result_bytes_total)
            .field("result_bytes_per_owner", &t.result_bytes_per_owner)
            .field("ttl", &t.ttl)
            .field("poll_interval", &t.poll_interval)
            .field("store", &t.store.is_some())
            .finish()
    }
}

#[cfg(feature = "tasks")]
impl TaskOptions {
    /// The tasks alive at once (10,000). See [`Server::max_live_tasks`].
    pub fn max_live(mut self, max: usize) -> Self {
        self.inner.max_live = max;
        self
    }

    /// The tasks one owner may have alive (a tenth of `max_live`). See
    /// [`Server::max_live_tasks_per_owner`].
    pub fn max_live_per_owner(mut self, max: usize) -> Self {
        self.inner.max_live_per_owner = Some(max);
        self
    }

    /// The largest result one task keeps (1 MiB). See [`Server::max_task_result`].
    pub fn max_result(mut self, bytes: usize) -> Self {
        self.inner.max_result_bytes = bytes;
        self
    }

    /// The bytes of all tasks' results (64 MiB), and of one owner's (an eighth of that). See
    /// [`Server::task_results_total`].
    pub fn results_total(mut self, bytes: usize, per_owner: Option<usize>) -> Self {
        self.inner.result_bytes_total = bytes;
        self.inner.result_bytes_per_owner = per_owner;
        self
    }

    /// How long a task is kept (1 hour). See [`Server::task_ttl`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.inner.ttl = ttl;
        self
    }

    /// How often clients are told to poll (500 ms). See [`Server::task_poll_interval`].
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.inner.poll_interval = interval;
        self
    }

    /// Keeps tasks in `store` instead of the default in-memory one. See [`Server::task_store`].
    pub fn store(mut self, store: std::sync::Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.inner.store = Some(store);
        self
    }
}

impl Server {
    /// Sets every limit at once (see [`Limits`]: the crate docs' limits table as one value,
    /// `Limits::default()` its defaults). A limit set before with its own setter is replaced.
    pub fn limits(mut self, limits: Limits) -> Self {
        limits.apply(&mut self.options);
        self
    }

    /// The limits this server has so far: `Limits::default()` changed by what was set.
    pub fn current_limits(&self) -> Limits {
        Limits::of(&self.options)
    }

    #[cfg(feature = "http")]
    /// Sets the Streamable HTTP endpoint's options at once (see [`HttpOptions`]); what was set
    /// before with their own setters is replaced. Its bounds are [`Limits`].
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        let errors = options.apply(&mut self.options.http);
        self.setting_errors.extend(errors);
        self
    }

    #[cfg(feature = "tasks")]
    /// Sets the task store's bounds and timing at once (see [`TaskOptions`]); what was set
    /// before with their own setters is replaced.
    pub fn task_options(mut self, options: TaskOptions) -> Self {
        self.options.tasks = options.inner;
        self
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_without_http_are_the_http_settings_own() {
        let http = super::super::HttpOptions::default();
        let d = &HTTP_DEFAULTS;
        assert_eq!(
            (
                d.unread_total,
                d.event_buffer,
                d.session_log_bytes,
                d.total_log_bytes
            ),
            (
                http.unread_total,
                http.event_buffer,
                http.session_log_bytes,
                http.total_log_bytes
            )
        );
        assert_eq!(
            (
                d.max_connections,
                d.header_read_timeout,
                d.body_read_timeout,
                d.max_sessions
            ),
            (
                http.max_connections,
                http.header_read_timeout,
                http.body_read_timeout,
                http.max_sessions
            )
        );
        assert_eq!(
            (
                d.max_sessions_per_peer,
                d.initialize_timeout,
                d.session_idle,
                d.resume_grace
            ),
            (
                http.max_sessions_per_peer,
                http.initialize_timeout,
                http.session_idle,
                http.resume_grace
            )
        );
    }

    #[test]
    fn a_group_set_at_once_is_what_the_single_setters_set() {
        let grouped = Server::builder().limits(
            Limits::default()
                .max_message_size(1000)
                .max_sessions(7)
                .handler_timeout(Duration::from_secs(3)),
        );
        let single = Server::builder()
            .max_message_size(1000)
            .max_sessions(7)
            .handler_timeout(Duration::from_secs(3));
        assert_eq!(grouped.current_limits(), single.current_limits());
        assert_ne!(grouped.current_limits(), Limits::default());
    }

    #[test]
    fn the_fair_shares_settings_are_in_their_groups() {
        // The share is a limit: set in `Limits`, it is what `Server::client_share` sets.
        let grouped = Server::builder().limits(Limits::default().client_share(10));
        let single = Server::builder().client_share(10);
        assert_eq!(grouped.current_limits(), single.current_limits());
        assert_eq!(grouped.options.client_share, 10);
        assert_eq!(Limits::default().client_share, 25);
        // Trusted proxies are the endpoint's: set in `HttpOptions`, they are what
        // `Server::trusted_proxies` sets, and one that cannot be read fails `build`.
        let grouped = Server::builder()
            .http_options(HttpOptions::default().trusted_proxies(["10.0.0.0/8", "::1"]));
        let single = Server::builder().trusted_proxies(["10.0.0.0/8", "::1"]);
        assert_eq!(
            grouped.options.http.trusted_proxies,
            single.options.http.trusted_proxies
        );
        assert_eq!(grouped.options.http.trusted_proxies.len(), 2);
        let built = Server::builder()
            .http_options(HttpOptions::default().trusted_proxies(["proxy.local"]))
            .build();
        let Err(error) = built else {
            panic!("an unreadable proxy fails the build");
        };
        let error = error.to_string();
        assert!(
            error.contains("proxy.local") && error.contains("HttpOptions::trusted_proxies"),
            "{error}"
        );
    }
}
