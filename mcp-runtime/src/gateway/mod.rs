//! A gateway: other MCP servers served through this one. [`Server::mount`] puts another
//! server's items inside this one, in-process; [`Server::proxy`] serves the items of a real
//! MCP server reached over stdio or Streamable HTTP ([`Upstream`]), through
//! [`mcp_runtime::client`](crate::client). Enable the `client` feature for proxies.
//!
//! ```no_run
//! use mcp_runtime::gateway::Upstream;
//! use mcp_runtime::prelude::*;
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     Server::new("gateway", "1.0.0")
//!         // `time_get_current_time`, `time_convert_time`
//!         .proxy("time", Upstream::stdio("uvx", ["mcp-server-time"]))
//!         // `docs_search`, ... over HTTP, with a token
//!         .proxy("docs", Upstream::http("https://docs.example.com/mcp").bearer_token("s3cret"))
//!         .serve_http("127.0.0.1:8000")
//!         .await
//! }
//! ```
//!
//! # Names
//!
//! An upstream's tool or prompt `name` is served as `{namespace}_{name}` (`time` +
//! `get_current_time` is `time_get_current_time`); with the empty namespace, `""`, under its
//! own name. Its resources and resource templates keep their URIs, so the links and embedded
//! resources its results carry go on working.
//!
//! - A name that is not a valid tool name once prefixed (over 64 characters, or characters
//!   outside `A-Z a-z 0-9 _ - .`, which the spec's 128-character names may hold) is made one:
//!   each character outside the set becomes `_`, and a name still over 64 characters is cut to
//!   55 and ends with `-` and 8 hex digits of the SHA-256 of the full name, so it stays unique
//!   and the same from run to run. A made name that another of the upstream's names would be
//!   served as too (`read file` beside `read_file`) ends that way as well (`fs_read_file-…`),
//!   whatever the order they are listed in: a name that was valid keeps it, and every tool the
//!   upstream lists stays callable. Calls are forwarded under the upstream's own name.
//! - A namespace owns the names that start with `{namespace}_`: [`Server::build`] refuses a
//!   local tool or prompt (or a mounted one) whose name does, and two namespaces of which one
//!   is the other's prefix (`a` and `a_b`), naming both places. A namespace is 1 to 63
//!   characters of that set, used once.
//! - Clashes found while serving (an upstream's item under a name, URI or template that a
//!   local item, an item added at run time or another upstream already serves, or a name the
//!   upstream lists twice): the item served first keeps it, in this order: local items, then
//!   the upstreams in the order they were added to the server, each in its listing order. The
//!   other item is left out, with one warning in the log naming both; should the first go,
//!   the other takes its place at the next refresh.
//!
//! **What a careless upstream lists.** A tool without an `inputSchema` is served with
//! `{"type": "object"}`. What cannot be served is left out, with one warning naming the item
//! and why, and the rest is served: an item that does not decode (a tool without a name, say),
//! a tool whose input schema is not an object, a URI template that does not parse, a template
//! no URI could tell from one served before it. Lists are read page by page up to
//! [`Upstream::max_items`] of each kind (at most 1,000 pages); the pages past it are not asked
//! for. [`McpService::upstreams`](crate::McpService::upstreams) counts what each upstream
//! listed and what of it is left out ([`UpstreamStatus::left_out`]).
//!
//! # What is relayed
//!
//! Proxied items are ordinary items of this server, kept in step with the upstream through
//! the runtime's own run-time changes ([`ServerHandle`](crate::ServerHandle)): listed when it
//! connects, listed again on its `list_changed` (each kind it advertises), and every change
//! announced downstream with `list_changed`. Every OAuth scope ([`Server::required_scopes`],
//! [`Upstream::scopes`]), limit, timeout and layer ([`Server::layer`]) of this server applies
//! to them as to local items; [`Upstream::layer`] wraps one upstream's items only, inside the
//! server's layers.
//!
//! - `tools/call`, `resources/read`, `prompts/get`, `completion/complete`: forwarded under the
//!   upstream's names, with the downstream request's `_meta` (but the protocol's own keys);
//!   results as the upstream sent them, shaped for the downstream client's revision; an
//!   upstream's JSON-RPC error is answered as it was.
//! - Progress: a downstream request with a `progressToken` asks the upstream for progress and
//!   relays each notification with the downstream token.
//! - Logging: the upstream's `notifications/message` of a call reaches that call's client at
//!   or above its level (`logger` prefixed with the namespace). A handshake-era upstream is
//!   asked for everything (`logging/setLevel debug`) and the gateway filters per client; a
//!   2026-07-28 upstream gets each downstream request's own `logLevel`.
//! - Cancellation: a downstream cancellation (or the gateway's handler timeout, or an HTTP
//!   event stream its client left and did not resume within `Server::stream_resume_grace`)
//!   cancels the upstream request (`notifications/cancelled`) and frees its place.
//! - Sampling, elicitation, roots: the upstream's request is asked of the downstream client
//!   whose call it belongs to, through the same machinery as `ctx.sample`, `ctx.elicit` and
//!   `ctx.roots`, so each side speaks its own era: a 2026-07-28 client answers a 2025-11-25
//!   upstream's `elicitation/create` in an `input_required` round, and a handshake-era client
//!   answers a 2026-07-28 upstream's input requests as requests on its session (keys kept).
//!   The client's capability is checked; without it the upstream gets -32601.
//! - `resources/subscribe` (and a listen's `resourceSubscriptions`): the upstream is
//!   subscribed while any downstream session or listen holds the URI, and its
//!   `notifications/resources/updated` reach them.
//! - Tasks: an upstream tool's `execution.taskSupport` is the proxied tool's, so a client
//!   that takes tasks gets this server's tasks for it; a `required` tool runs as an upstream
//!   task too, polled until it ends (its input requests relayed, a cancellation relayed).
//!
//! **Which call a message belongs to.** Over HTTP the upstream's requests and notifications
//! for a call come on that call's own response stream, and in 2026-07-28 its questions are
//! that call's `input_required` rounds: they reach that call's client. Over stdio in the
//! handshake era (and on an HTTP upstream's standalone stream) nothing on the wire says which
//! call a request or a log message belongs to: the gateway gives it to the upstream's one
//! call in flight. With several in flight (or none), a request is refused with -32603 saying
//! so, and a log message is not relayed (it is logged here at `debug`): a gateway never hands
//! one client's conversation to another. A `roots/list` that names no call is always refused
//! (-32603): roots are each client's, the upstream connection is shared by all, and a
//! handshake-era server asks for them once it connects (server-everything does) rather than
//! for a call. Within a call (its HTTP stream, or its 2026-07-28 input requests) roots are
//! relayed like the rest. An upstream commonly complains of the refusal on its stderr; should
//! it end later, the reason quoting its last stderr line says how long before the end that
//! line was written and that this gateway refused its `roots/list`, and why.
//!
//! **Not relayed:** a `roots/list_changed` of a downstream client (the upstream connection is
//! shared), the upstream's `ping`, its skills extension (`skills/list`, `skills/get`,
//! directory reads: the skill files are ordinary resources and read), and its `instructions`
//! (this server's own are served). Upstream notifications of no call (a log message with no
//! call in flight, task status notifications) stay here.
//!
//! # Failures
//!
//! An upstream that dies is restarted (stdio) or reconnected (HTTP), with backoff: after 1 s,
//! then doubling to 30 s ([`Upstream::backoff`]), the delay back to its start once a
//! connection has stayed up a minute; it is tried for as long as the server runs. Meanwhile
//! its items stay listed and answer a clear error: a tool call a tool error (`isError: true`,
//! "the upstream `time` is unavailable: ..., retrying in 2 s"), a read or a prompt -32603 with
//! the same words; a call in flight when it died gets a tool error saying so. Once it is back
//! its items are listed again and the differences announced. An HTTP upstream is known to be
//! gone when a request to it fails to connect or its session is gone (404), and is checked
//! every 30 s; a stdio upstream when its stdout ends. The gateway itself never ends because
//! of an upstream, and its first connections do not hold it up longer than each upstream's
//! connect timeout ([`McpService::ready`](crate::McpService::ready)): the log says what it
//! waits for before it listens, and lists what is served once more when every upstream's
//! first attempt settled.
//!
//! # Fair shares of an upstream
//!
//! An upstream takes at most [`Upstream::max_in_flight`] forwarded requests at once (256); one
//! downstream client (its OAuth principal, else its address, as `Server::client_share` counts
//! clients) at most its share of them (a quarter), its next request waiting for one of its own
//! to end while other clients' go through at once. A client whose calls hang (a tool that never
//! answers, connections closed after the response's head) holds its share, not the upstream,
//! and its calls are cancelled upstream once their streams are given up.
//! [`McpService::upstreams`](crate::McpService::upstreams) tells how each one is doing.
//!
//! # Limits
//!
//! | limit | default | past it |
//! |---|---|---|
//! | notifications from one upstream waiting to be relayed | 1,024 and 16 MiB ([`Upstream::notification_queue`]) | the newest are dropped and counted |
//! | items of one kind from one upstream | 10,000 ([`Upstream::max_items`]), read from at most 1,000 pages | the rest are not read, with a warning |
//! | upstream resource subscriptions | 256 URIs an upstream | the downstream subscription holds here; the upstream is not asked, with a warning |
//! | forwarded requests in flight to one upstream | 256 ([`Upstream::max_in_flight`]), a quarter of them one client's | that client's next one waits for one of its own |
//! | an upstream's captured stderr | the last 64 KiB | older lines are dropped |
//! | list requests and health checks | 60 s ([`Upstream::timeout`]) | the upstream is taken for gone (HTTP) or the list kept as it was |
//! | connecting | 30 s ([`Upstream::connect_timeout`]) | the attempt fails, and the next comes after the backoff |
//! | forwarded calls, reads, prompts, completions | no timeout of their own | they last as long as the downstream request: its cancellation or [`Server::handler_timeout`] ends them |
//!
//! `list_changed` notifications are coalesced: however many arrive, each kind is listed again
//! once at a time. What a relayed call carries (progress, log messages, the upstream's
//! requests) goes through the downstream session's own bounded buffers.
//!
//! # Where it sits
//!
//! Above the server and the client: it may import both, `middleware` (an upstream's layers), the
//! items, `context` and `protocol`, and the server knows it only through the narrow traits of
//! `server/attach.rs`. Nothing imports it. Inside, `link.rs` (each upstream's state and the
//! gateway's) is under `items.rs`, `relay.rs` and `task.rs`, and `supervise.rs`, which connects the
//! upstreams, is on top.

mod items;
mod link;
mod names;
mod relay;
mod supervise;
mod task;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use crate::client::{Era, StdioCommand};
use crate::error::DefinitionError;
use crate::server::{Attachment, Items, Server};

pub use self::link::{UpstreamState, UpstreamStatus};

/// An upstream MCP server to proxy ([`Server::proxy`]): where it is, and how to keep
/// reaching it.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::gateway::Upstream;
///
/// let time = Upstream::stdio("uvx", ["mcp-server-time", "--local-timezone", "UTC"]);
/// let docs = Upstream::http("https://docs.example.com/mcp")
///     .bearer_token("s3cret")
///     .header("x-tenant", "acme")
///     .backoff(Duration::from_millis(500), Duration::from_secs(10));
/// # let _ = (time, docs);
/// ```
#[derive(Debug, Clone)]
pub struct Upstream {
    pub(crate) target: Target,
    pub(crate) era: Era,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) health_interval: Duration,
    pub(crate) max_items: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) notification_queue: (usize, usize),
    pub(crate) scopes: Vec<String>,
    pub(crate) layers: Option<crate::middleware::Next>,
}

/// Where an upstream is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Stdio(StdioCommand),
    Http {
        url: String,
        headers: Vec<(String, String)>,
        bearer: Option<String>,
    },
}

impl Upstream {
    fn new(target: Target) -> Self {
        Self {
            target,
            era: Era::Auto,
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            backoff: (Duration::from_secs(1), Duration::from_secs(30)),
            health_interval: Duration::from_secs(30),
            max_items: 10_000,
            max_in_flight: 256,
            notification_queue: (1024, 16 * 1024 * 1024),
            scopes: Vec::new(),
            layers: None,
        }
    }

    /// A server run as a child process: `program` (looked up in `PATH` when it has no slash)
    /// with `args` ([`StdioArgs`]: an array of `&str`, `[]` for none, a `Vec` or a slice of
    /// strings), speaking stdio. Its stderr is captured (the last 64 KiB; each line logged at
    /// `debug`, and the last one quoted when it exits); [`Upstream::command`] takes a
    /// [`StdioCommand`] for control over the environment, the working directory, stderr, and
    /// arguments from any iterator.
    ///
    /// ```
    /// use mcp_runtime::gateway::Upstream;
    ///
    /// let time = Upstream::stdio("uvx", ["mcp-server-time"]);
    /// let local = Upstream::stdio("./my-server", []);
    /// let args: Vec<String> = vec!["--root".into(), "/srv".into()];
    /// let files = Upstream::stdio("mcp-files", args);
    /// # let _ = (time, local, files);
    /// ```
    pub fn stdio(program: impl Into<OsString>, args: impl StdioArgs) -> Self {
        let command = StdioCommand::new(program)
            .args(args.into_args())
            .stderr(crate::client::Stderr::Capture);
        Self::new(Target::Stdio(command))
    }

    /// A server run as a child process, as `command` says.
    pub fn command(command: StdioCommand) -> Self {
        Self::new(Target::Stdio(command))
    }

    /// A Streamable HTTP endpoint (`http://` or `https://`).
    pub fn http(url: impl Into<String>) -> Self {
        Self::new(Target::Http {
            url: url.into(),
            headers: Vec::new(),
            bearer: None,
        })
    }

    /// Adds a header to every HTTP request to the upstream.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http { headers, .. } = &mut self.target {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer {token}` with every HTTP request to the upstream.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Target::Http { bearer, .. } = &mut self.target {
            *bearer = Some(token.into());
        }
        self
    }

    /// Which era to speak with the upstream ([`Era::Auto`] by default: 2026-07-28 when it
    /// offers it, else the `initialize` handshake).
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// How long a list request or a health check waits for its answer (60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long one connection attempt may take, handshake included (30 s; a first `npx` or
    /// `uvx` run downloads the server).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The delay before reconnecting: `initial` after the first failure, doubling up to
    /// `max` (1 s and 30 s by default), with a tenth of random jitter; back to `initial` once a
    /// connection has stayed up a minute.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.backoff = (initial, max.max(initial));
        self
    }

    /// How often an HTTP upstream is checked while nothing else talks to it (30 s).
    pub fn health_check(mut self, interval: Duration) -> Self {
        self.health_interval = interval;
        self
    }

    /// The most tools (and prompts, resources, templates) read from this upstream's lists
    /// (10,000 of each): the pages past them are not asked for, and the rest are not served,
    /// with a warning.
    pub fn max_items(mut self, items: usize) -> Self {
        self.max_items = items;
        self
    }

    /// How many forwarded requests may be in flight to this upstream at once (256): each
    /// downstream client (its OAuth principal, else its address) at most its share of them
    /// (`Server::client_share`, a quarter by default); past it that client's next request waits
    /// for one of its own to end, while other clients are served.
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// How many notifications of the upstream, and how many bytes of them, may wait to be
    /// relayed (1,024 and 16 MiB): past either, the newest are dropped.
    pub fn notification_queue(mut self, notifications: usize, bytes: usize) -> Self {
        self.notification_queue = (notifications, bytes);
        self
    }

    /// OAuth scopes every item of this upstream needs (over HTTP with `Server::oauth`), beside
    /// the server's own [`required_scopes`](Server::required_scopes).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Wraps the requests for this upstream's items (`tools/call`, `prompts/get`,
    /// `resources/read`) in `layer`, inside the server's own layers ([`Server::layer`]), as
    /// [`ToolDef::layer`](crate::tool::ToolDef::layer) wraps one item: a rate limit or a
    /// concurrency limit for one upstream, say. Each call wraps what the previous ones added.
    ///
    /// ```
    /// use mcp_runtime::gateway::Upstream;
    /// use tower::limit::ConcurrencyLimitLayer;
    ///
    /// // At most 4 requests at once reach this upstream; the fifth waits for a place.
    /// let slow = Upstream::http("https://slow.example.com/mcp").layer(ConcurrencyLimitLayer::new(4));
    /// # let _ = slow;
    /// ```
    pub fn layer(mut self, layer: impl crate::middleware::McpLayer) -> Self {
        self.layers = Some(crate::server::exchange::wrap(self.layers.take(), layer));
        self
    }

    /// What the upstream is, in messages: its command line or URL.
    pub(crate) fn describe(&self) -> String {
        match &self.target {
            Target::Stdio(command) => {
                let mut line = command.program.to_string_lossy().into_owned();
                for arg in &command.args {
                    line.push(' ');
                    line.push_str(&arg.to_string_lossy());
                }
                line
            }
            Target::Http { url, .. } => url.clone(),
        }
    }
}

/// The arguments of [`Upstream::stdio`]: an array of `&str` (`[]` for none, which an array of
/// any element type would leave the compiler unable to type), a `Vec` of strings, or a slice of
/// them. Arguments from an iterator go through [`StdioCommand::args`] and
/// [`Upstream::command`], or are collected into a `Vec` first.
pub trait StdioArgs {
    /// The arguments, in order.
    fn into_args(self) -> Vec<OsString>;
}

impl<const N: usize> StdioArgs for [&str; N] {
    fn into_args(self) -> Vec<OsString> {
        self.into_iter().map(OsString::from).collect()
    }
}

impl<S: Into<OsString>> StdioArgs for Vec<S> {
    fn into_args(self) -> Vec<OsString> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<S: AsRef<std::ffi::OsStr>> StdioArgs for &[S] {
    fn into_args(self) -> Vec<OsString> {
        self.iter().map(|arg| arg.as_ref().to_owned()).collect()
    }
}

impl<S: AsRef<std::ffi::OsStr>> StdioArgs for &Vec<S> {
    fn into_args(self) -> Vec<OsString> {
        self.as_slice().into_args()
    }
}

impl Server {
    /// Serves the tools, prompts, resources and resource templates of the MCP server
    /// `upstream`, under `namespace` (`""`: under their own names): see [`mod@gateway`](self)
    /// for the names, what is relayed and what happens when the upstream fails. Needs the
    /// `client` feature, and a tokio runtime when the server is built (its connections start
    /// then).
    ///
    /// The server advertises tools, resources, prompts (each with `listChanged`),
    /// completions, logging and the tasks extension from the start, whatever the upstream
    /// turns out to offer.
    ///
    /// ```no_run
    /// use mcp_runtime::gateway::Upstream;
    /// use mcp_runtime::prelude::*;
    ///
    /// # async fn run() -> mcp_runtime::Result<()> {
    /// Server::builder()
    ///     .name("gateway")
    ///     .version("1.0.0")
    ///     .proxy("time", Upstream::stdio("uvx", ["mcp-server-time"]))
    ///     .serve_stdio()
    ///     .await
    /// # }
    /// ```
    pub fn proxy(mut self, namespace: impl Into<String>, upstream: Upstream) -> Self {
        let namespace = namespace.into();
        if !namespace.is_empty() && !crate::server::is_valid_namespace(&namespace) {
            self.defer_error(DefinitionError::Invalid {
                kind: "server",
                name: namespace,
                location: "Server::proxy".to_owned(),
                problem: "a namespace is 1 to 63 characters of `A-Z a-z 0-9 _ - .` (or empty)"
                    .to_owned(),
            });
            return self;
        }
        self.claim_namespace(&namespace, "Server::proxy");
        let mut server = self.dynamic_tools().dynamic_resources().dynamic_prompts();
        #[cfg(feature = "tasks")]
        server.advertise_tasks();
        server
            .attachment_mut::<Proxies>()
            .upstreams
            .push((namespace, upstream));
        server
    }
}

/// The upstreams a server proxies, as the builder collected them.
#[derive(Default)]
pub(crate) struct Proxies {
    upstreams: Vec<(String, Upstream)>,
}

impl Attachment for Proxies {
    fn check(&self, items: &Items, errors: &mut Vec<DefinitionError>) {
        if tokio::runtime::Handle::try_current().is_err() {
            errors.push(DefinitionError::Invalid {
                kind: "server",
                name: "proxy".to_owned(),
                location: "Server::proxy".to_owned(),
                problem: "a server that proxies upstreams starts their connections when it is \
                          built: build it inside a tokio runtime"
                    .to_owned(),
            });
        }
        let namespaces: Vec<&str> = self
            .upstreams
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        for (i, a) in namespaces.iter().enumerate() {
            for b in &namespaces[i + 1..] {
                let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
                if long
                    .strip_prefix(*short)
                    .is_some_and(|rest| rest.starts_with(crate::server::SEPARATOR))
                {
                    errors.push(DefinitionError::Invalid {
                        kind: "server",
                        name: (*long).to_owned(),
                        location: "Server::proxy".to_owned(),
                        problem: format!(
                            "the namespace `{long}` starts with the namespace `{short}` and \
                             `_`, so `{long}_x` could be either upstream's: choose another"
                        ),
                    });
                }
            }
        }
        for namespace in &namespaces {
            let prefix = crate::server::namespaced(namespace, "");
            let taken = items
                .tools
                .iter()
                .map(|t| ("tool", t.name(), &t.metadata))
                .chain(
                    items
                        .prompts
                        .iter()
                        .map(|p| ("prompt", p.name(), &p.metadata)),
                );
            for (kind, name, metadata) in taken {
                if name.starts_with(&prefix) {
                    errors.push(DefinitionError::Invalid {
                        kind,
                        name: name.to_owned(),
                        location: metadata.place(),
                        problem: format!(
                            "its name starts with `{prefix}`, which the upstream proxied as \
                             `{namespace}` owns: rename it, or proxy under another namespace"
                        ),
                    });
                }
            }
        }
    }

    fn to_come(&self) -> String {
        let names: Vec<String> = self
            .upstreams
            .iter()
            .map(|(namespace, upstream)| match namespace.as_str() {
                "" => format!("`{}`", upstream.describe()),
                namespace => format!("`{namespace}`"),
            })
            .collect();
        format!(
            "what its {} proxied upstream(s) ({}) serve is added as each connects",
            names.len(),
            names.join(", ")
        )
    }

    fn start(
        self: Box<Self>,
        core: &Arc<crate::server::Core>,
    ) -> (
        Arc<dyn crate::server::Attached>,
        tokio::sync::watch::Receiver<bool>,
    ) {
        link::Gateway::start(self.upstreams, core)
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl crate::McpService {
    /// How each proxied upstream is doing ([`Server::proxy`]), in the order they were added;
    /// empty for a server that proxies none.
    pub fn upstreams(&self) -> Vec<UpstreamStatus> {
        match self
            .core
            .attached
            .get()
            .and_then(|a| a.as_any().downcast_ref::<link::Gateway>())
        {
            Some(gateway) => gateway.statuses(),
            None => Vec::new(),
        }
    }
}
