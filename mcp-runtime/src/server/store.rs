//! The store shared by the replicas of one server, as the core sees it: the [`SharedStore`]
//! trait the sessions, the HTTP transport and the tasks call through, and what they exchange
//! (session records, event logs, fan-out messages). The Redis store that implements it, and
//! its connection to a running server, are the top-level `shared` module; nothing here names
//! it.

// Without the HTTP transport nothing connects a store.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::RequestId;

/// A boxed future that borrows for `'a` (`futures_util`'s `BoxFuture`, which stdio-only builds
/// do without).
pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A failure of the shared store. Its detail is logged, never sent to a client: clients get
/// -32603 with a fixed message.
#[derive(Debug, thiserror::Error)]
#[error("shared store: {0}")]
pub(crate) struct StoreError(pub(crate) String);

/// What a replica needs to serve a session another replica opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionRecord {
    /// The negotiated revision.
    pub(crate) version: String,
    /// `clientInfo`.
    pub(crate) client: Value,
    /// The client's capabilities.
    pub(crate) capabilities: Value,
    /// Whether `notifications/initialized` came.
    pub(crate) initialized: bool,
    /// The index of the log level (`logging/setLevel`).
    pub(crate) log_level: u8,
    /// The URIs subscribed to, sorted.
    pub(crate) subscriptions: Vec<String>,
    /// The principal the session is bound to (authorization), if any.
    #[serde(default)]
    pub(crate) owner: Option<String>,
}

/// A session record as the store has it: its JSON text, and a version that is new whenever
/// the store reads the record afresh into its cache (`0`: not cached, so apply it every time).
/// A replica that already applied a version has nothing to do for it.
#[derive(Debug, Clone)]
pub(crate) struct StoredRecord {
    pub(crate) version: u64,
    pub(crate) json: Arc<str>,
}

impl StoredRecord {
    /// The record itself.
    pub(crate) fn parse(&self) -> Result<SessionRecord, StoreError> {
        serde_json::from_str(&self.json).map_err(|e| StoreError(e.to_string()))
    }
}

/// Events of a standalone log: (sequence, message), oldest first.
pub(crate) type Events = Vec<(u64, Vec<u8>)>;

/// What crosses between replicas besides stored state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(crate) enum Fanout {
    /// A new event in a session's standalone log.
    Event {
        session: String,
        sequence: u64,
        data: String,
    },
    /// A new event of a POST's stream.
    Stream {
        session: String,
        stream: u64,
        sequence: u64,
        data: Option<String>,
        last: bool,
    },
    /// The client's answer to a request of ours, received by another replica.
    Answer {
        session: String,
        id: RequestId,
        message: Value,
    },
    /// A resource changed: for `subscriptions/listen` streams.
    Updated { origin: u64, uri: String },
    /// A task changed (its new version): wakes the waiters of `TaskStore::changed`.
    Task { id: String, version: u64 },
    /// A list changed: for `subscriptions/listen` streams.
    ListChanged {
        origin: u64,
        kind: String,
        method: String,
    },
}

/// The store the server goes through for the state its replicas share.
pub(crate) trait SharedStore: Send + Sync + 'static {
    /// Writes a session's record; it expires after `ttl` unless written again.
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        previous: Option<&'a SessionRecord>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// A session's record, if it is live.
    fn load_session<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>>;
    /// A session's record if this replica's cache holds it and may serve it now, without I/O:
    /// what [`load_session`](Self::load_session) would return. `None` says nothing of the
    /// session (read it).
    fn cached_session(&self, _id: &str) -> Option<StoredRecord> {
        None
    }
    /// Ends a session: its record and its event log.
    fn remove_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// How many sessions are live across all replicas.
    fn count_sessions(&self) -> BoxFuture<'_, Result<usize, StoreError>>;
    /// Appends an event to a session's standalone log (bounded to `keep` events) and tells
    /// every replica; returns its sequence number.
    fn append_event<'a>(
        &'a self,
        session: &'a str,
        data: &'a [u8],
        keep: usize,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;
    /// The events of a session's standalone log after `after`, oldest first.
    fn events_after<'a>(
        &'a self,
        session: &'a str,
        after: u64,
    ) -> BoxFuture<'a, Result<Events, StoreError>>;
    /// Copies an event of a POST's SSE stream (`data` `None` for its priming event) so any
    /// replica can resume the stream; the copy keeps `keep` events and expires after `ttl`.
    fn append_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        sequence: u64,
        data: Option<&'a [u8]>,
        last: bool,
        bounds: (usize, Duration),
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The copied events of a POST's stream after `after`, and whether its last event is among
    /// all those copied; `None` when the store knows no such stream.
    fn stream_after<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<(Events, bool)>, StoreError>>;
    /// The sessions subscribed to `uri`, or every live session when `None`.
    fn sessions<'a>(
        &'a self,
        uri: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;
    /// Sends a message to every replica (this one included).
    fn publish(&self, message: Fanout) -> BoxFuture<'_, Result<(), StoreError>>;
    /// The messages every replica published, as this replica receives them.
    fn receive(&self) -> tokio::sync::broadcast::Receiver<Fanout>;
    /// This replica's id in `origin` fields.
    fn replica(&self) -> u64;
    /// Whether the store answers now: one round trip (`PING`), not retried, for the readiness
    /// probe.
    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>>;
}
