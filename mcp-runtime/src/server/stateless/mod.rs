//! The stateless era (MCP 2026-07-28): no handshake; every request carries its own `_meta`
//! envelope and is served on its own.
//!
//! Each message is classified on arrival, on every transport: `initialize` opens (or re-opens) a
//! handshake session; a request whose `params._meta` names
//! `io.modelcontextprotocol/protocolVersion`, and `server/discover` always, is served here; any
//! other message follows the handshake rules. Nothing here locks a connection into an era.
//!
//! What this module owns: reading the envelope, `server/discover`, the shaping of results
//! (`resultType`, `_meta` server info, cache hints), the input-required bookkeeping behind
//! `ctx.elicit`/`ctx.sample`/`ctx.roots` with its signed `requestState` ([`request_state`]), and
//! `subscriptions/listen`.

pub(crate) mod request_state;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Waker;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Sink;
use crate::context::BoxFuture;
use crate::context::{ClientInfo, ClientRequestError, Peer, Root};
use crate::protocol::{
    ClientCapabilities, ErrorObject, Implementation, LoggingLevel, Outgoing, ProtocolVersion,
    RequestId, ServerCapabilities, encode_notification, error_codes,
};

/// `_meta` key: the revision a stateless request is sent under.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities, for this request.
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is.
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the least severe log level the client wants for this request.
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: who the server is.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key on listen notifications: which subscription they belong to.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a request belongs to the stateless era.
///
/// `initialize` does only when its envelope names a stateless revision: there it is a removed
/// method (-32601, HTTP 404), while an `initialize` with any other `_meta` is still a handshake.
pub(crate) fn is_stateless(method: &str, params: &Map<String, Value>) -> bool {
    let requested = params
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY));
    match requested {
        _ if method == "server/discover" => true,
        Some(version) if method == "initialize" => version
            .as_str()
            .and_then(ProtocolVersion::parse)
            .is_some_and(|v| !v.has_handshake()),
        requested => requested.is_some(),
    }
}

/// A stateless request's envelope, read but not yet judged on its version.
pub(crate) struct Envelope {
    /// The version string as sent.
    pub(crate) requested: String,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) log_level: Option<LoggingLevel>,
}

impl Envelope {
    /// The revision to serve the request under, or -32022 naming what this server supports.
    pub(crate) fn version(&self) -> Result<ProtocolVersion, ErrorObject> {
        match ProtocolVersion::parse(&self.requested) {
            Some(version) if !version.has_handshake() => Ok(version),
            _ => Err(unsupported_version(&self.requested)),
        }
    }
}

/// -32022, listing every revision this server speaks, newest first: a client that prefers a
/// handshake revision can fall back to `initialize`.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

fn missing(key: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("`params._meta` is missing `{key}`"))
}

/// Reads the envelope: a missing or malformed required key is -32602 naming it.
pub(crate) fn read_envelope(params: &Map<String, Value>) -> Result<Envelope, ErrorObject> {
    let meta = match params.get("_meta") {
        Some(Value::Object(meta)) => meta,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "`params._meta` must be an object",
            ));
        }
        None => return Err(missing(PROTOCOL_VERSION_KEY)),
    };
    let requested = match meta.get(PROTOCOL_VERSION_KEY) {
        Some(Value::String(version)) => version.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{PROTOCOL_VERSION_KEY}` must be a string"
            )));
        }
        None => return Err(missing(PROTOCOL_VERSION_KEY)),
    };
    let capabilities = match meta.get(CLIENT_CAPABILITIES_KEY) {
        Some(Value::Object(capabilities)) => ClientCapabilities(capabilities.clone()),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{CLIENT_CAPABILITIES_KEY}` must be an object"
            )));
        }
        None => return Err(missing(CLIENT_CAPABILITIES_KEY)),
    };
    let implementation = match meta.get(CLIENT_INFO_KEY) {
        None => Implementation::new("unnamed-client", ""),
        Some(info) => serde_json::from_value(info.clone()).map_err(|e| {
            ErrorObject::invalid_params(format!("`{CLIENT_INFO_KEY}` is invalid: {e}"))
        })?,
    };
    let log_level = match meta.get(LOG_LEVEL_KEY) {
        None => None,
        Some(Value::String(level)) => Some(
            level
                .parse::<LoggingLevel>()
                .map_err(ErrorObject::invalid_params)?,
        ),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{LOG_LEVEL_KEY}` must be a string"
            )));
        }
    };
    Ok(Envelope {
        requested,
        client: Arc::new(ClientInfo {
            implementation,
            capabilities,
        }),
        log_level,
    })
}

/// How long a client may cache a result, and whether the cache may be shared (SEP-2549).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// `ttlMs`: how long the result stays fresh.
    pub ttl: Duration,
    /// `cacheScope`.
    pub scope: CacheScope,
}

impl CacheHint {
    /// Fresh for `ttl`, cacheable only for the client that asked (`"private"`).
    pub const fn private(ttl: Duration) -> Self {
        Self {
            ttl,
            scope: CacheScope::Private,
        }
    }

    /// Fresh for `ttl`, shareable across clients and authorization contexts (`"public"`).
    pub const fn public(ttl: Duration) -> Self {
        Self {
            ttl,
            scope: CacheScope::Public,
        }
    }
}

impl Default for CacheHint {
    /// `ttlMs: 0`, `cacheScope: "private"`: always revalidate.
    fn default() -> Self {
        Self::private(Duration::ZERO)
    }
}

/// Who may share a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Only the client that asked.
    Private,
    /// Any client; not access control.
    Public,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Public => "public",
        }
    }
}

/// The results that carry cache hints from 2026-07-28.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cacheable {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
    /// `resources/read`.
    ResourceRead,
}

impl Cacheable {
    const ALL: [Cacheable; 6] = [
        Self::Discover,
        Self::Tools,
        Self::Prompts,
        Self::Resources,
        Self::ResourceTemplates,
        Self::ResourceRead,
    ];

    fn of(method: &str) -> Option<Self> {
        Some(match method {
            "server/discover" => Self::Discover,
            "tools/list" => Self::Tools,
            "prompts/list" => Self::Prompts,
            "resources/list" => Self::Resources,
            "resources/templates/list" => Self::ResourceTemplates,
            "resources/read" => Self::ResourceRead,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// The cache hints of a server, one per cacheable result.
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheHints([CacheHint; 6]);

impl CacheHints {
    pub(crate) fn set(&mut self, result: Cacheable, hint: CacheHint) {
        self.0[result.index()] = hint;
    }
}

/// What every complete stateless result of one method gains: `resultType`, the server's
/// identity, and, for lists and reads, the cache hints. Made once per server.
pub(crate) struct Stamp {
    fields: Map<String, Value>,
    server_info: Value,
    /// `fields` and the `_meta` with the server's identity, serialized, without the closing
    /// brace: the front of a stamped page.
    head: String,
}

impl Stamp {
    /// `info` is the server's `Implementation` as 2026-07-28 shapes it.
    fn new(info: &Value, hint: Option<CacheHint>) -> Self {
        let mut fields = Map::new();
        fields.insert("resultType".into(), Value::from("complete"));
        if let Some(hint) = hint {
            let ttl = u64::try_from(hint.ttl.as_millis()).unwrap_or(u64::MAX);
            fields.insert("ttlMs".into(), Value::from(ttl));
            fields.insert("cacheScope".into(), Value::from(hint.scope.as_str()));
        }
        let mut with_meta = fields.clone();
        with_meta.insert("_meta".into(), json!({ SERVER_INFO_KEY: info }));
        let mut head = Value::Object(with_meta).to_string();
        head.pop();
        Self {
            fields,
            server_info: info.clone(),
            head,
        }
    }

    /// Stamps a result held as JSON.
    pub(crate) fn apply(&self, mut result: Value) -> Value {
        let Value::Object(map) = &mut result else {
            return result;
        };
        for (key, value) in &self.fields {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
        let info = self.server_info.clone();
        match map.get_mut("_meta") {
            Some(Value::Object(meta)) => {
                meta.insert(SERVER_INFO_KEY.into(), info);
            }
            _ => {
                map.insert("_meta".into(), json!({ SERVER_INFO_KEY: info }));
            }
        }
        result
    }

    /// Stamps a result already serialized (a cached list page) without parsing it: the stamp's
    /// fields go in front of the page's own, which carry no `_meta` or `resultType`.
    pub(crate) fn apply_raw(&self, raw: &str) -> String {
        let rest = raw
            .trim_start()
            .strip_prefix('{')
            .unwrap_or("}")
            .trim_start();
        let mut out = String::with_capacity(self.head.len() + raw.len() + 1);
        out.push_str(&self.head);
        if !rest.starts_with('}') {
            out.push(',');
        }
        out.push_str(rest);
        out
    }
}

/// The stamps of a server's stateless results: one per cacheable result, one for the rest
/// (tool calls, prompts, input-required results: never cached, no hints).
pub(crate) struct Stamps {
    plain: Stamp,
    cached: [Stamp; 6],
}

impl Stamps {
    pub(crate) fn new(info: &Implementation, hints: &CacheHints) -> Self {
        let info = info.for_version(ProtocolVersion::V2026_07_28);
        Self {
            plain: Stamp::new(&info, None),
            cached: Cacheable::ALL.map(|c| Stamp::new(&info, Some(hints.0[c.index()]))),
        }
    }

    /// The stamp for a result of `method` (any other method: the plain one).
    pub(crate) fn for_method(&self, method: &str) -> &Stamp {
        match Cacheable::of(method) {
            Some(cacheable) => &self.cached[cacheable.index()],
            None => &self.plain,
        }
    }
}

/// The `server/discover` result, before stamping.
///
/// `supportedVersions` is the list the -32022 error offers: every revision this server speaks,
/// newest first, handshake ones included, so a client that finds no common stateless revision
/// knows it can fall back to `initialize` instead of giving up.
pub(crate) fn discover(capabilities: &ServerCapabilities, instructions: Option<&str>) -> Value {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(supported));
    result.insert(
        "capabilities".into(),
        capabilities.for_version(ProtocolVersion::V2026_07_28),
    );
    if let Some(instructions) = instructions {
        result.insert("instructions".into(), Value::from(instructions));
    }
    Value::Object(result)
}

/// The input a stateless request's handler asked for, and the answers it already has.
///
/// A handler that calls `ctx.elicit`, `ctx.sample` or `ctx.roots` gets the answer when the
/// client's retry carried a well-formed one under the question's key (the key the handler chose
/// with `ctx.input(key)`, or else one numbered in the order the handler asks: `elicit-1`,
/// `sample-2`, ...); otherwise the question is recorded here and the call never completes, and
/// the dispatcher ends the handler and answers `input_required`, asking again for an answer that
/// was missing or malformed. A retry replays the handler from the start with every answer so far.
#[derive(Default)]
pub(crate) struct Inputs {
    answers: Mutex<Map<String, Value>>,
    next: AtomicU32,
    asked: Mutex<Map<String, Value>>,
    missing: Mutex<Map<String, Value>>,
    waker: Mutex<Option<Waker>>,
}

/// Why a stateless handler was stopped before it finished.
pub(crate) enum Interrupt {
    /// It asked for input the client must provide: the input requests, by key.
    InputRequired(Map<String, Value>),
    /// It needed a client capability the request did not declare (-32021).
    MissingCapability(Map<String, Value>),
}

impl Inputs {
    fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        mutex.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the answers a retry carried.
    pub(crate) fn answer(&self, answers: Map<String, Value>) {
        Self::lock(&self.answers).extend(answers);
    }

    /// Every answer known, for the next `requestState`.
    pub(crate) fn answers(&self) -> Map<String, Value> {
        Self::lock(&self.answers).clone()
    }

    /// Remembers the task to wake when the handler asks for something.
    pub(crate) fn watch(&self, waker: &Waker) {
        let mut slot = Self::lock(&self.waker);
        if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *slot = Some(waker.clone());
        }
    }

    /// Whether the handler must be stopped, and why.
    pub(crate) fn interrupt(&self) -> Option<Interrupt> {
        let missing = Self::lock(&self.missing);
        if !missing.is_empty() {
            return Some(Interrupt::MissingCapability(missing.clone()));
        }
        let asked = Self::lock(&self.asked);
        (!asked.is_empty()).then(|| Interrupt::InputRequired(asked.clone()))
    }

    fn wake(&self) {
        if let Some(waker) = Self::lock(&self.waker).take() {
            waker.wake();
        }
    }

    fn ask(&self, key: Option<&str>, method: &'static str, params: Value) -> Option<Value> {
        let key = match key {
            Some(key) => key.to_owned(),
            None => {
                let kind = match method {
                    "elicitation/create" => "elicit",
                    "sampling/createMessage" => "sample",
                    _ => "roots",
                };
                let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{kind}-{n}")
            }
        };
        {
            let mut answers = Self::lock(&self.answers);
            match answers.get(&key) {
                Some(answer) if well_formed(method, answer) => return Some(answer.clone()),
                // Not an answer to this question (`"user_name": 12345`): asked again, and not
                // carried into the next `requestState`.
                Some(_) => drop(answers.remove(&key)),
                None => {}
            }
        }
        Self::lock(&self.asked).insert(key, json!({"method": method, "params": params}));
        self.wake();
        None
    }
}

/// Whether `answer` has the shape of a result of `method`: an object with the member the
/// context reads first (elicitation's `action`, sampling's `content`, the `roots` list).
fn well_formed(method: &str, answer: &Value) -> bool {
    match method {
        "elicitation/create" => answer.get("action").is_some_and(Value::is_string),
        "sampling/createMessage" => answer.get("content").is_some_and(|c| !c.is_null()),
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => answer.is_object(),
    }
}

/// A stateless request's way back: its own stream for progress and logs, and the input-required
/// bookkeeping in place of requests to the client, which this era forbids.
pub(crate) struct StatelessPeer {
    pub(crate) sink: Sink,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) inputs: Arc<Inputs>,
}

impl Peer for StatelessPeer {
    fn send(&self, message: Outgoing) {
        let _ = self.sink.send(message);
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    fn request(
        &self,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        self.ask(None, method, params)
    }

    fn request_keyed(
        &self,
        key: &str,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        self.ask(Some(key), method, params)
    }

    fn missing_capability(
        &self,
        name: &'static str,
        capability: Value,
    ) -> BoxFuture<ClientRequestError> {
        if let Value::Object(capability) = capability {
            Inputs::lock(&self.inputs.missing).extend(capability);
        }
        self.inputs.wake();
        let _ = name;
        Box::pin(std::future::pending())
    }

    fn cached_roots(&self) -> Option<Vec<Root>> {
        None
    }

    fn cache_roots(&self, _: Vec<Root>) {}
}

impl StatelessPeer {
    /// A question to the client, under `key` or else a numbered one: the answer when the client
    /// already gave it, otherwise recorded for the `input_required` result.
    fn ask(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        if !matches!(
            method,
            "elicitation/create" | "sampling/createMessage" | "roots/list"
        ) {
            // `ping` and anything else: servers send no requests in this era.
            return Box::pin(std::future::ready(Err(ClientRequestError::Unsupported(
                method,
            ))));
        }
        match self.inputs.ask(key, method, params) {
            Some(answer) => Box::pin(std::future::ready(Ok(answer))),
            None => Box::pin(std::future::pending()),
        }
    }
}

/// The `inputRequests` result that ends a handler waiting for input.
pub(crate) fn input_required(requests: Map<String, Value>, state: String) -> Value {
    json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    })
}

/// -32021 for a handler that needed what the client did not declare.
pub(crate) fn missing_capability(required: Map<String, Value>) -> ErrorObject {
    ErrorObject::new(
        error_codes::MISSING_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

/// One open `subscriptions/listen`: what it asked for, and where its notifications go.
pub(crate) struct Listener {
    id: Value,
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    sink: Sink,
}

impl Listener {
    /// Reads a listen request against what the server advertises: the honored subset, and the
    /// listener for it.
    pub(crate) fn new(
        id: &RequestId,
        params: &Map<String, Value>,
        capabilities: &ServerCapabilities,
        sink: Sink,
    ) -> Result<(Self, Value), ErrorObject> {
        let Some(Value::Object(requested)) = params.get("notifications") else {
            return Err(ErrorObject::invalid_params(
                "`subscriptions/listen` needs `notifications`, an object",
            ));
        };
        let wants = |key: &str| requested.get(key).and_then(Value::as_bool) == Some(true);
        let tools = wants("toolsListChanged") && capabilities.tools.is_some_and(|c| c.list_changed);
        let prompts =
            wants("promptsListChanged") && capabilities.prompts.is_some_and(|c| c.list_changed);
        let resources =
            wants("resourcesListChanged") && capabilities.resources.is_some_and(|c| c.list_changed);
        let uris: Vec<String> = match requested.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) => {
                let mut out = Vec::with_capacity(uris.len());
                for uri in uris {
                    match uri.as_str() {
                        Some(uri) => out.push(uri.to_owned()),
                        None => {
                            return Err(ErrorObject::invalid_params(
                                "`resourceSubscriptions` must be an array of URIs",
                            ));
                        }
                    }
                }
                out
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "`resourceSubscriptions` must be an array of URIs",
                ));
            }
        };
        let uris = if capabilities.resources.is_some_and(|c| c.subscribe) {
            uris
        } else {
            Vec::new()
        };
        let mut honored = Map::new();
        for (key, on) in [
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ] {
            if on {
                honored.insert(key.into(), Value::Bool(true));
            }
        }
        if !uris.is_empty() {
            honored.insert("resourceSubscriptions".into(), json!(uris));
        }
        let listener = Self {
            id: id.to_json(),
            tools,
            prompts,
            resources,
            uris,
            sink,
        };
        Ok((listener, Value::Object(honored)))
    }

    fn tagged(&self, method: &str, mut params: Map<String, Value>) -> Outgoing {
        params.insert(
            "_meta".into(),
            json!({ SUBSCRIPTION_ID_KEY: self.id.clone() }),
        );
        Outgoing::Message(encode_notification(method, Some(&params)))
    }

    /// The final result of a listen the server ends.
    pub(crate) fn teardown(&self) -> Value {
        json!({ "_meta": { SUBSCRIPTION_ID_KEY: self.id.clone() } })
    }
}

/// The open listens of a server.
#[derive(Default)]
pub(crate) struct Listeners(Mutex<Vec<Weak<Listener>>>);

impl Listeners {
    /// Acknowledges and registers a listen in one step, so no notification can overtake the
    /// acknowledgement.
    pub(crate) fn add(&self, listener: &Arc<Listener>, honored: Value) {
        let mut listeners = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut params = Map::new();
        params.insert("notifications".into(), honored);
        let _ = listener
            .sink
            .send(listener.tagged("notifications/subscriptions/acknowledged", params));
        listeners.retain(|l| l.strong_count() > 0);
        listeners.push(Arc::downgrade(listener));
    }

    fn each(&self, mut f: impl FnMut(&Listener)) {
        let listeners = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for listener in listeners.iter().filter_map(Weak::upgrade) {
            f(&listener);
        }
    }

    /// `notifications/<kind>/list_changed` to the listens that asked for it.
    pub(crate) fn list_changed(&self, kind: crate::handle::ListKind, method: &str) {
        use crate::handle::ListKind;
        self.each(|l| {
            let wanted = match kind {
                ListKind::Tools => l.tools,
                ListKind::Prompts => l.prompts,
                ListKind::Resources => l.resources,
            };
            if wanted {
                let _ = l.sink.send(l.tagged(method, Map::new()));
            }
        });
    }

    /// `notifications/resources/updated` to the listens subscribed to `uri`.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.each(|l| {
            if l.uris.iter().any(|u| u == uri) {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(uri));
                let _ = l
                    .sink
                    .send(l.tagged("notifications/resources/updated", params));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_envelope_decides_the_era_and_names_what_is_missing() {
        assert!(is_stateless("server/discover", &Map::new()));
        assert!(!is_stateless("tools/list", &params(json!({"_meta": {}}))));
        let enveloped = params(json!({"_meta": {
            PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {"elicitation": {}},
            LOG_LEVEL_KEY: "debug",
        }}));
        assert!(is_stateless("tools/list", &enveloped));
        let envelope = read_envelope(&enveloped).unwrap();
        assert_eq!(envelope.version().unwrap(), ProtocolVersion::V2026_07_28);
        assert!(envelope.client.capabilities.elicitation_form());
        assert_eq!(envelope.log_level, Some(LoggingLevel::Debug));

        let partial = params(json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}));
        let error = read_envelope(&partial).err().unwrap();
        assert_eq!(error.code, -32602);
        assert!(error.message.contains(CLIENT_CAPABILITIES_KEY));

        let old = params(json!({"_meta": {
            PROTOCOL_VERSION_KEY: "2025-11-25",
            CLIENT_CAPABILITIES_KEY: {},
        }}));
        let error = read_envelope(&old).unwrap().version().unwrap_err();
        assert_eq!(error.code, -32022);
        assert_eq!(
            error.data.unwrap(),
            json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], "requested": "2025-11-25"})
        );
    }

    #[test]
    fn stamps_go_on_values_and_raw_pages_alike() {
        let stamps = Stamps::new(
            &Implementation::new("demo", "1.0.0"),
            &CacheHints::default(),
        );
        let stamped = stamps.for_method("tools/list").apply_raw(r#"{"tools":[]}"#);
        let stamped: Value = serde_json::from_str(&stamped).unwrap();
        assert_eq!(
            stamped,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                   "_meta": {SERVER_INFO_KEY: {"name": "demo", "version": "1.0.0"}}, "tools": []})
        );
        let empty: Value = serde_json::from_str(&stamps.for_method("x").apply_raw("{}")).unwrap();
        assert_eq!(empty["resultType"], "complete");
        let value = stamps
            .for_method("tools/call")
            .apply(json!({"content": [], "_meta": {"mine": 1}}));
        assert_eq!(value["_meta"]["mine"], 1);
        assert_eq!(value["_meta"][SERVER_INFO_KEY]["name"], "demo");
        assert!(value.get("ttlMs").is_none());
    }
}
