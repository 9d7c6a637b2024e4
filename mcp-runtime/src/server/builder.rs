//! Building a server: the [`Server`] builder's settings, then [`Server::build`], which checks
//! every definition and fixes the dispatch table, the schemas and the capabilities into a
//! [`McpService`]. Only methods of `Server` live here; what they fill in is in `mod.rs`.

use std::any::TypeId;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

#[cfg(feature = "tasks")]
use serde_json::json;

#[cfg(feature = "oauth")]
use super::OAuth;
use super::dynamic::OptIn;
use super::exchange::McpLayer;
#[cfg(feature = "http")]
use super::http;
use super::registered;
use super::registry::{Catalogue, Registry, Served, Settings};
#[cfg(feature = "http")]
use super::routes;
use super::stateless::Listeners;
use super::stateless::request_state::RequestStateKey;
use super::{
    Budget, CacheHint, Cacheable, Core, ENTRY_OVERHEAD, Items, Kind, McpServer, McpService,
    Options, Selected, Selection, Server, serving_line, share_of,
};
#[cfg(feature = "http")]
use super::{HostPolicy, ServerCard, unreadable_proxy};
use crate::error::{DefinitionError, Error, Result};
use crate::prompt::PromptDef;
use crate::protocol::{
    Icon, Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities,
};
use crate::registration::{Entry, Item};
use crate::resource::ResourceDef;
use crate::schema::SchemaStyle;
#[cfg(feature = "skills")]
use crate::skill::{SkillCatalog, Skills};
use crate::tool::ToolDef;

impl Server {
    /// A server called `name` at `version` that serves every `#[tool]` in the binary.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut server = Self::empty(Selection::All);
        server.name = Some(name.into());
        server.version = Some(version.into());
        server
    }

    /// A server that serves only what is added to it with [`Server::tool`].
    ///
    /// Without [`Server::name`] and [`Server::version`], `serverInfo` is the name and version of
    /// the crate the selected tools were written in (never this runtime's own).
    pub fn builder() -> Self {
        Self::empty(Selection::Explicit(Vec::new()))
    }

    fn empty(selection: Selection) -> Self {
        Self {
            name: None,
            version: None,
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
            instructions: None,
            selection,
            extra: Items::default(),
            dynamic: OptIn::default(),
            mounted: Vec::new(),
            namespaces: Vec::new(),
            pending_errors: Vec::new(),
            attachment: None,
            #[cfg(feature = "skills")]
            skills: Skills::default(),
            #[cfg(feature = "skills")]
            skill_errors: Vec::new(),
            setting_errors: Vec::new(),
            options: Options::default(),
            middleware: None,
            observer: None,
        }
    }

    /// Wraps every request of every transport and era in `layer`, a `tower::Layer` whose
    /// service answers [`McpRequest`](crate::middleware::McpRequest) with
    /// [`McpResponse`](crate::middleware::McpResponse): tower's own (`ConcurrencyLimitLayer`,
    /// `TimeoutLayer`, `LoadShedLayer`), the built-in ones of [`middleware`](crate::middleware),
    /// or yours ([`middleware::from_fn`](crate::middleware::from_fn)). Each call wraps what the
    /// previous ones added, so the last layer added sees a request first. See
    /// [`middleware`](crate::middleware).
    ///
    /// ```
    /// use mcp_runtime::Server;
    /// use tower::limit::ConcurrencyLimitLayer;
    ///
    /// let server = Server::new("demo", "1.0.0").layer(ConcurrencyLimitLayer::new(64));
    /// # let _ = server;
    /// ```
    pub fn layer(mut self, layer: impl McpLayer) -> Self {
        self.middleware = Some(super::exchange::wrap(self.middleware.take(), layer));
        self
    }

    /// Sets `serverInfo.name`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets `serverInfo.version`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets `serverInfo.title`, a display name (sent from 2025-06-18).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `serverInfo.description` (sent from 2025-11-25).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `serverInfo.websiteUrl` (sent from 2025-11-25).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon to `serverInfo` (sent from 2025-11-25).
    pub fn icon(mut self, icon: impl Into<Icon>) -> Self {
        self.icons.push(icon.into());
        self
    }

    /// Sets the `instructions` clients may add to the model's system prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    fn select<F: 'static>(mut self, kind: &'static str) -> Self {
        if let Selection::Explicit(selected) = &mut self.selection {
            selected.push(Selected {
                type_id: TypeId::of::<F>(),
                name: std::any::type_name::<F>(),
                kind,
            });
        }
        self
    }

    /// Serves the `#[tool]` function `tool`. On a server from [`Server::new`], which serves
    /// everything already, this changes nothing.
    ///
    /// Naming a function that is not a `#[tool]` makes [`Server::build`] fail.
    pub fn tool<F: 'static>(self, tool: F) -> Self {
        let _ = tool;
        self.select::<F>("tool")
    }

    /// Serves the `#[resource]` function `resource` (a static resource or a template).
    pub fn resource<F: 'static>(self, resource: F) -> Self {
        let _ = resource;
        self.select::<F>("resource")
    }

    /// Serves the `#[prompt]` function `prompt`.
    pub fn prompt<F: 'static>(self, prompt: F) -> Self {
        let _ = prompt;
        self.select::<F>("prompt")
    }

    /// Serves a tool defined at run time, for example with [`ToolBuilder`](crate::tool::ToolBuilder).
    pub fn tool_def(mut self, tool: ToolDef) -> Self {
        self.extra.tools.push(tool);
        self
    }

    /// Serves a resource or template defined at run time.
    pub fn resource_def(mut self, resource: ResourceDef) -> Self {
        self.extra.resources.push(resource);
        self
    }

    /// Serves a prompt defined at run time.
    pub fn prompt_def(mut self, prompt: PromptDef) -> Self {
        self.extra.prompts.push(prompt);
        self
    }

    /// Serves the items of a `#[server]` impl block too, sharing `state` among them.
    pub fn with<S: McpServer>(mut self, state: S) -> Self {
        let items = Arc::new(state).items();
        self.extra.tools.extend(items.tools);
        self.extra.resources.extend(items.resources);
        self.extra.prompts.extend(items.prompts);
        self
    }

    /// How many items one page of `tools/list`, `resources/list`, `resources/templates/list` and
    /// `prompts/list` holds (100 by default); longer lists continue through `nextCursor`.
    pub fn page_size(mut self, items: usize) -> Self {
        self.options.page_size = items.max(1);
        self
    }

    /// How tool schemas are written; [`SchemaStyle::Portable`] by default.
    pub fn schema_style(mut self, style: SchemaStyle) -> Self {
        self.options.schema_style = style;
        self
    }

    /// The bytes one client stream may hold that the client has not read yet (4 MiB by
    /// default): the stdio output, an SSE response, a `subscriptions/listen` stream. Past it,
    /// stdio stops reading requests until the client catches up (and drops notifications once
    /// twice over), and an SSE response is cut off; its client resumes from the event log with
    /// `Last-Event-ID`. One message is always accepted into an empty buffer, however large.
    pub fn stream_buffer(mut self, bytes: usize) -> Self {
        self.options.stream_buffer = bytes.max(1);
        self
    }

    /// The most resource subscriptions one session (or one `subscriptions/listen`) may hold
    /// (1,000 by default), and the longest URI one may name (8 KiB by default). Past either,
    /// `resources/subscribe` (or the listen) is refused with -32602, and nothing is held.
    pub fn max_subscriptions(mut self, count: usize, uri_bytes: usize) -> Self {
        self.options.max_subscriptions = count;
        self.options.max_subscription_uri = uri_bytes;
        self
    }

    /// The bytes of subscription URIs all sessions and listens may hold together (32 MiB by
    /// default; one client at most its [`client_share`](Self::client_share) of it, 8 MiB); past
    /// it, `resources/subscribe` is refused with -32602 until some are dropped.
    pub fn subscription_bytes_total(mut self, bytes: usize) -> Self {
        self.options.subscription_bytes_total = bytes;
        self
    }

    /// The bytes of requests the server holds at once, from the first byte read until the
    /// request is answered (192 MiB by default). A request is charged what it holds: its
    /// bytes as they arrive (never a `Content-Length` it has not sent), then, before it is
    /// parsed, what parsing it will build (an upper bound from one scan of its text: a JSON
    /// array of small values takes up to a hundred times its text; see
    /// [`ParseCost`](crate::protocol::ParseCost)), and 4 KiB for its task. So this bounds the
    /// largest part of the server's memory (see the crate docs' Limits). One client may hold
    /// at most its share of it ([`client_share`](Self::client_share)), and never less than
    /// the largest message costs at its peak (three times
    /// [`max_message_size`](Self::max_message_size): the text, the string it holds and that
    /// string's unescaped copy). Over HTTP a POST that does not fit gets 503 with
    /// `Retry-After` (`ping`, `initialize`, notifications and responses, which hold nothing
    /// once handled, get through on a small reserve of their own); one that could never fit
    /// gets 413. On stdio the request is answered with an error, as when the in-flight window
    /// is full.
    pub fn request_bytes_total(mut self, bytes: usize) -> Self {
        self.options.request_bytes_total = bytes;
        self
    }

    /// The percentage of each bound the server's clients share that one client may hold (25 by
    /// default; 100 turns the shares off): HTTP connections, request bytes in flight, sessions,
    /// open streams, unread stream bytes, event logs and subscriptions. A client past its
    /// share is refused as if the server were full, while the others keep theirs, so no one
    /// client can lock the others out. A client is its OAuth principal when
    /// [`oauth`](Self::oauth) is set, else its address (IPv6 by its /64; behind a proxy, see
    /// [`trusted_proxies`](Self::trusted_proxies)); what a session holds counts toward the
    /// client that opened it. A share is never less than one of the largest thing it holds (a
    /// message of [`max_message_size`](Self::max_message_size) and its parse, a stream's
    /// buffer, a session's event log, a subscription). stdio serves one client, which holds
    /// whole bounds.
    pub fn client_share(mut self, percent: u8) -> Self {
        self.options.client_share = percent.clamp(1, 100);
        self
    }

    /// The largest message accepted, in bytes (16 MiB by default). A longer line or body gets an
    /// error and is skipped; the connection stays up.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.options.max_message_size = bytes;
        self
    }

    /// The deepest nesting of JSON arrays and objects a message may have (64 by default; `{}` is
    /// one level, and a `tools/call` request reaches its arguments' values at level 4). Deeper
    /// input is refused with a -32700 parse error, checked in one pass before parsing; the
    /// connection stays up. The JSON parser has its own hard limit of 127 levels, so values above
    /// it act as 127.
    pub fn max_nesting_depth(mut self, levels: usize) -> Self {
        self.options.max_nesting_depth = levels.max(1);
        self
    }

    /// The most requests one session may have running at once (256 by default). A request past
    /// it is answered at once with a -32000 error ("too many requests in flight") instead of
    /// waiting in a queue; the client may retry when an earlier answer arrives. A request counts
    /// until its handler has finished (or was cancelled); a JSON-RPC batch counts as one.
    pub fn max_in_flight_requests(mut self, requests: usize) -> Self {
        self.options.max_in_flight = requests.max(1);
        self
    }

    /// How long one request handler may run (no limit by default: a long tool is legitimate,
    /// and the client can cancel with `notifications/cancelled`). A handler running past the
    /// limit is stopped (its future is dropped, and `ctx.is_cancelled()` turns true for anything it
    /// spawned) and the client is answered: a `tools/call` with an `isError` result saying it
    /// timed out, anything else with a -32603 error. A handler that blocks its thread instead of
    /// awaiting cannot be stopped this way.
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.options.handler_timeout = Some(timeout);
        self
    }

    /// How long requests still running when the client hangs up may take to finish (5 s by
    /// default) before they are stopped; over HTTP, also how long a graceful shutdown waits for
    /// open connections before `serve_http` drops them and returns.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.options.shutdown_grace = grace;
        self
    }

    /// How long a request to the client (`ctx.sample`, `ctx.elicit`, `ctx.roots`) waits for its
    /// answer (60 s by default); then it is cancelled and the handler gets
    /// `ClientRequestError::Timeout`.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.options.request_timeout = timeout;
        self
    }

    #[cfg(feature = "http")]
    /// The path of the Streamable HTTP endpoint (`/mcp` by default).
    pub fn http_path(mut self, path: impl Into<String>) -> Self {
        self.options.http.path = path.into();
        self
    }

    #[cfg(feature = "http")]
    /// Also serves the deprecated HTTP+SSE transport of 2024-11-05 (off by default), for clients
    /// that speak nothing newer: GET `/sse` opens a session's event stream, whose first event
    /// names the URI its messages are POSTed to (`/messages?sessionId=...`). The same router
    /// serves both transports; the same guards and limits apply. Off by default because the
    /// transport is deprecated and its two extra routes could collide with an application's own
    /// when [`into_router`](crate::McpService::into_router) is merged into it. Its sessions
    /// live in the process that opened them, even with
    /// [`stateless_http`](Self::stateless_http): behind a load balancer, route a session's POSTs
    /// to the replica holding its stream.
    pub fn legacy_sse(mut self, enabled: bool) -> Self {
        self.options.http.legacy_sse = enabled;
        self
    }

    #[cfg(feature = "http")]
    /// Serves the deprecated HTTP+SSE transport (see [`legacy_sse`](Self::legacy_sse)) at these
    /// paths instead of `/sse` and `/messages`: `sse` for the event stream (GET), `messages` for
    /// the client's messages (POST). Turns it on. The paths must differ from each other and
    /// from the Streamable HTTP path. Under a router nested at a prefix (`Router::nest`), the
    /// endpoint event names the messages path with that prefix.
    pub fn legacy_sse_paths(mut self, sse: impl Into<String>, messages: impl Into<String>) -> Self {
        self.options.http.legacy_sse = true;
        self.options.http.legacy_sse_path = sse.into();
        self.options.http.legacy_messages_path = messages.into();
        self
    }

    #[cfg(feature = "http")]
    /// Accepts these host names (any port) in `Host` and `Origin`, instead of the loopback names
    /// the DNS-rebinding check allows by default.
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.options.http.hosts = HostPolicy::Only(hosts.into_iter().map(Into::into).collect());
        self.options.http.hosts_configured = true;
        self
    }

    #[cfg(feature = "http")]
    /// Turns the `Host`/`Origin` check off, for a server behind its own front door.
    pub fn allow_any_host(mut self) -> Self {
        self.options.http.hosts = HostPolicy::Any;
        self.options.http.hosts_configured = true;
        self
    }

    #[cfg(feature = "http")]
    /// Serves a Server Card (SEP-2127) over HTTP, at the endpoint's path plus `/server-card`
    /// (`/mcp/server-card`), and the AI Catalog that lists it at `/.well-known/ai-catalog.json`.
    /// The card is made from this server's `serverInfo` (version, title, description, icons,
    /// website) and the card's own name and remotes; [`build`](Self::build) fails when it would
    /// break the card's schema (a description is required, at most 100 characters). Off by
    /// default. Both routes are public metadata, like the OAuth metadata: no token, any `Host`,
    /// `Access-Control-Allow-Origin: *`, cacheable for an hour, with an `ETag`.
    pub fn server_card(mut self, card: ServerCard) -> Self {
        self.options.http.server_card = Some(card);
        self
    }

    #[cfg(feature = "http")]
    /// How long an HTTP session may stay idle before it ends (30 minutes by default).
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.options.http.session_idle = idle;
        self
    }

    #[cfg(feature = "http")]
    /// The most HTTP sessions open at once, both transports together (10,000 by default). A
    /// fresh `initialize` that finds them all taken ends the longest idle session (one never
    /// initialized first) of the client holding the most, when that client holds more than the
    /// newcomer; otherwise (and always with [`redis`](Self::redis), whose count is all
    /// replicas', and for a legacy SSE GET) it gets 503 with `Retry-After`. One client holds at
    /// most [`max_sessions_per_peer`](Self::max_sessions_per_peer) of them.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.options.http.max_sessions = sessions;
        self
    }

    #[cfg(feature = "http")]
    /// The most HTTP sessions one client may hold at once (by default its share of
    /// [`max_sessions`](Self::max_sessions), see [`client_share`](Self::client_share): 2,500);
    /// past it that client's `initialize` gets 503 with `Retry-After`, while other clients are
    /// still served. The client is the OAuth principal, else the address (see
    /// [`trusted_proxies`](Self::trusted_proxies) behind a proxy).
    /// [`McpService::into_router`] users run their own server: there a client is its address
    /// only when requests carry `axum::extract::ConnectInfo<SocketAddr>`, and requests with
    /// neither a principal nor an address share no bound by client.
    pub fn max_sessions_per_peer(mut self, sessions: usize) -> Self {
        self.options.http.max_sessions_per_peer = Some(sessions);
        self
    }

    #[cfg(feature = "http")]
    /// The reverse proxies whose `Forwarded` (RFC 7239) or `X-Forwarded-For` header names the
    /// client, as addresses (`10.0.0.5`, `::1`) or ranges (`10.0.0.0/8`, `fd00::/8`); none by
    /// default, so those headers are ignored and a client is the address its connection
    /// comes from. A request whose connection comes from one of them is its client's: the
    /// last address in those headers that is not itself a trusted proxy (`Forwarded` when
    /// present, else `X-Forwarded-For`); with no readable address there, the proxy's own.
    /// A trusted proxy's connections are not limited to one client's share of
    /// [`max_connections`](Self::max_connections), since they carry many clients. Only list
    /// proxies that set these headers themselves: anyone else could claim any address. A
    /// value that is neither an address nor a range fails [`build`](Self::build).
    pub fn trusted_proxies<S: AsRef<str>>(mut self, proxies: impl IntoIterator<Item = S>) -> Self {
        for proxy in proxies {
            let proxy = proxy.as_ref();
            match http::IpRange::parse(proxy) {
                Some(range) => self.options.http.trusted_proxies.push(range),
                None => self
                    .setting_errors
                    .push(unreadable_proxy(proxy, "Server::trusted_proxies")),
            }
        }
        self
    }

    #[cfg(feature = "http")]
    /// The most HTTP connections `serve_http` keeps open at once (512 by default), and one
    /// address at most its [`client_share`](Self::client_share) of them (128; a
    /// [trusted proxy](Self::trusted_proxies)'s only count in all): past either, a new
    /// connection is answered 503 and closed at once, with one warning per burst in the log.
    /// One client (principal or address) also keeps at most that many SSE responses open. Not
    /// applied by [`into_router`](crate::McpService::into_router), whose server is yours.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.options.http.max_connections = connections;
        self
    }

    #[cfg(feature = "http")]
    /// How long `serve_http` gives a client to send a request's headers (10 seconds by
    /// default), counted from the connection's accept and from the end of each response's
    /// body: past it the connection is closed, so half-sent headers and idle keep-alive
    /// connections hold nothing for long. It does not run while a request is served or its
    /// response written. The deadline is checked on a coarse clock that ticks every tenth of
    /// the timeout (at most every second), so the close comes up to one tick late.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.options.http.header_read_timeout = timeout;
        self
    }

    #[cfg(feature = "http")]
    /// How long a client may take to send a request's body once its headers are in (30 seconds
    /// by default); past it the request gets 408 and the connection is closed.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.options.http.body_read_timeout = timeout;
        self
    }

    #[cfg(feature = "http")]
    /// How long an HTTP session may go without `notifications/initialized` (10 seconds by
    /// default): past it the session ends, so `initialize` alone cannot hold a
    /// [`max_sessions`](Self::max_sessions) slot for the whole idle timeout.
    pub fn initialize_timeout(mut self, timeout: Duration) -> Self {
        self.options.http.initialize_timeout = timeout;
        self
    }

    #[cfg(feature = "http")]
    /// How long the requests of a POST answered with an event stream run on once the client's
    /// connection is gone, for it to come back with `Last-Event-ID` (10 seconds by default;
    /// the stream's `retry` asks it to within 1 s). Past it, with no response carrying the
    /// stream again, they are cancelled as `notifications/cancelled` would: their handlers
    /// stop, their places in the session's window come back, and a gateway cancels their
    /// upstream calls. A stream no client can resume (a 2026-07-28 request's, which has no
    /// session) has its requests cancelled as soon as its connection is gone.
    pub fn stream_resume_grace(mut self, grace: Duration) -> Self {
        self.options.http.resume_grace = grace;
        self
    }

    #[cfg(feature = "http")]
    /// How many events each SSE stream keeps for clients that resume with `Last-Event-ID`
    /// (1,000 by default).
    pub fn event_buffer(mut self, events: usize) -> Self {
        self.options.http.event_buffer = events.max(1);
        self
    }

    #[cfg(feature = "http")]
    /// The bytes all HTTP streams together may hold that their clients have not read (128 MiB
    /// by default; one client's streams at most its [`client_share`](Self::client_share) of it,
    /// 32 MiB; each stream also has its own [`stream_buffer`](Self::stream_buffer)). A message
    /// that does not fit cuts off the stream it was for, as its own buffer would.
    pub fn stream_buffer_total(mut self, bytes: usize) -> Self {
        self.options.http.unread_total = bytes;
        self
    }

    #[cfg(feature = "http")]
    /// The bytes of events kept for resumption: by all the streams of one session together
    /// (1 MiB by default) and by all sessions together (128 MiB by default; one client's
    /// sessions at most its [`client_share`](Self::client_share) of it, 32 MiB). A stream makes
    /// room by dropping its own oldest events; an event there is no room for is sent but not
    /// kept, and a client resuming from before it gets what came after.
    pub fn event_log_bytes(mut self, per_session: usize, total: usize) -> Self {
        self.options.http.session_log_bytes = per_session;
        self.options.http.total_log_bytes = total;
        self
    }

    #[cfg(feature = "oauth")]
    /// Makes the HTTP server an OAuth 2.1 resource server: every request on every HTTP route
    /// (both protocol eras, `subscriptions/listen`, the legacy HTTP+SSE transport) must carry a
    /// bearer access token in its `Authorization` header, issued by a trusted authorization
    /// server for this server's resource; the protected resource metadata (RFC 9728) is served
    /// at `/.well-known/oauth-protected-resource` (root and path-suffixed). Items' `scopes`
    /// are checked before their handlers run. stdio is unaffected: it takes its credentials
    /// from the environment.
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.options.http.auth = Some(std::sync::Arc::new(oauth));
        self
    }

    /// OAuth scopes every tool, prompt and resource needs (beside their own `scopes`), e.g.
    /// from `#[server(scopes = [...])]`.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        for scope in scopes {
            let scope = scope.into();
            if !self.options.scopes.contains(&scope) {
                self.options.scopes.push(scope);
            }
        }
        self
    }

    #[cfg(feature = "http")]
    /// Serves Streamable HTTP without sessions: every POST on its own, GET and DELETE 405.
    pub fn stateless_http(mut self) -> Self {
        self.options.http.stateless = true;
        self
    }

    /// The cache hints (`ttlMs`, `cacheScope`) a stateless (2026-07-28) result carries: by
    /// default `ttlMs: 0` and `private` on `server/discover`, every list and `resources/read`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_runtime::{CacheHint, Cacheable, Server};
    ///
    /// let server = Server::new("demo", "1.0.0")
    ///     .cache_hint(Cacheable::Tools, CacheHint::public(Duration::from_secs(300)));
    /// ```
    pub fn cache_hint(mut self, result: Cacheable, hint: CacheHint) -> Self {
        self.options.cache.set(result, hint);
        self
    }

    /// The secret that signs `requestState` in stateless input-required round trips. By default
    /// each process draws a random key, so a retry must reach the same process; give every
    /// replica behind a load balancer the same secret (at least 32 random bytes) instead.
    pub fn request_state_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.options.request_state_secret = Some(secret.as_ref().to_vec());
        self
    }

    /// Shares the state of handshake-era sessions with the other replicas of this server through
    /// the Redis at `url` (`redis://127.0.0.1:6379/0`), so a load balancer with no sticky
    /// sessions can send any request to any replica: session records, the standalone stream's
    /// event log (`Last-Event-ID` resumes on any replica), answers to elicitation, sampling and
    /// roots requests, `list_changed` and `resources/updated`, the `requestState` key (when
    /// no [`request_state_secret`](Self::request_state_secret) is set), and tasks (when no
    /// [`task_store`](Self::task_store) is set: polled, answered and cancelled through any
    /// replica; one whose replica dies reads `failed` once its lease expires). Keys start with
    /// `mcp` unless [`redis_prefix`](Self::redis_prefix) says otherwise.
    ///
    /// The connection is made when serving starts: a Redis that cannot be reached then is a
    /// startup error. While Redis is down later, requests that need it get -32603 and the
    /// process stays up; service resumes when Redis is back. Needs the `redis` feature.
    #[cfg(feature = "redis")]
    pub fn redis(mut self, url: impl Into<String>) -> Self {
        self.options.redis = Some(url.into());
        self
    }

    /// The prefix of this server's Redis keys (`mcp` by default), so several servers can share
    /// one Redis. Before or after [`redis`](Self::redis), it is the same.
    #[cfg(feature = "redis")]
    pub fn redis_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.options.redis_prefix = prefix.into();
        self
    }

    /// How many session records each replica keeps in memory (10,000 by default; `0` turns
    /// the cache off). With [`redis`](Self::redis), a request's session record is read from
    /// Redis once and then served from this cache, with no round trip, until the record
    /// changes: Redis itself tells the replica when another client changes, deletes or expires a
    /// record it read (RESP3 `CLIENT TRACKING`, Redis 6 or later; with an older Redis nothing
    /// is cached, and a warning says so). The cache also holds at most 16 MiB of records;
    /// past either bound any records are dropped and read again when next needed. See
    /// the guide's *Deployment and limits* chapter (`guide/src/deployment.md`) for the window in which a change made through another replica
    /// is not yet seen.
    #[cfg(feature = "redis")]
    pub fn redis_session_cache(mut self, entries: usize) -> Self {
        self.options.redis_session_cache = entries;
        self
    }

    /// How long a client may take to answer an input-required result (10 minutes by default);
    /// a retry with an older `requestState` is refused with -32602.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.options.request_state_ttl = ttl;
        self
    }

    #[cfg(feature = "tasks")]
    /// The most tasks alive at once, all clients together (10,000 by default): a task-capable
    /// call past it is refused with -32603 saying so. Tasks are reclaimed after their TTL, or
    /// when the session that owns them ends.
    pub fn max_live_tasks(mut self, max: usize) -> Self {
        self.options.tasks.max_live = max;
        self
    }

    #[cfg(feature = "tasks")]
    /// The most tasks one client holds alive at once (a tenth of [`Server::max_live_tasks`]
    /// by default, so 1,000): past it that client's task-capable call gets -32603 ("too many
    /// live tasks of yours") while other clients are still served. The client is the task's
    /// owner: the authenticated principal, else the session, else a stateless client's address.
    pub fn max_live_tasks_per_owner(mut self, max: usize) -> Self {
        self.options.tasks.max_live_per_owner = Some(max);
        self
    }

    #[cfg(feature = "tasks")]
    /// The largest result one task keeps, as JSON (1 MiB by default): a tool that returns more
    /// ends its task `failed` (-32603, naming the size and the bound).
    pub fn max_task_result(mut self, bytes: usize) -> Self {
        self.options.tasks.max_result_bytes = bytes;
        self
    }

    #[cfg(feature = "tasks")]
    /// The bytes of all tasks' stored results together (64 MiB by default), and of one owner's
    /// (an eighth of that unless `per_owner` says otherwise). A result with no room ends its
    /// task `failed` (-32603, saying which bound it met); room comes back as tasks are reclaimed.
    /// Counted in the memory ceiling (crate docs, *Limits*).
    pub fn task_results_total(mut self, bytes: usize, per_owner: Option<usize>) -> Self {
        self.options.tasks.result_bytes_total = bytes;
        self.options.tasks.result_bytes_per_owner = per_owner;
        self
    }

    #[cfg(feature = "tasks")]
    /// How long a task is kept after it was created (`ttlMs`; 1 hour by default), and the most a
    /// 2025-11-25 client may ask for with `task.ttl` (a shorter one is honoured). It is never
    /// dropped before, and reclaimed after, whatever its status (a task still running then is
    /// stopped), unless the session that owns it ends first.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.options.tasks.ttl = ttl;
        self
    }

    #[cfg(feature = "tasks")]
    /// How often clients are told to poll a task (`pollIntervalMs`; 500 ms by default).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.options.tasks.poll_interval = interval;
        self
    }

    #[cfg(feature = "tasks")]
    /// Keeps tasks in `store` instead of the default [`MemoryTaskStore`](crate::tasks::MemoryTaskStore)
    /// (whose bound [`Server::max_live_tasks`] sets), and advertises the tasks extension even
    /// when no tool is task-capable at build time.
    pub fn task_store(mut self, store: std::sync::Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.options.tasks.store = Some(store);
        self
    }

    #[cfg(feature = "http")]
    /// Builds the server and serves Streamable HTTP on `addr` until Ctrl-C.
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> Result<()> {
        self.build()?.serve_http(addr).await
    }

    #[cfg(all(feature = "http", unix))]
    /// Builds the server and serves Streamable HTTP on a Unix domain socket at `path` (mode
    /// 0600, removed at shutdown) until Ctrl-C; see
    /// [`McpService::serve_unix`](crate::McpService::serve_unix).
    pub async fn serve_unix(self, path: impl AsRef<std::path::Path>) -> Result<()> {
        self.build()?.serve_unix(path).await
    }

    #[cfg(feature = "skills")]
    /// Serves `skills` (SEP-2640): usually `mcp_runtime::skills!("dir")`, embedded and checked
    /// when the crate compiles, or skills built in code. Declares the
    /// `io.modelcontextprotocol/skills` extension (with `directoryRead`) and serves
    /// `skills/list`, `skills/get`, `resources/directory/read` and every skill file through
    /// `resources/read` at `skill://<skill-path>/<file-path>`.
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills.extend(skills);
        self
    }

    #[cfg(feature = "skills")]
    /// Serves the skills in directory `root`, read now (for content that changes without a
    /// rebuild): the checks of `skills!` fail [`Server::build`]; a symbolic link leaving `root`
    /// is refused.
    pub fn skills_dir(mut self, root: impl AsRef<std::path::Path>) -> Self {
        match Skills::from_dir(root) {
            Ok(skills) => self.skills.extend(skills),
            Err(Error::Definition(errors)) => self.skill_errors.extend(errors),
            Err(other) => self.skill_errors.push(DefinitionError::Invalid {
                kind: "skill",
                name: String::new(),
                location: String::new(),
                problem: other.to_string(),
            }),
        }
        self
    }

    /// The registered items this server serves: every one in the binary but those mounted
    /// elsewhere ([`Server::new`]), or the ones named ([`Server::builder`]); a name that is not
    /// an item is a problem in `errors`.
    pub(super) fn selected_entries(
        &self,
        errors: &mut Vec<DefinitionError>,
    ) -> Vec<&'static Entry> {
        match &self.selection {
            Selection::All => inventory::iter::<Entry>
                .into_iter()
                .filter(|entry| !self.mounted.contains(&(entry.type_id)()))
                .collect(),
            Selection::Explicit(wanted) => {
                let mut out: Vec<&'static Entry> = Vec::new();
                for want in wanted {
                    match registered::find(want.type_id, want.kind) {
                        Some(entry) if !out.iter().any(|e| (e.type_id)() == want.type_id) => {
                            out.push(entry);
                        }
                        Some(_) => {}
                        None => errors.push(DefinitionError::NotAnItem {
                            kind: want.kind,
                            name: want.name.to_owned(),
                        }),
                    }
                }
                out
            }
        }
    }

    /// Validates the definition and fixes everything that does not change per request: the
    /// dispatch table, the schemas, the capabilities.
    ///
    /// Fails with every problem found: duplicate or invalid names (with both source locations),
    /// a function named with [`Server::tool`] that is not a `#[tool]`.
    pub fn build(mut self) -> Result<McpService> {
        let mut errors = Vec::new();
        errors.append(&mut self.pending_errors);
        let selected = self.selected_entries(&mut errors);
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.options.http.auth {
            for problem in oauth.problems() {
                errors.push(DefinitionError::Invalid {
                    kind: "server",
                    name: "oauth".to_owned(),
                    location: "Server::oauth".to_owned(),
                    problem,
                });
            }
        }
        errors.extend(self.setting_errors);
        #[cfg(feature = "http")]
        errors.extend(routes::collisions(&self.options.http));
        let (default_name, default_version) = default_identity(&selected);
        let mut items = self.extra;
        #[cfg(feature = "skills")]
        let skills =
            {
                errors.extend(self.skill_errors);
                let mut problems = Vec::new();
                let (skills, resources) = SkillCatalog::build(self.skills, &mut problems);
                errors.extend(problems.into_iter().map(|(name, problem)| {
                    DefinitionError::Invalid {
                        kind: "skill",
                        location: format!("skill://{name}"),
                        name,
                        problem,
                    }
                }));
                items.resources.extend(resources);
                skills
            };
        let tools = selected.iter().filter(|e| matches!(e.item, Item::Tool(_)));
        items.tools.reserve(tools.count());
        for entry in &selected {
            match entry.item {
                Item::Tool(build) => items.tools.push(build()),
                Item::Resource(build) => items.resources.push(build()),
                Item::Prompt(build) => items.prompts.push(build()),
            }
        }
        let attachment = self.attachment.take();
        if let Some(attachment) = &attachment {
            attachment.check(&items, &mut errors);
        }
        for (tool, page) in crate::app::unserved_links(&items.tools, &items.resources) {
            errors.push(DefinitionError::Invalid {
                kind: "tool",
                name: tool.name().to_owned(),
                location: tool
                    .location()
                    .map_or_else(|| "(built in code)".to_owned(), |l| l.to_string()),
                problem: format!(
                    "its `ui` names the app page `{page}`, which this server does not serve: add it with `Server::resource_def(UiResource::new(\"{page}\", ..).build())` or a `#[resource(\"{page}\")]`"
                ),
            });
        }
        // One line of what is served: a library crate's items that the binary never links
        // vanish silently (see "Registration happens when the binary links" in the guide's
        // *Tools and schemas*), and this shows it.
        // Items that come later (a proxied upstream's) are said to come, and listed with the
        // rest once they are there.
        let served = serving_line(
            &mut items.tools.iter().map(|t| &*t.name),
            &mut items.resources.iter().map(|r| &*r.uri),
            &mut items.prompts.iter().map(|p| &*p.name),
        );
        match attachment.as_ref().map(|a| a.to_come()) {
            Some(to_come) => tracing::info!("serving {served} of its own; {to_come}"),
            None => tracing::info!("serving {served}"),
        }
        let dynamic = self.dynamic;
        let completes = items.prompts.iter().any(|p| !p.completers.is_empty())
            || items.resources.iter().any(|r| !r.completers.is_empty());
        let served = Served {
            tools: !items.tools.is_empty() || dynamic.tools,
            resources: !items.resources.is_empty() || dynamic.resources,
            prompts: !items.prompts.is_empty() || dynamic.prompts,
            completions: completes || dynamic.resources || dynamic.prompts,
        };
        let settings = Settings {
            style: self.options.schema_style,
            page_size: self.options.page_size,
            served,
        };
        #[cfg(feature = "tasks")]
        let task_capable = items
            .tools
            .iter()
            .any(|t| t.task_support() != crate::tool::TaskSupport::Forbidden);
        // Without tasks a tool that runs only as one could never be called.
        #[cfg(not(feature = "tasks"))]
        errors.extend(
            items
                .tools
                .iter()
                .filter(|t| t.task_support() == crate::tool::TaskSupport::Required)
                .map(|tool| DefinitionError::Invalid {
                    kind: "tool",
                    name: tool.name().to_owned(),
                    location: tool
                        .location()
                        .map_or_else(|| "(built in code)".to_owned(), |l| l.to_string()),
                    problem: "it runs only as a task (`task = \"required\"`), and mcp-runtime is built without its `tasks` feature".to_owned(),
                }),
        );
        let catalogue = Catalogue {
            items,
            disabled: Default::default(),
        };
        let registry = Registry::new(catalogue, settings, 0, &mut errors);
        if !errors.is_empty() {
            return Err(Error::Definition(errors));
        }
        let mut info = Implementation::new(
            self.name.unwrap_or(default_name),
            self.version.unwrap_or(default_version),
        );
        info.title = self.title;
        info.description = self.description;
        info.website_url = self.website_url;
        info.icons = (!self.icons.is_empty()).then_some(self.icons);
        #[cfg(feature = "http")]
        if let Some(card) = &self.options.http.server_card
            && let Err(problems) = card.to_json(&info, &[])
        {
            let invalid = |problem| DefinitionError::Invalid {
                kind: "server",
                name: card.name().to_owned(),
                location: "Server::server_card".to_owned(),
                problem,
            };
            return Err(Error::Definition(
                problems.into_iter().map(invalid).collect(),
            ));
        }
        let listed = ListChangedCapability { list_changed: true };
        // Fixed here for the server's life: see "Capabilities are fixed" on `ServerHandle`.
        let capabilities = ServerCapabilities {
            tools: served.tools.then_some(listed),
            resources: served.resources.then_some(ResourcesCapability {
                subscribe: true,
                list_changed: true,
            }),
            prompts: served.prompts.then_some(listed),
            completions: served.completions.then(serde_json::Map::new),
            logging: Some(serde_json::Map::new()),
            #[cfg(feature = "skills")]
            extensions: (!skills.is_empty()).then(|| {
                let mut extensions = serde_json::Map::new();
                extensions.insert(
                    crate::skill::EXTENSION.to_owned(),
                    serde_json::json!({ "directoryRead": true }),
                );
                extensions
            }),
            ..ServerCapabilities::default()
        };
        #[cfg(feature = "tasks")]
        let mut capabilities = capabilities;
        #[cfg(feature = "tasks")]
        if task_capable || self.options.tasks.store.is_some() || self.options.tasks.advertise {
            // Beside any other extension (skills).
            capabilities
                .extensions
                .get_or_insert_with(serde_json::Map::new)
                .insert(crate::tasks::EXTENSION.into(), json!({}));
            let tasks = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
            capabilities.tasks = tasks.as_object().cloned();
        }
        #[cfg(feature = "tasks")]
        let tasks = Arc::new(crate::tasks::Tasks::new(
            &self.options.tasks,
            self.options.redis.is_some(),
        ));
        let request_state = match &self.options.request_state_secret {
            Some(secret) => RequestStateKey::from_secret(secret, self.options.request_state_ttl),
            None => RequestStateKey::random(self.options.request_state_ttl),
        };
        let shares = self.options.client_share;
        let subscription_bytes = Budget::shared(
            self.options.subscription_bytes_total,
            Kind::Subscriptions,
            // One subscription of the longest URI always fits.
            share_of(
                self.options.subscription_bytes_total,
                shares,
                self.options.max_subscription_uri + ENTRY_OVERHEAD,
            ),
        );
        let request_bytes = Budget::shared(
            self.options.request_bytes_total,
            Kind::RequestBytes,
            share_of(
                self.options.request_bytes_total,
                shares,
                self.options.largest_request(),
            ),
        );
        let service = McpService {
            core: Arc::new(Core {
                stamps: OnceLock::new(),
                info,
                instructions: self.instructions,
                registry: RwLock::new(Arc::new(registry)),
                changing: Mutex::new(()),
                capabilities,
                options: self.options,
                sessions: Mutex::new(Vec::new()),
                listeners: Listeners::default(),
                request_state: RwLock::new(request_state),
                shared: OnceLock::new(),
                #[cfg(feature = "tasks")]
                tasks,
                closing: tokio::sync::watch::channel(false).0,
                subscription_bytes,
                request_bytes,
                middleware: self.middleware,
                telemetry: self.observer,
                #[cfg(feature = "skills")]
                skills,
                ready: OnceLock::new(),
                attached: OnceLock::new(),
            }),
        };
        if let Some(attachment) = attachment {
            let (attached, ready) = attachment.start(&service.core);
            let _ = service.core.attached.set(attached);
            let _ = service.core.ready.set(ready);
        }
        Ok(service)
    }

    /// Builds the server and serves it on stdin and stdout until stdin closes.
    pub async fn serve_stdio(self) -> Result<()> {
        self.build()?.serve_stdio().await
    }
}

/// The crate the served items come from; the executable's name when there is no single one.
fn default_identity(entries: &[&Entry]) -> (String, String) {
    if let Some(first) = entries.first()
        && entries.iter().all(|e| e.crate_name == first.crate_name)
    {
        return (first.crate_name.to_owned(), first.crate_version.to_owned());
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "mcp-server".to_owned());
    (exe, "0.0.0".to_owned())
}
