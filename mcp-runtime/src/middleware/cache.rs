//! A response cache for tools that say calling them again changes nothing and reads nothing
//! that changes: `read_only` and `idempotent`.

use std::any::TypeId;
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tower::{Layer, Service};

use super::{Era, Extensions, McpRequest, McpResponse};
use crate::context::BoxFuture;
use crate::server::fast_map::FastMap;

/// Answers a repeated `tools/call` of a tool marked both `read_only` and `idempotent` from what
/// the same call answered before, without running the handler.
///
/// - **Keyed** by the tool, its arguments (objects compared whatever the order of their
///   members), the protocol revision and era the answer is shaped for, and what the answer may
///   depend on ([`CacheVary`]). Unless a tool declares otherwise ([`vary`](Self::vary)), that
///   is everything a handler could read about its caller: the client (its OAuth principal,
///   else its address), the session, and the request's `_meta` (a tenant a layer reads there,
///   the client's info in a 2026-07-28 envelope), so one caller's answer never reaches
///   another; and a request that carries [extensions](super::Extensions) a layer outside the
///   cache put there is not cached at all, since the cache cannot tell what they vary.
/// - **Kept**: only final, successful results: never a JSON-RPC error, a tool error
///   (`isError`), an input-required round or a task handle.
/// - **Bounded**: at most [`max_entries`](Self::max_entries) answers (1,000 by default) and
///   [`max_bytes`](Self::max_bytes) of keys and answers together (16 MiB by default), the oldest
///   dropped first; an answer larger than an eighth of the bytes is not kept. Each answer lives
///   for its [`ttl`](Self::ttl) (60 s by default). A key is a SHA-256 of what it is made of,
///   32 bytes however large the arguments.
/// - **Off by default**: a server caches only with this layer, and only the tools it marks.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::middleware::{CacheLayer, CacheVary};
///
/// /// Today's exchange rate; the same all day, for everyone.
/// #[tool(read_only, idempotent)]
/// async fn rate(currency: String) -> f64 {
///     1.08
/// }
///
/// let server = Server::builder()
///     .tool(rate)
///     .layer(
///         CacheLayer::new()
///             .ttl(Duration::from_secs(300))
///             .max_entries(10_000)
///             // Its answer depends on its arguments alone: shared by every caller.
///             .vary("rate", CacheVary::nothing()),
///     );
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct CacheLayer {
    store: Arc<Store>,
    rules: Arc<Rules>,
}

/// What tools declared their answers depend on.
#[derive(Debug, Default)]
struct Rules {
    /// Per tool.
    tools: FastMap<String, CacheVary>,
    /// For the tools without a declaration of their own.
    all: Option<CacheVary>,
}

impl Rules {
    /// What `tool`'s answer depends on, and whether that was declared.
    fn of(&self, tool: &str) -> (CacheVary, bool) {
        match self.tools.get(tool).or(self.all.as_ref()) {
            Some(vary) => (vary.clone(), true),
            None => (CacheVary::caller(), false),
        }
    }
}

/// What a tool's cached answer depends on beside the tool, its arguments and the revision
/// (always part of the key): which callers may be served what another was. See [`CacheLayer`].
///
/// ```
/// use mcp_runtime::middleware::CacheVary;
///
/// #[derive(Clone, Hash)]
/// struct Tenant(String);
///
/// // The same answer for each client of one tenant (a value a layer put in the extensions).
/// let per_tenant = CacheVary::client().extension::<Tenant>();
/// # let _ = per_tenant;
/// ```
#[derive(Clone)]
pub struct CacheVary {
    parts: u8,
    extensions: Vec<ExtensionKey>,
}

/// An extension type whose value is part of the key.
#[derive(Clone)]
struct ExtensionKey {
    id: TypeId,
    name: &'static str,
    /// Feeds the value to the key; `false` when the request has none.
    feed: fn(&Extensions, &mut KeyHasher) -> bool,
}

impl std::fmt::Debug for CacheVary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.extensions.iter().map(|e| e.name).collect();
        f.debug_struct("CacheVary")
            .field("client", &(self.parts & VARY_CLIENT != 0))
            .field("session", &(self.parts & VARY_SESSION != 0))
            .field("meta", &(self.parts & VARY_META != 0))
            .field("extensions", &names)
            .finish()
    }
}

const VARY_CLIENT: u8 = 1;
const VARY_SESSION: u8 = 2;
const VARY_META: u8 = 4;

impl CacheVary {
    /// Nothing beyond the arguments: the answer is the same for every caller (public data).
    pub fn nothing() -> Self {
        Self {
            parts: 0,
            extensions: Vec::new(),
        }
    }

    /// The client: its OAuth principal when the server has OAuth, else its address (an IPv6
    /// address by its /64, as the fair shares count clients); on stdio the connection. Answers
    /// are shared between the sessions of one client.
    pub fn client() -> Self {
        Self {
            parts: VARY_CLIENT,
            ..Self::nothing()
        }
    }

    /// The session (a stateless request has none: its client's info, which its envelope
    /// carries, stands for it).
    pub fn session() -> Self {
        Self {
            parts: VARY_SESSION,
            ..Self::nothing()
        }
    }

    /// The request's `_meta` (but `progressToken`, the trace context and the log level, which
    /// change no answer).
    pub fn meta() -> Self {
        Self {
            parts: VARY_META,
            ..Self::nothing()
        }
    }

    /// Everything about who asks: the client, the session and `_meta`. What a tool with no
    /// declaration gets.
    pub fn caller() -> Self {
        Self {
            parts: VARY_CLIENT | VARY_SESSION | VARY_META,
            ..Self::nothing()
        }
    }

    /// And the value of type `T` a layer put in the request's extensions (a request without one
    /// is keyed as having none).
    pub fn extension<T: Hash + Send + Sync + 'static>(mut self) -> Self {
        fn feed<T: Hash + Send + Sync + 'static>(
            extensions: &Extensions,
            key: &mut KeyHasher,
        ) -> bool {
            match extensions.get::<T>() {
                Some(value) => {
                    value.hash(key);
                    true
                }
                None => false,
            }
        }
        if !self.extensions.iter().any(|e| e.id == TypeId::of::<T>()) {
            self.extensions.push(ExtensionKey {
                id: TypeId::of::<T>(),
                name: std::any::type_name::<T>(),
                feed: feed::<T>,
            });
        }
        self
    }

    /// Both this and `other`.
    pub fn and(mut self, other: CacheVary) -> Self {
        self.parts |= other.parts;
        for extension in other.extensions {
            if !self.extensions.iter().any(|e| e.id == extension.id) {
                self.extensions.push(extension);
            }
        }
        self
    }
}

impl Default for CacheLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl CacheLayer {
    /// A cache of at most 1,000 answers and 16 MiB, each kept 60 s.
    pub fn new() -> Self {
        Self {
            rules: Arc::default(),
            store: Arc::new(Store {
                bounds: Bounds {
                    entries: 1_000,
                    bytes: 16 * 1024 * 1024,
                    ttl: Duration::from_secs(60),
                },
                state: Mutex::default(),
            }),
        }
    }

    fn with_bounds(self, change: impl FnOnce(&mut Bounds)) -> Self {
        let mut bounds = self.store.bounds;
        change(&mut bounds);
        Self {
            store: Arc::new(Store {
                bounds,
                state: Mutex::default(),
            }),
            rules: self.rules,
        }
    }

    fn with_rules(self, change: impl FnOnce(&mut Rules)) -> Self {
        let mut rules = Rules {
            tools: self.rules.tools.clone(),
            all: self.rules.all.clone(),
        };
        change(&mut rules);
        Self {
            store: self.store,
            rules: Arc::new(rules),
        }
    }

    /// Declares what `tool`'s answer depends on ([`CacheVary`]): its cached answers are keyed
    /// by that alone (with its name, arguments and the revision), and extensions other than the
    /// ones named there are taken to change nothing.
    pub fn vary(self, tool: impl Into<String>, vary: CacheVary) -> Self {
        let tool = tool.into();
        self.with_rules(|rules| {
            rules.tools.insert(tool, vary);
        })
    }

    /// Declares what the answers of every tool without a declaration of its own depend on.
    pub fn vary_all(self, vary: CacheVary) -> Self {
        self.with_rules(|rules| rules.all = Some(vary))
    }

    /// The most answers kept at once.
    pub fn max_entries(self, entries: usize) -> Self {
        self.with_bounds(|b| b.entries = entries)
    }

    /// The most bytes of keys and answers kept at once.
    pub fn max_bytes(self, bytes: usize) -> Self {
        self.with_bounds(|b| b.bytes = bytes)
    }

    /// How long an answer is kept.
    pub fn ttl(self, ttl: Duration) -> Self {
        self.with_bounds(|b| b.ttl = ttl)
    }

    /// How many answers are kept now, and their bytes (keys included).
    pub fn usage(&self) -> (usize, usize) {
        let state = self.store.lock();
        (state.entries.len(), state.bytes)
    }
}

impl<S> Layer<S> for CacheLayer {
    type Service = CacheService<S>;

    fn layer(&self, inner: S) -> CacheService<S> {
        CacheService {
            inner,
            store: Arc::clone(&self.store),
            rules: Arc::clone(&self.rules),
        }
    }
}

/// The service of a [`CacheLayer`].
#[derive(Debug, Clone)]
pub struct CacheService<S> {
    inner: S,
    store: Arc<Store>,
    rules: Arc<Rules>,
}

#[derive(Debug, Clone, Copy)]
struct Bounds {
    entries: usize,
    bytes: usize,
    ttl: Duration,
}

#[derive(Debug)]
struct Store {
    bounds: Bounds,
    state: Mutex<State>,
}

/// A cache key: the SHA-256 of what it is made of.
type Key = [u8; 32];

#[derive(Debug, Default)]
struct State {
    entries: FastMap<Key, Entry>,
    /// Keys oldest first; a key may be here more than once (kept again), the entry's stamp tells.
    order: VecDeque<(Key, u64)>,
    bytes: usize,
    stamp: u64,
}

#[derive(Debug)]
struct Entry {
    response: McpResponse,
    expires: Instant,
    bytes: usize,
    stamp: u64,
}

/// What an entry costs beyond its key and answer: the map's and the queue's slots.
const ENTRY_OVERHEAD: usize = 160;

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, key: &Key) -> Option<McpResponse> {
        let mut state = self.lock();
        let entry = state.entries.get(key)?;
        if entry.expires > Instant::now() {
            return Some(entry.response.clone());
        }
        if let Some(entry) = state.entries.remove(key) {
            state.bytes -= entry.bytes;
        }
        None
    }

    fn put(&self, key: Key, response: McpResponse, size: usize) {
        let bytes = key.len() + size + ENTRY_OVERHEAD;
        if self.bounds.entries == 0 || bytes > self.bounds.bytes / 8 {
            return;
        }
        let mut state = self.lock();
        let state = &mut *state;
        if let Some(old) = state.entries.remove(&key) {
            state.bytes -= old.bytes;
        }
        let now = Instant::now();
        // Oldest first, until the new one fits.
        while state.entries.len() >= self.bounds.entries || state.bytes + bytes > self.bounds.bytes
        {
            let Some((oldest, stamp)) = state.order.pop_front() else {
                break;
            };
            if state.entries.get(&oldest).is_some_and(|e| e.stamp == stamp)
                && let Some(entry) = state.entries.remove(&oldest)
            {
                state.bytes -= entry.bytes;
            }
        }
        // Stale queue places (of keys kept again, or expired and dropped) are swept with it.
        if state.order.len() > 2 * self.bounds.entries.max(16) {
            let entries = &state.entries;
            state
                .order
                .retain(|(key, stamp)| entries.get(key).is_some_and(|e| e.stamp == *stamp));
        }
        state.stamp += 1;
        let stamp = state.stamp;
        state.order.push_back((key, stamp));
        state.bytes += bytes;
        state.entries.insert(
            key,
            Entry {
                response,
                expires: now + self.bounds.ttl,
                bytes,
                stamp,
            },
        );
    }
}

/// What a key is made of, hashed as it is fed: SHA-256, so that no two callers' keys meet by
/// chance however they chose their arguments.
struct KeyHasher(Sha256);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Not used: the key is the whole digest.
    fn finish(&self) -> u64 {
        0
    }
}

impl std::io::Write for KeyHasher {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl KeyHasher {
    /// A part of the key: its tag, then its bytes with their length, so parts never run into
    /// each other.
    fn part(&mut self, tag: u8, bytes: &[u8]) {
        self.0.update([tag]);
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
}

/// The `_meta` members that change no answer: left out of the key.
const META_NOISE: [&str; 5] = [
    "progressToken",
    "traceparent",
    "tracestate",
    "baggage",
    "io.modelcontextprotocol/logLevel",
];

/// The cache key of a call to a cacheable tool, or `None` when the call is not one (or carries
/// what the key cannot tell apart).
fn key_of(request: &McpRequest, rules: &Rules) -> Option<Key> {
    let tool = request.tool()?;
    let hints = tool.annotations();
    if hints.read_only_hint != Some(true) || hints.idempotent_hint != Some(true) {
        return None;
    }
    let (vary, declared) = rules.of(tool.name());
    let extensions = request.extensions();
    // Values a layer outside put there, which the tool did not say its answer depends on:
    // undeclared, they may vary it; declared, the others do not.
    if !declared && !extensions.is_empty() {
        return None;
    }
    let mut key = KeyHasher(Sha256::new());
    key.part(b't', tool.name().as_bytes());
    key.part(
        b'v',
        request
            .protocol_version()
            .map_or("-", |v| v.as_str())
            .as_bytes(),
    );
    key.part(
        b'e',
        if request.era() == Era::Stateless {
            b"s"
        } else {
            b"h"
        },
    );
    key.0.update([b'a']);
    canonical(request.param("arguments").unwrap_or(&Value::Null), &mut key);
    if vary.parts & VARY_CLIENT != 0 {
        match request.client_key() {
            Some(crate::server::ClientKey::Principal(principal)) => {
                key.part(b'p', principal.as_bytes());
            }
            Some(crate::server::ClientKey::Address(ip)) => {
                key.part(b'i', ip.to_string().as_bytes());
            }
            // stdio: the connection is the client.
            None => key.part(b's', request.session_id().unwrap_or("").as_bytes()),
        }
    }
    if vary.parts & VARY_SESSION != 0 {
        key.part(b'S', request.session_id().unwrap_or("").as_bytes());
    }
    if vary.parts & VARY_META != 0
        && let Some(meta) = request.meta()
    {
        key.0.update([b'm']);
        let mut members: Vec<(&String, &Value)> = meta
            .iter()
            .filter(|(name, _)| !META_NOISE.contains(&name.as_str()))
            .collect();
        members.sort_by(|a, b| a.0.cmp(b.0));
        for (name, value) in members {
            key.part(b'n', name.as_bytes());
            canonical(value, &mut key);
        }
    }
    for extension in &vary.extensions {
        key.part(b'x', extension.name.as_bytes());
        let present = (extension.feed)(extensions, &mut key);
        key.0.update([u8::from(present)]);
    }
    Some(key.0.finalize().into())
}

/// Feeds `value` to `out` as JSON text with every object's members sorted by name.
fn canonical(value: &Value, out: &mut KeyHasher) {
    use std::io::Write as _;
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.0.update(b"{");
            for (i, (name, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                let _ = serde_json::to_writer(&mut *out, name);
                out.0.update(b":");
                canonical(value, out);
            }
            out.0.update(b"}");
        }
        Value::Array(items) => {
            out.0.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                canonical(item, out);
            }
            out.0.update(b"]");
        }
        scalar => {
            let _ = out.write_all(scalar.to_string().as_bytes());
        }
    }
}

impl<S> Service<McpRequest> for CacheService<S>
where
    S: Service<McpRequest, Response = McpResponse> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let key = key_of(&request, &self.rules);
        if let Some(key) = &key
            && let Some(mut hit) = self.store.get(key)
        {
            hit.set_id(request.id().clone());
            return Box::pin(std::future::ready(Ok(hit)));
        }
        let future = self.inner.call(request);
        let store = Arc::clone(&self.store);
        Box::pin(async move {
            let response = future.await?;
            if let Some(key) = key
                && response.is_complete()
                && !response.is_error()
                && !response.is_tool_error()
            {
                let size = response.encoded_len();
                store.put(key, response.clone(), size);
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn digest(value: &Value) -> Key {
        let mut key = KeyHasher(Sha256::new());
        canonical(value, &mut key);
        key.0.finalize().into()
    }

    #[test]
    fn keys_do_not_depend_on_member_order() {
        assert_eq!(
            digest(&json!({"b": [1, {"y": 2, "x": "q\""}], "a": null})),
            digest(&json!({"a": null, "b": [1, {"x": "q\"", "y": 2}]}))
        );
        let mut text = KeyHasher(Sha256::new());
        text.0.update(br#"{"a":null,"b":[1,{"x":"q\"","y":2}]}"#);
        let text: Key = text.0.finalize().into();
        assert_eq!(
            digest(&json!({"b": [1, {"y": 2, "x": "q\""}], "a": null})),
            text
        );
        assert_ne!(digest(&json!({"a": "1"})), digest(&json!({"a": 1})));
    }

    #[test]
    fn the_oldest_answers_go_first_and_the_bounds_hold() {
        let layer = CacheLayer::new().max_entries(3).max_bytes(100_000);
        let store = &layer.store;
        let response = |n: i64| McpResponse::result(n.into(), json!({"n": n}));
        let key = |n: u8| [n; 32];
        for n in 0..5 {
            store.put(key(n), response(i64::from(n)), 10);
        }
        assert_eq!(layer.usage().0, 3);
        assert!(store.get(&key(0)).is_none() && store.get(&key(1)).is_none());
        assert!(store.get(&key(4)).is_some());
        // Too large for the bytes (more than an eighth): not kept.
        store.put(key(9), response(9), 20_000);
        assert!(store.get(&key(9)).is_none());
        assert!(layer.usage().1 <= 100_000);
    }
}
