//! Building a server and serving it.
//!
//! [`Server`] collects what to serve (every `#[tool]` in the binary, or an explicit selection)
//! and how; [`Server::build`] validates it into a [`McpService`], where the dispatch table, the
//! schemas and the capabilities are fixed once. Transports then open sessions on the service.
//! What it serves can change while it runs, one whole registry snapshot at a time
//! ([`ServerHandle`], `dynamic.rs`).
//!
//! # Where it sits
//!
//! The core of a server: the builder and its options, the registry, the sessions and the dispatch,
//! and the types the capabilities around it plug into: the request path the layers see
//! (`exchange.rs`), the connection as the dispatch sees it (`link.rs`), the observer the telemetry
//! implements (`observe.rs`), the store the replicas share (`store.rs`) and the panic catcher
//! (`catch.rs`). It may import the items (`tool`, `prompt`, `resource`, `completion`, `skill`,
//! `app`, `registration`), `context`, `handle`, `trace`, `protocol`, `schema`, `metadata` and
//! `error`. The capabilities around it import it, never the other way: the dispatch reaches
//! each through a trait or a function type defined here and installed when the server is built
//! (the `Route` of `exchange.rs`, `observe.rs`'s `Observer`, `store.rs`'s `SharedStore`,
//! `dispatch.rs`'s `Tasking`). Only the builder and the options name `tasks`, whose settings
//! they hold and whose `Tasking` they install; the transports and the gateway import the server.

mod attach;
#[cfg_attr(not(feature = "http"), allow(dead_code, unreachable_pub))]
pub(crate) mod auth;
mod budget;
mod builder;
mod card;
pub(crate) mod catch;
pub(crate) mod dispatch;
mod dynamic;
pub(crate) mod exchange;
pub(crate) mod fast_map;
mod fifo;
#[cfg(feature = "http")]
mod http;
mod link;
mod mount;
pub(crate) mod options;
pub(crate) mod outbox;
mod pagination;
mod registered;
pub(crate) mod registry;
#[cfg(feature = "http")]
mod routes;
mod session;
// The shares are of HTTP's bounds; stdio serves one client, which holds whole bounds.
pub(crate) mod observe;
#[cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]
mod share;
pub(crate) mod stateless;
pub(crate) mod store;
mod window;

use std::any::TypeId;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::DefinitionError;
use crate::handle::{Broadcast, ListKind, ServerHandle};
use crate::prompt::PromptDef;
use crate::protocol::{
    Icon, Implementation, LoggingLevel, ServerCapabilities, encode_notification,
};
use crate::resource::ResourceDef;
use crate::schema::SchemaStyle;
#[cfg(feature = "skills")]
use crate::skill::{SkillCatalog, Skills};
use crate::tool::ToolDef;

pub(crate) use self::attach::{Attached, Attachment};
#[cfg(feature = "oauth")]
pub(crate) use self::auth::Dpop;
#[cfg(feature = "oauth")]
pub use self::auth::{OAuth, TokenValidation};
pub(crate) use self::budget::{Account, Budget, Charge, ENTRY_OVERHEAD, REQUEST_OVERHEAD};
pub use self::card::{
    AI_CATALOG_MEDIA_TYPE, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_SCHEMA, ServerCard,
};
#[cfg(feature = "http")]
pub(crate) use self::dispatch::handle_stateless;
pub use self::dynamic::Changes;
use self::dynamic::OptIn;
use self::exchange::Next;
pub(crate) use self::fast_map::FastMap;
#[cfg(feature = "http")]
pub(crate) use self::http::{HostPolicy, HttpOptions, IpRange};
pub(crate) use self::link::Transport;
#[cfg_attr(not(feature = "client"), allow(unused_imports))]
pub(crate) use self::mount::{SEPARATOR, is_valid_namespace, namespaced};
use self::observe::Observer;
#[cfg(feature = "http")]
pub(crate) use self::outbox::Weigh;
#[cfg(feature = "http")]
pub(crate) use self::outbox::channel_within;
pub(crate) use self::outbox::{Notifier, Outbox, Overflow, Sink, channel};
#[cfg(feature = "http")]
pub(crate) use self::outbox::{Opener, Queue};
use self::registry::Registry;
pub(crate) use self::session::Session;
#[cfg_attr(not(feature = "http"), allow(unused_imports))]
pub(crate) use self::share::{Client, ClientKey, Clients, Kind, share_of};
use self::stateless::request_state::RequestStateKey;
pub use self::stateless::{CacheHint, CacheScope, Cacheable};
use self::stateless::{CacheHints, Listeners, Stamps};
#[cfg(feature = "http")]
pub(crate) use self::stateless::{Envelope, is_stateless, read_envelope};
pub(crate) use self::window::Window;

/// What a server serves, in its start-up line: `3 tools [a, b, c], 0 resources [], 1 prompts
/// [p]`.
pub(crate) fn serving_line<'a>(
    tools: &mut dyn Iterator<Item = &'a str>,
    resources: &mut dyn Iterator<Item = &'a str>,
    prompts: &mut dyn Iterator<Item = &'a str>,
) -> String {
    let list = |names: &mut dyn Iterator<Item = &'a str>, kind: &str| {
        let names: Vec<&str> = names.collect();
        format!("{} {kind} [{}]", names.len(), names.join(", "))
    };
    format!(
        "{}, {}, {}",
        list(tools, "tools"),
        list(resources, "resources"),
        list(prompts, "prompts")
    )
}

/// Limits and behaviours a server can tune. Every field has a documented default.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// How tool schemas are written. Default: [`SchemaStyle::Portable`].
    pub(crate) schema_style: SchemaStyle,
    /// The largest message accepted, in bytes. Default: 16 MiB.
    pub(crate) max_message_size: usize,
    /// The deepest nesting of arrays and objects accepted in a message. Default: 64.
    pub(crate) max_nesting_depth: usize,
    /// The most requests of one session running at once. Default: 256.
    pub(crate) max_in_flight: usize,
    /// How long a request handler may run before it is stopped. Default: none.
    pub(crate) handler_timeout: Option<Duration>,
    /// How long in-flight requests may run on after the client hangs up. Default: 5 s.
    pub(crate) shutdown_grace: Duration,
    /// How many items a list page holds. Default: 100.
    pub(crate) page_size: usize,
    /// How long a request to the client (sampling, elicitation, roots) may wait. Default: 60 s.
    pub(crate) request_timeout: Duration,
    /// The bytes one client stream may hold unread. Default: 4 MiB.
    pub(crate) stream_buffer: usize,
    /// The most resource subscriptions one session (or one listen) holds. Default: 1,000.
    pub(crate) max_subscriptions: usize,
    /// The longest URI a subscription may name, in bytes. Default: 8 KiB.
    pub(crate) max_subscription_uri: usize,
    /// The bytes of subscription URIs all sessions hold together. Default: 32 MiB.
    pub(crate) subscription_bytes_total: usize,
    /// The bytes requests in flight hold together: their text, then what parsing it builds.
    /// Default: 192 MiB.
    pub(crate) request_bytes_total: usize,
    /// The percentage of each shared bound one client may hold. Default: 25.
    pub(crate) client_share: u8,
    /// The Streamable HTTP settings.
    #[cfg(feature = "http")]
    pub(crate) http: HttpOptions,
    /// The OAuth scopes every item needs (`Server::required_scopes`), beside its own.
    pub(crate) scopes: Vec<String>,
    /// The cache hints of stateless results. Default: `ttlMs: 0`, `private`, everywhere.
    pub(crate) cache: CacheHints,
    /// The secret `requestState` is signed with. Default: random per process.
    pub(crate) request_state_secret: Option<Vec<u8>>,
    /// The Redis URL of the state shared with other replicas (`Server::redis`).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) redis: Option<String>,
    /// The prefix of its keys (`Server::redis_prefix`). Default: `mcp`.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) redis_prefix: String,
    /// How many session records each replica caches (`Server::redis_session_cache`).
    /// Default: 10,000.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) redis_session_cache: usize,
    /// How long a `requestState` stays valid. Default: 10 minutes.
    pub(crate) request_state_ttl: Duration,
    /// The task store and its bounds.
    #[cfg(feature = "tasks")]
    pub(crate) tasks: crate::tasks::TaskOptions,
}

impl Options {
    /// What the largest request holds at its peak: the text of a message of
    /// `max_message_size` and what parsing it builds (one string of that size, and its
    /// unescaped scratch copy), with the request's own overhead. One client's share of the
    /// request budget is never less, so any client may send one.
    pub(crate) fn largest_request(&self) -> usize {
        self.max_message_size
            .saturating_mul(3)
            .saturating_add(crate::protocol::PARSE_SLACK + REQUEST_OVERHEAD)
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            schema_style: SchemaStyle::Portable,
            max_message_size: 16 * 1024 * 1024,
            max_nesting_depth: 64,
            max_in_flight: 256,
            handler_timeout: None,
            shutdown_grace: Duration::from_secs(5),
            page_size: 100,
            request_timeout: Duration::from_secs(60),
            stream_buffer: 4 * 1024 * 1024,
            max_subscriptions: 1_000,
            max_subscription_uri: 8 * 1024,
            subscription_bytes_total: 32 * 1024 * 1024,
            request_bytes_total: 192 * 1024 * 1024,
            client_share: 25,
            #[cfg(feature = "http")]
            http: HttpOptions::default(),
            scopes: Vec::new(),
            cache: CacheHints::default(),
            request_state_secret: None,
            redis: None,
            redis_prefix: "mcp".to_owned(),
            redis_session_cache: 10_000,
            request_state_ttl: Duration::from_secs(600),
            #[cfg(feature = "tasks")]
            tasks: crate::tasks::TaskOptions::default(),
        }
    }
}

enum Selection {
    /// Everything registered with `#[tool]`, `#[resource]` and `#[prompt]` in the binary.
    All,
    /// Only what the builder named.
    Explicit(Vec<Selected>),
}

struct Selected {
    type_id: TypeId,
    name: &'static str,
    kind: &'static str,
}

/// The items of a `#[server]` impl block, for [`Server::with`]. The macro implements this.
pub trait McpServer: Send + Sync + Sized + 'static {
    /// The `serverInfo` and `instructions` the `#[server]` attribute gives, with name and version
    /// defaulting to the crate's.
    fn server_defaults() -> ServerDefaults;

    /// The tools, resources and prompts of the impl block, each sharing `self`.
    fn items(self: Arc<Self>) -> Items;

    /// A server that serves this value's items, described by its `#[server]` attribute.
    fn into_server(self) -> Server {
        let defaults = Self::server_defaults();
        let mut server = Server::builder()
            .name(defaults.name)
            .version(defaults.version);
        server.title = defaults.title;
        server.description = defaults.description;
        server.website_url = defaults.website_url;
        server.instructions = defaults.instructions;
        server.icons = defaults.icons;
        server.with(self)
    }
}

/// What a `#[server]` attribute says about the server.
#[derive(Debug, Clone, Default)]
pub struct ServerDefaults {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `serverInfo.description`.
    pub description: Option<String>,
    /// `serverInfo.websiteUrl`.
    pub website_url: Option<String>,
    /// `instructions`.
    pub instructions: Option<String>,
    /// `serverInfo.icons`.
    pub icons: Vec<Icon>,
}

/// The definitions a [`McpServer`] contributes.
#[derive(Default)]
pub struct Items {
    /// Tools.
    pub tools: Vec<ToolDef>,
    /// Resources and templates.
    pub resources: Vec<ResourceDef>,
    /// Prompts.
    pub prompts: Vec<PromptDef>,
}

/// An MCP server being set up: what it serves, what it says about itself, and its limits.
///
/// `Server::new` serves every `#[tool]` linked into the binary; `Server::builder` serves only
/// what is named with [`Server::tool`].
///
/// ```no_run
/// use mcp_runtime::prelude::*;
///
/// /// Add two integers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// #[tokio::main]
/// async fn main() -> mcp_runtime::Result<()> {
///     Server::new("demo", env!("CARGO_PKG_VERSION")).serve_stdio().await
/// }
/// ```
///
/// # What the builder sets
///
/// - **What it serves**: everything registered ([`Server::new`]) or what is named
///   ([`Server::builder`], [`tool`](Self::tool), [`resource`](Self::resource),
///   [`prompt`](Self::prompt), [`with`](Self::with), the `_def` forms), skills, the Server Card.
/// - **What it says about itself**: [`name`](Self::name), [`version`](Self::version),
///   [`title`](Self::title), [`instructions`](Self::instructions), ...
/// - **Its settings, in groups** with their documented defaults: [`limits`](Self::limits)
///   ([`Limits`](crate::Limits): the crate docs' limits table as one value, with one client's
///   share of each bound, `client_share`), `http_options` (`HttpOptions`: the endpoint's path,
///   hosts, trusted proxies, sessions, the legacy transport), `task_options` (`TaskOptions`:
///   the task store's bounds). Each single setter below
///   ([`max_message_size`](Self::max_message_size), [`allowed_hosts`](Self::allowed_hosts), ...)
///   sets one value of a group.
/// - **Middleware**: [`layer`](Self::layer) (a `tower::Layer` around every request) and
///   [`telemetry`](Self::telemetry) (OpenTelemetry's conventions), rather than more setters.
/// - **Subsystems with their own builders**: `oauth` (`OAuth`), `redis`, `task_store`,
///   [`cache_hint`](Self::cache_hint).
///
/// # The inventory trap
///
/// Registration happens at link time. A library crate whose items the binary never names is
/// not linked, and its tools silently go missing; name it once with `use my_tools as _;`.
pub struct Server {
    name: Option<String>,
    version: Option<String>,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    icons: Vec<Icon>,
    instructions: Option<String>,
    selection: Selection,
    extra: Items,
    /// Kinds that may be added while serving though none is registered at build.
    dynamic: OptIn,
    options: Options,
    /// The registered items mounted into this server under a namespace (`Server::mount`):
    /// [`Server::new`]'s selection of every item leaves them out.
    mounted: Vec<TypeId>,
    /// The namespaces taken, each with what took it (`Server::mount`, `Server::proxy`).
    namespaces: Vec<(String, &'static str)>,
    /// Problems found before `build` (a mounted server's), reported by it.
    pending_errors: Vec<DefinitionError>,
    /// What a layer above the server builds into it: the gateway's proxied upstreams.
    attachment: Option<Box<dyn Attachment>>,
    /// Agent skills (SEP-2640), and the problems of loading them.
    #[cfg(feature = "skills")]
    skills: Skills,
    #[cfg(feature = "skills")]
    skill_errors: Vec<DefinitionError>,
    /// The middleware around every request (`Server::layer`); none by default.
    middleware: Option<Next>,
    /// Spans and metrics by OpenTelemetry's conventions (`Server::telemetry`); off by default.
    /// The telemetry, once `Server::telemetry` turned it on.
    pub(crate) observer: Option<Arc<dyn Observer>>,
    /// Settings that could not be read (a trusted proxy that is not an address or a range),
    /// reported by `build`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    setting_errors: Vec<DefinitionError>,
}

#[cfg(feature = "http")]
/// The error `build` reports for a trusted proxy set at `location` that is neither an address
/// nor a range.
fn unreadable_proxy(proxy: &str, location: &str) -> DefinitionError {
    DefinitionError::Invalid {
        kind: "server",
        name: "trusted_proxies".to_owned(),
        location: location.to_owned(),
        problem: format!(
            "`{proxy}` is not an address or a range such as `10.0.0.0/8` (a range with no bits \
             set past its prefix)"
        ),
    }
}

/// What a built server shares across all its sessions.
pub(crate) struct Core {
    pub(crate) info: Implementation,
    /// What stateless results gain (`resultType`, server info, cache hints): made by the first
    /// stateless request, since a server may never see one. See [`Core::stamps`].
    stamps: OnceLock<Stamps>,
    pub(crate) instructions: Option<String>,
    /// What is served now; [`Core::registry`] takes a snapshot of it.
    registry: RwLock<Arc<Registry>>,
    /// Held while a change builds the next snapshot: changes apply one after another.
    changing: Mutex<()>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) options: Options,
    /// The live sessions, for announcements; a session that ended is dropped from here lazily.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// The open `subscriptions/listen` requests.
    pub(crate) listeners: Listeners,
    /// Signs the `requestState` of input-required results.
    pub(crate) request_state: RwLock<RequestStateKey>,
    /// The store shared with other replicas, once connected (`Server::redis`); none by default.
    pub(crate) shared: OnceLock<Arc<dyn self::store::SharedStore>>,
    /// The task store and settings.
    #[cfg(feature = "tasks")]
    pub(crate) tasks: Arc<dyn self::dispatch::Tasking>,
    /// Set when the server shuts down: open listens end with their final result.
    closing: tokio::sync::watch::Sender<bool>,
    /// The bytes of subscription URIs all sessions and listens hold together.
    pub(crate) subscription_bytes: Arc<Budget>,
    /// The bytes of requests being read, parsed or run.
    pub(crate) request_bytes: Arc<Budget>,
    /// The middleware around every request (`Server::layer`).
    pub(crate) middleware: Option<Next>,
    /// Spans and metrics by OpenTelemetry's conventions (`Server::telemetry`).
    pub(crate) telemetry: Option<Arc<dyn Observer>>,
    /// The skills served (fixed for the server's life).
    #[cfg(feature = "skills")]
    pub(crate) skills: SkillCatalog,
    /// Turns `true` once what is attached (the gateway's upstreams) is ready to be served;
    /// unset when nothing is attached.
    ready: OnceLock<tokio::sync::watch::Receiver<bool>>,
    /// What is attached, running (the gateway's upstreams).
    pub(crate) attached: OnceLock<Arc<dyn Attached>>,
}

impl Core {
    /// The stamps of stateless results.
    pub(crate) fn stamps(&self) -> &Stamps {
        self.stamps
            .get_or_init(|| Stamps::new(&self.info, &self.options.cache))
    }

    pub(crate) fn register_session(&self, session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    /// Ends every open `subscriptions/listen` with its final result.
    pub(crate) fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Completes when the server, or `session` when given, is shutting down.
    pub(crate) async fn closed(&self, connection: Option<tokio::sync::watch::Receiver<bool>>) {
        let mut server = self.closing.subscribe();
        let server = async move {
            let _ = server.wait_for(|closing| *closing).await;
        };
        match connection {
            Some(mut ending) => {
                tokio::select! {
                    () = server => {}
                    _ = ending.wait_for(|closing| *closing) => {}
                }
            }
            None => server.await,
        }
    }

    /// The key signing `requestState`.
    pub(crate) fn request_state(&self) -> RequestStateKey {
        self.request_state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The store shared with other replicas, if any.
    pub(crate) fn shared(&self) -> Option<&Arc<dyn self::store::SharedStore>> {
        self.shared.get()
    }

    /// A client's answer that reached another replica, for the session here that waits for it.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn answer_from_elsewhere(
        &self,
        session: &str,
        id: crate::protocol::RequestId,
        message: serde_json::Value,
    ) {
        let outcome = match message.get("error") {
            Some(error) => match serde_json::from_value(error.clone()) {
                Ok(error) => Err(error),
                Err(_) => return,
            },
            None => Ok(message
                .get("result")
                .cloned()
                .unwrap_or(serde_json::Value::Null)),
        };
        for live in self.live_sessions() {
            if live.trace_name.get().map(String::as_str) == Some(session) {
                live.settle_answer(&id, outcome.clone());
            }
        }
    }

    /// Writes `message` to the standalone log of the shared sessions it is for: those subscribed
    /// to `uri`, or all of them.
    fn notify_shared(
        &self,
        store: &Arc<dyn self::store::SharedStore>,
        uri: Option<&str>,
        message: Vec<u8>,
    ) {
        let store = Arc::clone(store);
        let uri = uri.map(str::to_owned);
        #[cfg(feature = "http")]
        let keep = self.options.http.event_buffer;
        // A store is only ever connected by the HTTP transport.
        #[cfg(not(feature = "http"))]
        let keep = 1;
        tokio::spawn(async move {
            let sessions = match store.sessions(uri.as_deref()).await {
                Ok(sessions) => sessions,
                Err(error) => {
                    tracing::error!(%error, "a notification could not reach the sessions of other replicas");
                    return;
                }
            };
            for session in sessions {
                if let Err(error) = store.append_event(&session, &message, keep).await {
                    tracing::error!(%error, "a notification could not be logged for a session");
                }
            }
        });
    }

    fn live_sessions(&self) -> Vec<Arc<Session>> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Broadcast for Core {
    fn resource_updated(&self, uri: &str) {
        if self.capabilities.resources.is_none() {
            return;
        }
        let message = encode_notification(
            "notifications/resources/updated",
            Some(&json!({ "uri": uri })),
        );
        self.listeners.resource_updated(uri);
        if let Some(store) = self.shared() {
            let origin = store.replica();
            let fanout = self::store::Fanout::Updated {
                origin,
                uri: uri.to_owned(),
            };
            let publisher = Arc::clone(store);
            tokio::spawn(async move {
                if let Err(error) = publisher.publish(fanout).await {
                    tracing::error!(%error, "a resource update could not reach other replicas");
                }
            });
            self.notify_shared(store, Some(uri), message);
            return;
        }
        for session in self.live_sessions() {
            let subscribed = session
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(uri);
            if subscribed {
                session.notify(message.clone());
            }
        }
    }

    fn list_changed(&self, kind: ListKind) {
        let (advertised, method) = match kind {
            ListKind::Tools => (
                self.capabilities.tools.is_some(),
                "notifications/tools/list_changed",
            ),
            ListKind::Resources => (
                self.capabilities.resources.is_some(),
                "notifications/resources/list_changed",
            ),
            ListKind::Prompts => (
                self.capabilities.prompts.is_some(),
                "notifications/prompts/list_changed",
            ),
        };
        if !advertised {
            return;
        }
        self.listeners.list_changed(kind, method);
        let message = encode_notification::<()>(method, None);
        if let Some(store) = self.shared() {
            let fanout = self::store::Fanout::ListChanged {
                origin: store.replica(),
                kind: kind.item().to_owned(),
                method: method.to_owned(),
            };
            let publisher = Arc::clone(store);
            tokio::spawn(async move {
                if let Err(error) = publisher.publish(fanout).await {
                    tracing::error!(%error, "a list change could not reach other replicas");
                }
            });
            self.notify_shared(store, None, message);
            return;
        }
        for session in self.live_sessions() {
            if session.initialized.load(Ordering::Acquire) {
                session.notify(message.clone());
            }
        }
    }

    fn log(&self, level: LoggingLevel, logger: Option<&str>, data: &Value) {
        let mut params = json!({"level": level, "data": data});
        if let Some(logger) = logger {
            params["logger"] = Value::from(logger);
        }
        let message = encode_notification("notifications/message", Some(&params));
        for session in self.live_sessions() {
            let least = LoggingLevel::from_index(session.log_level.load(Ordering::Relaxed));
            if level >= least {
                session.notify(message.clone());
            }
        }
    }
}

/// A validated server, ready to serve: cheap to clone, and every clone serves the same tools.
#[derive(Clone)]
pub struct McpService {
    pub(crate) core: Arc<Core>,
}

impl McpService {
    /// The `serverInfo` this server reports.
    pub fn info(&self) -> &Implementation {
        &self.core.info
    }

    /// The capabilities this server advertises.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.core.capabilities
    }

    /// A handle to change what the server serves while it runs (tools, resources, prompts)
    /// and to announce changes to the clients: resource updates, list changes.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle::new(Arc::clone(&self.core) as Arc<dyn Broadcast>)
    }

    /// Ends every open `subscriptions/listen` stream with its final result, as a graceful
    /// shutdown should. [`McpService::serve_http`] does this itself; call it before shutting down
    /// a server mounted with [`McpService::into_router`].
    pub fn close_subscriptions(&self) {
        self.core.close();
    }
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("info", &self.core.info)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "redis"))]
mod tests {
    use super::Server;

    /// `redis_prefix` and `redis` in either order configure the same store.
    #[test]
    fn the_redis_prefix_holds_whichever_comes_first() {
        let url = "redis://127.0.0.1:6379/0";
        let after = Server::new("t", "1").redis(url).redis_prefix("app");
        let before = Server::new("t", "1").redis_prefix("app").redis(url);
        for server in [after, before] {
            assert_eq!(server.options.redis.as_deref(), Some(url));
            assert_eq!(server.options.redis_prefix, "app");
        }
        let default = Server::new("t", "1").redis(url);
        assert_eq!(default.options.redis_prefix, "mcp");
    }
}
