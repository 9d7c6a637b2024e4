//! One SSE stream of a session: every event it carried, with ids, so a client that lost the
//! connection can come back with `Last-Event-ID` and get the rest.
//!
//! Event ids are `{stream}_{sequence}`: the id names its stream, so a resume finds it, and
//! replays only that stream's events (never another's). The log is bounded: past the session's
//! event buffer the oldest events are dropped, and a resume from before them gets what is left.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::mpsc;

/// An SSE event as written on the wire.
fn event(id: &str, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + id.len() + 16);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

struct Inner {
    next: u64,
    log: VecDeque<(u64, Bytes)>,
    /// The HTTP response currently carrying this stream, if one is attached.
    live: Option<mpsc::UnboundedSender<Bytes>>,
    /// The stream carried its last event: attached responses end after the replay.
    done: bool,
}

pub(crate) struct EventStream {
    id: u64,
    capacity: usize,
    inner: Mutex<Inner>,
}

impl EventStream {
    pub(crate) fn new(id: u64, capacity: usize) -> Self {
        Self {
            id,
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                next: 0,
                log: VecDeque::new(),
                live: None,
                done: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append(&self, inner: &mut Inner, bytes: Bytes) {
        let sequence = inner.next;
        inner.next += 1;
        inner.log.push_back((sequence, bytes.clone()));
        while inner.log.len() > self.capacity {
            inner.log.pop_front();
        }
        if let Some(live) = &inner.live
            && live.send(bytes).is_err()
        {
            // The client went away; the events stay in the log for a resume.
            inner.live = None;
        }
    }

    /// The priming event that opens a stream (2025-11-25): an id, the reconnection delay, and
    /// empty data, so the client has an id to resume from before anything else happens.
    pub(crate) fn prime(&self, retry_ms: u64) {
        let mut inner = self.lock();
        let id = format!("{}_{}", self.id, inner.next);
        let bytes = Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"));
        self.append(&mut inner, bytes);
    }

    /// Adds one JSON-RPC message; `last` ends the stream after it.
    pub(crate) fn push(&self, message: &[u8], last: bool) {
        let mut inner = self.lock();
        let id = format!("{}_{}", self.id, inner.next);
        self.append(&mut inner, event(&id, message));
        if last {
            inner.done = true;
            inner.live = None;
        }
    }

    /// Ends the current HTTP response without ending the stream (SEP-1699 polling): the client
    /// reconnects with `Last-Event-ID` and gets the rest.
    pub(crate) fn disconnect(&self) {
        self.lock().live = None;
    }

    /// Whether the stream carried its last event and no response is attached to it any more:
    /// all that is left of it is the log a resume would replay.
    pub(crate) fn is_finished(&self) -> bool {
        let inner = self.lock();
        inner.done && inner.live.as_ref().is_none_or(|live| live.is_closed())
    }

    /// Whether an HTTP response carries this stream now.
    pub(crate) fn is_attached(&self) -> bool {
        self.lock()
            .live
            .as_ref()
            .is_some_and(|live| !live.is_closed())
    }

    /// Attaches a new HTTP response: it gets the logged events after `after` (none when `after`
    /// is `None`), then, unless the stream is done, every new event.
    pub(crate) fn attach(&self, after: Option<u64>) -> mpsc::UnboundedReceiver<Bytes> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        if let Some(after) = after {
            for (sequence, bytes) in &inner.log {
                if *sequence > after {
                    let _ = tx.send(bytes.clone());
                }
            }
        }
        if !inner.done {
            inner.live = Some(tx);
        }
        rx
    }
}

/// Reads an event id back into its stream and sequence.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, sequence) = id.trim().split_once('_')?;
    Some((stream.parse().ok()?, sequence.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::UnboundedReceiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(bytes) = rx.try_recv() {
            out.push(String::from_utf8(bytes.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn resumes_replay_what_came_after_the_last_event_id() {
        let stream = EventStream::new(3, 10);
        let mut first = stream.attach(None);
        stream.prime(500);
        stream.push(b"{\"a\":1}", false);
        assert_eq!(
            drain(&mut first),
            [
                "id: 3_0\nretry: 500\ndata: \n\n",
                "id: 3_1\ndata: {\"a\":1}\n\n"
            ]
        );
        stream.disconnect();
        stream.push(b"{\"b\":2}", true);
        assert!(drain(&mut first).is_empty());
        let mut resumed = stream.attach(Some(0));
        assert_eq!(
            drain(&mut resumed),
            [
                "id: 3_1\ndata: {\"a\":1}\n\n",
                "id: 3_2\ndata: {\"b\":2}\n\n"
            ]
        );
        assert_eq!(parse_event_id("3_2"), Some((3, 2)));
        assert_eq!(parse_event_id("nope"), None);
    }

    #[test]
    fn the_log_is_bounded() {
        let stream = EventStream::new(0, 2);
        for i in 0..5 {
            stream.push(format!("{i}").as_bytes(), false);
        }
        let mut resumed = stream.attach(Some(0));
        assert_eq!(drain(&mut resumed).len(), 2);
    }
}
