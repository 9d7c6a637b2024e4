//! Streamable HTTP sessions shared between replicas (see `server::shared`): a replica that
//! does not know a session rebuilds it from its record, every request reads the record first
//! (from the replica's cache while Redis says it has not changed) and writes it back after when
//! the request changed it, and the standalone (GET) stream is the session's event log in the
//! store, so it resumes on any replica.
//!
//! A store that fails gives the request -32603 with a fixed message (the detail is logged); the
//! process stays up and the next request tries again.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{HttpSession, HttpState, error_response_code, sse_response};
use crate::protocol::{Outgoing, RequestId};
use crate::server::store::{Events, Fanout, SharedStore, StoreError};
use crate::server::{Outbox, Overflow, channel_within};

/// What a client sees when the shared store fails: no internal detail; the error answers
/// `request` when the body was read (else its id is `null`).
pub(super) fn store_failed(request: Option<&RequestId>, error: &dyn std::fmt::Display) -> Response {
    tracing::error!(%error, "the shared store failed; the request gets -32603");
    error_response_code(
        request,
        StatusCode::SERVICE_UNAVAILABLE,
        -32603,
        "internal error: the server's shared state is unavailable; try again shortly",
    )
}

/// The session's record as the store has it, applied to this replica's copy: another replica
/// may have changed its log level, subscriptions or initialization since. `Ok(false)` when
/// the session ended elsewhere. A record this replica already applied (the same version from
/// the store's cache) is not applied again: the common case, with no I/O at all.
pub(super) async fn sync_in(
    store: &Arc<dyn SharedStore>,
    http_session: &HttpSession,
) -> Result<bool, StoreError> {
    let stored = match store.cached_session(&http_session.id) {
        Some(stored) => stored,
        None => match store.load_session(&http_session.id).await? {
            Some(stored) => stored,
            None => return Ok(false),
        },
    };
    if stored.version != 0 && stored.version == http_session.applied.load(Ordering::Acquire) {
        return Ok(true);
    }
    let record = stored.parse()?;
    let session = &http_session.session;
    if record.initialized {
        session
            .initialized
            .store(true, std::sync::atomic::Ordering::Release);
    }
    session
        .log_level
        .store(record.log_level, std::sync::atomic::Ordering::Relaxed);
    {
        let mut subscriptions = session
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        subscriptions.retain(|uri| {
            let keep = record.subscriptions.contains(uri);
            if !keep {
                session.release_subscription(uri);
            }
            keep
        });
        for uri in &record.subscriptions {
            if !subscriptions.contains(uri) && session.hold_subscription(uri) {
                subscriptions.insert(uri.clone());
            }
        }
    }
    *http_session.saved.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(record));
    http_session
        .applied
        .store(stored.version, Ordering::Release);
    Ok(true)
}

/// Writes this replica's view of the session back, refreshing its expiry.
pub(super) async fn sync_out(
    state: &HttpState,
    store: &Arc<dyn SharedStore>,
    http_session: &HttpSession,
) -> Result<(), StoreError> {
    // Unchanged, and its expiry refreshed recently: nothing to write (one round trip saved
    // on most requests), and nothing to build to find that out.
    let idle = state.options().session_idle;
    let fresh = http_session
        .written
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some_and(|at| at.elapsed() < idle / 8);
    if fresh
        && http_session
            .saved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|saved| http_session.session.matches_record(saved))
    {
        return Ok(());
    }
    let Some(mut record) = http_session.session.record() else {
        return Ok(());
    };
    record.owner.clone_from(&http_session.owner);
    let previous = http_session
        .saved
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if fresh && previous.as_deref() == Some(&record) {
        return Ok(());
    }
    store
        .save_session(&http_session.id, &record, previous.as_deref(), idle)
        .await?;
    *http_session
        .written
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
    *http_session.saved.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(record));
    Ok(())
}

/// Moves a session's notifications into its event log in the store.
pub(super) async fn pump_to_store(
    mut notifications: Outbox,
    store: Arc<dyn SharedStore>,
    session: String,
    keep: usize,
) {
    while let Some(message) = notifications.recv().await {
        let Some(bytes) = message.into_bytes() else {
            continue;
        };
        if let Err(error) = store.append_event(&session, &bytes, keep).await {
            tracing::error!(%error, "a notification was lost: the shared store failed");
        }
    }
}

/// Sends `bytes` to the session's standalone stream through its notifier (the store's log).
pub(super) fn to_standalone(http_session: &HttpSession, bytes: Vec<u8>) {
    match &http_session.notifier {
        Some(notifier) => {
            let _ = notifier.send(Outgoing::Message(bytes));
        }
        None => http_session.standalone.push(&bytes, false),
    }
}

fn stream_event(stream: u64, sequence: u64, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 32);
    out.extend_from_slice(format!("id: {stream}_{sequence}\ndata: ").as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A stream from the store's copy, on whichever replica the client resumes it: `stream` 0 is
/// the session's standalone log, any other a POST's stream that another replica serves. The
/// events after `after` come first, then every new one, each once and in order, whichever
/// replica wrote it, until the stream's last event or the client goes.
///
/// A gap (a message this replica missed) is filled from the store. When this replica falls
/// behind the fan-out, or the store fails while following, the stream ends and the client
/// resumes it from its last id.
pub(super) async fn follow(
    state: &HttpState,
    store: &Arc<dyn SharedStore>,
    follow: Follow<'_>,
) -> Response {
    let Follow {
        session: http_session,
        stream,
        after,
        open,
    } = follow;
    let session = http_session.id.as_str();
    // Listening first, so nothing written between the read of the log and now is missed.
    let mut live = store.receive();
    let (backlog, done) = match read_after(store, session, stream, after).await {
        Ok(Some(read)) => read,
        Ok(None) => {
            return super::error_response(
                StatusCode::NOT_FOUND,
                "no stream for that `Last-Event-ID`",
            );
        }
        Err(error) => return store_failed(None, &error),
    };
    let (tx, rx): (_, Outbox<Bytes>) = channel_within(
        state.core.options.stream_buffer,
        Overflow::Close,
        Some(state.unread.account(http_session.session.client.as_ref())),
    );
    let mut last = after;
    for (sequence, data) in backlog {
        last = last.max(sequence);
        tx.send_past_limit(stream_event(stream, sequence, &data));
    }
    if done {
        return sse_response((rx, None), open);
    }
    let session = session.to_owned();
    let store = Arc::clone(store);
    tokio::spawn(async move {
        loop {
            let message = tokio::select! {
                message = live.recv() => message,
                () = tx.closed() => return,
            };
            // `Lagged`: the client resumes from its last id and gets what was missed.
            let Ok(message) = message else { return };
            let Some((sequence, data, end)) = event_of(&message, &session, stream) else {
                continue;
            };
            if sequence <= last {
                continue;
            }
            if sequence > last + 1 {
                let (events, done) = match read_after(&store, &session, stream, last).await {
                    Ok(Some(read)) => read,
                    Ok(None) => return,
                    Err(error) => {
                        tracing::error!(%error, "the shared store failed: the stream ends, the client resumes it");
                        return;
                    }
                };
                for (sequence, data) in events {
                    if sequence > last && tx.send(stream_event(stream, sequence, &data)).is_err() {
                        return;
                    }
                    last = last.max(sequence);
                }
                if done {
                    return;
                }
                continue;
            }
            last = sequence;
            if let Some(data) = data
                && tx.send(stream_event(stream, sequence, data)).is_err()
            {
                return;
            }
            if end {
                return;
            }
        }
    });
    sse_response((rx, None), open)
}

/// Which stream of which session a [`follow`] reads, and its place in its client's share of
/// open streams.
pub(super) struct Follow<'a> {
    pub(super) session: &'a HttpSession,
    /// 0 for the standalone log.
    pub(super) stream: u64,
    /// The last sequence the client has.
    pub(super) after: u64,
    pub(super) open: Option<crate::server::Charge>,
}

/// The store's events of `stream` (0: the standalone log) after `after`, and whether its last
/// is among them; `None` when the store knows no such POST stream.
async fn read_after(
    store: &Arc<dyn SharedStore>,
    session: &str,
    stream: u64,
    after: u64,
) -> Result<Option<(Events, bool)>, StoreError> {
    if stream == 0 {
        // A standalone log never ends.
        return Ok(Some((store.events_after(session, after).await?, false)));
    }
    store.stream_after(session, stream, after).await
}

/// A fan-out message's event of `stream` in `session`, if it is one: its sequence, its data
/// (`None` for a POST stream's priming event) and whether it is the stream's last.
fn event_of<'a>(
    message: &'a Fanout,
    session: &str,
    stream: u64,
) -> Option<(u64, Option<&'a [u8]>, bool)> {
    match message {
        Fanout::Event {
            session: of,
            sequence,
            data,
        } if stream == 0 && of == session => Some((*sequence, Some(data.as_bytes()), false)),
        Fanout::Stream {
            session: of,
            stream: id,
            sequence,
            data,
            last,
        } if *id == stream && of == session => {
            Some((*sequence, data.as_deref().map(str::as_bytes), *last))
        }
        _ => None,
    }
}

/// The first id of a session's POST streams on this replica: random, so two replicas serving
/// one session never number two streams alike.
pub(super) fn first_stream_id() -> u64 {
    let mut bytes = [0u8; 4];
    let _ = getrandom::fill(&mut bytes);
    1 + (u64::from(u32::from_le_bytes(bytes)) << 20)
}

/// Copies every event of `stream` to the store, in order, until its last.
pub(super) fn mirror(
    store: Arc<dyn SharedStore>,
    session: String,
    stream: &super::EventStream,
    bounds: &super::stream::Bounds,
    (keep, ttl): (usize, std::time::Duration),
) {
    // Bounded like a live stream: if the store falls behind by more than a stream's buffer
    // (or the server's total), the copy is cut off, logged, and a resume elsewhere misses the
    // rest, while this replica's own stream goes on.
    let (tx, mut rx) = channel_within::<super::stream::Mirrored>(
        bounds.live_bytes,
        Overflow::Close,
        Some(bounds.unread.clone()),
    );
    stream.mirror_to(tx);
    let id = stream.id();
    tokio::spawn(async move {
        while let Some((sequence, data, last)) = rx.recv().await {
            if let Err(error) = store
                .append_stream(&session, id, sequence, data.as_deref(), last, (keep, ttl))
                .await
            {
                tracing::error!(%error, "an event was not copied to the shared store: a resume on another replica misses it");
            }
            if last {
                return;
            }
        }
    });
}
