//! One SSE stream of a session: every event it carried, with ids, so a client that lost the
//! connection can come back with `Last-Event-ID` and get the rest.
//!
//! Event ids are `{stream}_{sequence}`: the id names its stream, so a resume finds it, and
//! replays only that stream's events (never another's). The log is bounded: past the session's
//! event buffer the oldest events are dropped, and a resume from before them gets what is left.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;

use crate::server::{Account, ENTRY_OVERHEAD, Outbox, Overflow, Queue, channel_within};

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

/// What bounds one stream: its event count, the live queue of an attached response, and the
/// log budgets it draws on (its session's, then the server's as its client draws on it).
#[derive(Debug, Clone)]
pub(crate) struct Bounds {
    pub(crate) events: usize,
    pub(crate) live_bytes: usize,
    /// What all streams' live queues hold together, as its client draws on it.
    pub(crate) unread: Account,
    pub(crate) budgets: [Account; 2],
}

/// An SSE event with a name and no id (streams that are not resumed).
pub(crate) fn named_event(name: &str, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + name.len() + 16);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

struct Inner {
    next: u64,
    log: VecDeque<(u64, Bytes)>,
    /// The HTTP response currently carrying this stream, if one is attached.
    live: Option<Queue<Bytes>>,
    /// The stream carried its last event: attached responses end after the replay.
    done: bool,
}

/// An event copied to the shared store: its sequence, the message (`None` for the priming
/// event), and whether it is the stream's last.
pub(crate) type Mirrored = (u64, Option<Vec<u8>>, bool);

/// A copied event weighs its bytes, like a live one: the copies wait within the stream's
/// buffer and the server's total of unread bytes.
impl crate::server::Weigh for Mirrored {
    fn weight(&self) -> usize {
        self.1.as_ref().map_or(0, Vec::len) + crate::server::ENTRY_OVERHEAD
    }
}

/// An HTTP response carrying a stream: counted in its stream's presence while it lives.
pub(crate) struct Presence(std::sync::Arc<tokio::sync::watch::Sender<usize>>);

impl Drop for Presence {
    fn drop(&mut self) {
        self.0
            .send_modify(|attached| *attached = attached.saturating_sub(1));
    }
}

pub(crate) struct EventStream {
    id: u64,
    bounds: Bounds,
    inner: Mutex<Inner>,
    /// How many HTTP responses carry the stream now (their [`Presence`]s), made when first
    /// attached or watched: a session's standalone stream that no GET ever carries holds none
    /// (a watch channel is a few hundred bytes, every open session has such a stream).
    presence: std::sync::OnceLock<std::sync::Arc<tokio::sync::watch::Sender<usize>>>,
    /// With a shared store: where every event is copied, in order, so another replica can
    /// resume the stream.
    mirror: std::sync::OnceLock<crate::server::Queue<Mirrored>>,
}

impl EventStream {
    pub(crate) fn new(id: u64, bounds: Bounds) -> Self {
        Self {
            id,
            bounds: Bounds {
                events: bounds.events.max(1),
                ..bounds
            },
            inner: Mutex::new(Inner {
                next: 0,
                log: VecDeque::new(),
                live: None,
                done: false,
            }),
            presence: std::sync::OnceLock::new(),
            mirror: std::sync::OnceLock::new(),
        }
    }

    /// Watches how many HTTP responses carry the stream (0: its client is gone, or between
    /// responses).
    pub(crate) fn presence(&self) -> tokio::sync::watch::Receiver<usize> {
        self.presence_sender().subscribe()
    }

    fn presence_sender(&self) -> &std::sync::Arc<tokio::sync::watch::Sender<usize>> {
        self.presence
            .get_or_init(|| std::sync::Arc::new(tokio::sync::watch::Sender::new(0)))
    }

    /// Copies every event from now on to `mirror`.
    pub(crate) fn mirror_to(&self, mirror: crate::server::Sink<Mirrored>) {
        let _ = self.mirror.set(mirror.into_queue());
    }

    /// The stream's id (the part of its event ids before `_`).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    fn copy(&self, sequence: u64, message: Option<&[u8]>, last: bool) {
        if let Some(mirror) = self.mirror.get() {
            let _ = mirror.send((sequence, message.map(<[u8]>::to_vec), last));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `bytes` from both budgets, or gives back what it took.
    fn take(&self, bytes: usize) -> bool {
        let [session, server] = &self.bounds.budgets;
        if !session.take(bytes) {
            return false;
        }
        if !server.take(bytes) {
            session.give(bytes);
            return false;
        }
        true
    }

    fn give(&self, bytes: usize) {
        for budget in &self.bounds.budgets {
            budget.give(bytes);
        }
    }

    fn append(&self, inner: &mut Inner, bytes: Bytes) {
        let sequence = inner.next;
        inner.next += 1;
        // The oldest events make room; an event no budget has room for, even with this
        // stream's log empty, goes live only (a resume from before it gets what is after it).
        while inner.log.len() >= self.bounds.events {
            if let Some((_, old)) = inner.log.pop_front() {
                self.give(old.len() + ENTRY_OVERHEAD);
            }
        }
        let mut charged = self.take(bytes.len() + ENTRY_OVERHEAD);
        while !charged && let Some((_, old)) = inner.log.pop_front() {
            self.give(old.len() + ENTRY_OVERHEAD);
            charged = self.take(bytes.len() + ENTRY_OVERHEAD);
        }
        if charged {
            inner.log.push_back((sequence, bytes.clone()));
        }
        if let Some(live) = &inner.live
            && live.send(bytes).is_err()
        {
            // The client went away, or stopped reading and was cut off; the events stay in the
            // log for a resume.
            inner.live = None;
        }
    }

    /// The priming event that opens a stream (2025-11-25): an id, the reconnection delay, and
    /// empty data, so the client has an id to resume from before anything else happens.
    pub(crate) fn prime(&self, retry_ms: u64) {
        let mut inner = self.lock();
        let id = format!("{}_{}", self.id, inner.next);
        let bytes = Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"));
        self.copy(inner.next, None, false);
        self.append(&mut inner, bytes);
    }

    /// Adds one JSON-RPC message; `last` ends the stream after it.
    pub(crate) fn push(&self, message: &[u8], last: bool) {
        let mut inner = self.lock();
        let id = format!("{}_{}", self.id, inner.next);
        self.copy(inner.next, Some(message), last);
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
        inner.done && inner.live.as_ref().is_none_or(Queue::is_closed)
    }

    /// Whether an HTTP response carries this stream now.
    pub(crate) fn is_attached(&self) -> bool {
        self.lock()
            .live
            .as_ref()
            .is_some_and(|live| !live.is_closed())
    }

    /// Attaches a new HTTP response: it gets the logged events after `after` (none when `after`
    /// is `None`), then, unless the stream is done, every new event. The response holds the
    /// [`Presence`] while it lives.
    pub(crate) fn attach(&self, after: Option<u64>) -> (Outbox<Bytes>, Presence) {
        let sender = self.presence_sender();
        sender.send_modify(|attached| *attached += 1);
        let presence = Presence(std::sync::Arc::clone(sender));
        (self.attach_queue(after), presence)
    }

    fn attach_queue(&self, after: Option<u64>) -> Outbox<Bytes> {
        let (tx, rx) = channel_within(
            self.bounds.live_bytes,
            Overflow::Close,
            Some(self.bounds.unread.clone()),
        );
        let mut inner = self.lock();
        if let Some(after) = after {
            for (sequence, bytes) in &inner.log {
                if *sequence > after {
                    // Shared with the log, which bounds it.
                    tx.send_past_limit(bytes.clone());
                }
            }
        }
        if !inner.done {
            inner.live = Some(tx.into_queue());
        }
        rx
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        let held: usize = inner
            .log
            .iter()
            .map(|(_, bytes)| bytes.len() + ENTRY_OVERHEAD)
            .sum();
        self.give(held);
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
    use crate::server::Budget;

    fn drain(rx: &mut Outbox<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(bytes) = rx.try_recv() {
            out.push(String::from_utf8(bytes.to_vec()).unwrap());
        }
        out
    }

    fn bounds(events: usize) -> Bounds {
        Bounds {
            events,
            live_bytes: 1 << 20,
            unread: Budget::new(1 << 20).account(None),
            budgets: [
                Budget::new(1 << 20).account(None),
                Budget::new(1 << 20).account(None),
            ],
        }
    }

    #[test]
    fn resumes_replay_what_came_after_the_last_event_id() {
        let stream = EventStream::new(3, bounds(10));
        let mut first = stream.attach(None).0;
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
        let mut resumed = stream.attach(Some(0)).0;
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
        let stream = EventStream::new(0, bounds(2));
        for i in 0..5 {
            stream.push(format!("{i}").as_bytes(), false);
        }
        let mut resumed = stream.attach(Some(0)).0;
        assert_eq!(drain(&mut resumed).len(), 2);
    }

    #[test]
    fn logs_share_their_session_and_server_budgets() {
        let session = Budget::new(500);
        let server = Budget::new(1 << 20);
        let bounds = Bounds {
            events: 1_000,
            live_bytes: 1 << 20,
            unread: Budget::new(1 << 20).account(None),
            budgets: [session.account(None), server.account(None)],
        };
        let a = EventStream::new(1, bounds.clone());
        let b = EventStream::new(2, bounds);
        for _ in 0..50 {
            a.push(&[b'x'; 20], false);
            b.push(&[b'y'; 20], false);
        }
        // Each event is 33 bytes on the wire and 64 of overhead; the two logs together stay
        // within the session's 500.
        assert!(session.used() <= 500, "{}", session.used());
        assert_eq!(session.used(), server.used());
        // Whatever a stream still logs is what a resume gets: its newest events.
        let mut resumed = b.attach(Some(0)).0;
        let replay = drain(&mut resumed);
        assert!(!replay.is_empty());
        assert!(replay.last().unwrap().starts_with("id: 2_49\n"));
        // An event larger than the whole budget is sent live, never logged.
        let mut live = a.attach(None).0;
        a.push(&[b'z'; 600], false);
        assert_eq!(drain(&mut live).len(), 1);
        drop((a, b, resumed));
        assert_eq!(session.used(), 0);
        assert_eq!(server.used(), 0);
    }

    #[tokio::test]
    async fn a_response_that_is_not_read_is_cut_off_and_can_resume() {
        let stream = EventStream::new(
            1,
            Bounds {
                live_bytes: 100,
                ..bounds(1_000)
            },
        );
        let mut live = stream.attach(None).0;
        for _ in 0..10 {
            stream.push(&[b'x'; 20], false);
        }
        assert!(!stream.is_attached(), "cut off past 100 unread bytes");
        // What was queued is dropped, and the response ends.
        assert_eq!(live.recv().await, None);
        let mut resumed = stream.attach(Some(0)).0;
        assert_eq!(drain(&mut resumed).len(), 9);
    }
}
