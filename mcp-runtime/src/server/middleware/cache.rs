//! A response cache for tools that say calling them again changes nothing and reads nothing
//! that changes: `read_only` and `idempotent`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};
use crate::context::BoxFuture;
use crate::server::FastMap;

/// Answers a repeated `tools/call` of a tool marked both `read_only` and `idempotent` from what
/// the same call answered before, without running the handler.
///
/// - **Keyed** by the tool, its arguments (objects compared whatever the order of their
///   members), the caller's principal (OAuth: one caller's answers never reach another; with no
///   OAuth every caller is the same one), and the protocol revision and era the answer is shaped
///   for.
/// - **Kept**: only final, successful results: never a JSON-RPC error, a tool error
///   (`isError`), an input-required round or a task handle.
/// - **Bounded**: at most [`max_entries`](Self::max_entries) answers (1,000 by default) and
///   [`max_bytes`](Self::max_bytes) of keys and answers together (16 MiB by default), the oldest
///   dropped first; an answer larger than an eighth of the bytes is not kept. Each answer lives
///   for its [`ttl`](Self::ttl) (60 s by default).
/// - **Off by default**: a server caches only with this layer, and only the tools it marks.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::middleware::CacheLayer;
///
/// /// Today's exchange rate; the same all day.
/// #[tool(read_only, idempotent)]
/// async fn rate(currency: String) -> f64 {
///     1.08
/// }
///
/// let server = Server::builder()
///     .tool(rate)
///     .layer(CacheLayer::new().ttl(Duration::from_secs(300)).max_entries(10_000));
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct CacheLayer {
    store: Arc<Store>,
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
        }
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
        }
    }
}

/// The service of a [`CacheLayer`].
#[derive(Debug, Clone)]
pub struct CacheService<S> {
    inner: S,
    store: Arc<Store>,
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

#[derive(Debug, Default)]
struct State {
    entries: FastMap<Arc<str>, Entry>,
    /// Keys oldest first; a key may be here more than once (kept again), the entry's stamp tells.
    order: VecDeque<(Arc<str>, u64)>,
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

    fn get(&self, key: &str) -> Option<McpResponse> {
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

    fn put(&self, key: Arc<str>, response: McpResponse, size: usize) {
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
        state.order.push_back((Arc::clone(&key), stamp));
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

/// The cache key of a call to a cacheable tool, or `None` when the call is not one.
fn key_of(request: &McpRequest) -> Option<String> {
    let tool = request.tool()?;
    let hints = tool.annotations();
    if hints.read_only_hint != Some(true) || hints.idempotent_hint != Some(true) {
        return None;
    }
    let mut key = String::with_capacity(64);
    key.push_str(tool.name());
    key.push('\0');
    key.push_str(request.protocol_version().map_or("-", |v| v.as_str()));
    key.push('\0');
    if let Some(principal) = request.principal() {
        key.push_str(&principal.binding_key());
    }
    key.push('\0');
    match request.params().get("arguments") {
        Some(arguments) => canonical(arguments, &mut key),
        None => key.push_str("{}"),
    }
    Some(key)
}

/// `value` as JSON text with every object's members sorted by name.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
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
        let key = key_of(&request);
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
                store.put(Arc::from(key), response.clone(), size);
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_do_not_depend_on_member_order() {
        let (mut a, mut b) = (String::new(), String::new());
        canonical(&json!({"b": [1, {"y": 2, "x": "q\""}], "a": null}), &mut a);
        canonical(&json!({"a": null, "b": [1, {"x": "q\"", "y": 2}]}), &mut b);
        assert_eq!(a, b);
        assert_eq!(a, r#"{"a":null,"b":[1,{"x":"q\"","y":2}]}"#);
    }

    #[test]
    fn the_oldest_answers_go_first_and_the_bounds_hold() {
        let layer = CacheLayer::new().max_entries(3).max_bytes(100_000);
        let store = &layer.store;
        let response = |n: i64| McpResponse::result(n.into(), json!({"n": n}));
        for n in 0..5 {
            store.put(Arc::from(format!("k{n}")), response(n), 10);
        }
        assert_eq!(layer.usage().0, 3);
        assert!(store.get("k0").is_none() && store.get("k1").is_none());
        assert!(store.get("k4").is_some());
        // Too large for the bytes (more than an eighth): not kept.
        store.put(Arc::from("big"), response(9), 20_000);
        assert!(store.get("big").is_none());
        assert!(layer.usage().1 <= 100_000);
    }
}
