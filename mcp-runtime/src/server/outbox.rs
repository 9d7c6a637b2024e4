//! The way from the server to one client stream: a queue of [`Outgoing`] messages whose bytes
//! are counted, so that a client that stops reading cannot make it grow without bound.
//!
//! Each queue has a byte limit, and what happens past it is the transport's policy:
//!
//! - on stdio the reader stops reading while the queue is over its limit (backpressure: the
//!   client's own requests wait), and notifications are dropped once it is twice over; replies
//!   always queue, since the in-flight window bounds how many can be pending;
//! - on an HTTP stream the queue overflows: what it holds is dropped, nothing more is queued,
//!   and the receiver sees the end of the stream (a client that resumes gets what the event log
//!   kept).
//!
//! The limit is checked before a message is queued, and one message is always accepted into an
//! empty queue, however large: a reply larger than the limit is not lost.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::fifo::Fifo;
use super::{Account, Client, ENTRY_OVERHEAD};
use crate::context::Principal;
use crate::protocol::Outgoing;

/// What a queue does with a message that would take it past its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// Queue replies anyway; drop notifications and requests once twice over, or when the
    /// shared total has no room (stdio, where the reader applies backpressure; a session's
    /// notifications on their way to its event stream).
    Backpressure,
    /// Drop everything queued and close the queue (an HTTP stream, which the client can resume).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Close,
}

/// What a queue carries: anything that knows its size in bytes.
pub(crate) trait Weigh {
    /// The bytes it holds, with [`ENTRY_OVERHEAD`] for its place in the queue.
    fn weight(&self) -> usize;
    /// Whether it answers a request (never dropped under [`Overflow::Backpressure`]).
    fn is_reply(&self) -> bool {
        false
    }
}

impl Weigh for Outgoing {
    fn weight(&self) -> usize {
        self.bytes().map_or(0, <[u8]>::len) + ENTRY_OVERHEAD
    }

    fn is_reply(&self) -> bool {
        matches!(
            self,
            Outgoing::Reply { .. } | Outgoing::Refused(_) | Outgoing::Batch(_)
        )
    }
}

#[cfg(feature = "http")]
impl Weigh for bytes::Bytes {
    fn weight(&self) -> usize {
        self.len() + ENTRY_OVERHEAD
    }
}

struct Shared<T> {
    /// The messages, from every sender to the receiver.
    fifo: Fifo<T>,
    /// Bytes queued and not yet taken by the receiver.
    bytes: AtomicUsize,
    limit: usize,
    overflow: Overflow,
    /// The queue overflowed (`Close`): nothing more goes in, the receiver ends.
    overflowed: AtomicBool,
    /// Messages dropped under `Backpressure`, for one warning per burst.
    dropped: AtomicUsize,
    /// Wakes a reader waiting for the queue to drain (`Backpressure`).
    drained: tokio::sync::Notify,
    /// What all such queues of the server may hold together, if they share a budget, as the
    /// client this queue is for draws on it.
    total: Option<Account>,
}

/// The sending side of a queue: what a session keeps for the messages that answer no request
/// (its notifications, a stream's copy to a shared store). Every [`Sink`] is one, with who its
/// requests came from.
pub(crate) struct Queue<T = Outgoing> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        self.shared.fifo.add_sender();
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Queue<T> {
    fn drop(&mut self) {
        self.shared.fifo.drop_sender();
    }
}

/// The sending side, cloned for every request that may answer on the stream: the
/// [`Queue`], with who sent those requests and from where. Only what requests are answered
/// through carries these (a session's own queue would hold 40 bytes more for nothing).
pub(crate) struct Sink<T = Outgoing> {
    queue: Queue<T>,
    /// Who the requests whose replies go here were made for (HTTP with OAuth): the requests
    /// read from one POST share it, so it travels with their replies' queue.
    principal: Option<Arc<Principal>>,
    /// The client's address (HTTP): for middleware and telemetry. Behind a trusted proxy, the
    /// client its forwarding header names (see `Server::trusted_proxies`).
    peer: Option<std::net::SocketAddr>,
}

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            principal: self.principal.clone(),
            peer: self.peer,
        }
    }
}

impl<T> std::ops::Deref for Sink<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

/// What makes a [`Notifier`]'s queue, and starts what drains it, on its first message.
pub(crate) type Opener = Box<dyn Fn() -> Queue + Send + Sync>;

/// A session's queue for the messages that answer no request, made when the first one is
/// sent: most sessions never get one, and over HTTP the queue and the task that drains it
/// into the session's standalone stream are some 2.6 KB.
///
/// A queue made late is the queue the session would have had from the start, empty until
/// then: the same limit, overflow and account, so the same messages are queued, dropped or
/// refused, in the same order.
pub(crate) struct Notifier {
    queue: OnceLock<Queue>,
    /// How the transport makes the queue, once it has somewhere to drain it (HTTP: set when
    /// the session opens).
    opener: OnceLock<Opener>,
}

impl From<Queue> for Notifier {
    /// A notifier whose queue is made already (stdio, the legacy transport, one stateless
    /// request: their queue is the one their replies use).
    fn from(queue: Queue) -> Self {
        Self {
            queue: OnceLock::from(queue),
            opener: OnceLock::new(),
        }
    }
}

impl Notifier {
    /// A notifier whose queue is made by `open`, when a message is first sent.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn later() -> Self {
        Self {
            queue: OnceLock::new(),
            opener: OnceLock::new(),
        }
    }

    /// Sets how the queue is made on the first message (once; a second opener is ignored).
    /// Until then there is nowhere to send: a message is not queued ([`NotSent::Closed`]).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn open_with(&self, opener: Opener) {
        let _ = self.opener.set(opener);
    }

    /// Queues `message` as [`Queue::send`] does, making the queue first if it is not made.
    /// Racing first senders make one queue: the others wait for it, then send on it.
    pub(crate) fn send(&self, message: Outgoing) -> Result<(), NotSent> {
        let queue = match self.queue.get() {
            Some(queue) => queue,
            None => {
                let Some(open) = self.opener.get() else {
                    return Err(NotSent::Closed);
                };
                self.queue.get_or_init(open)
            }
        };
        queue.send(message)
    }

    /// Whether the queue is made (a message was sent, or it was given).
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        self.queue.get().is_some()
    }
}

/// The receiving side: the transport's writer.
pub(crate) struct Outbox<T: Weigh = Outgoing> {
    shared: Arc<Shared<T>>,
}

/// Why a message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotSent {
    /// The receiver is gone (the client disconnected).
    Closed,
    /// The queue is over its limit (see [`Overflow`]).
    Full,
}

/// A new queue of at most `limit` bytes (see the module docs for what "at most" means).
pub(crate) fn channel<T: Weigh>(limit: usize, overflow: Overflow) -> (Sink<T>, Outbox<T>) {
    channel_within(limit, overflow, None)
}

/// A new queue of at most `limit` bytes that also draws on `total`, shared with other queues
/// (and with the other queues of its client, up to the client's share): a message that does
/// not fit in `total` is treated as over the queue's own limit.
pub(crate) fn channel_within<T: Weigh>(
    limit: usize,
    overflow: Overflow,
    total: Option<Account>,
) -> (Sink<T>, Outbox<T>) {
    let shared = Arc::new(Shared {
        fifo: Fifo::new(),
        bytes: AtomicUsize::new(0),
        limit,
        overflow,
        overflowed: AtomicBool::new(false),
        dropped: AtomicUsize::new(0),
        drained: tokio::sync::Notify::new(),
        total,
    });
    (
        Sink {
            queue: Queue {
                shared: Arc::clone(&shared),
            },
            principal: None,
            peer: None,
        },
        Outbox { shared },
    )
}

impl<T> Sink<T> {
    /// The queue alone, for messages that answer no request.
    pub(crate) fn into_queue(self) -> Queue<T> {
        self.queue
    }

    /// The same queue, for requests from the client at `peer`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn with_peer(mut self, peer: Option<std::net::SocketAddr>) -> Self {
        self.peer = peer;
        self
    }

    /// The client's address, when the transport knows it.
    pub(crate) fn peer(&self) -> Option<std::net::SocketAddr> {
        self.peer
    }

    /// The same queue, for requests made by `principal`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn with_principal(mut self, principal: Option<Arc<Principal>>) -> Self {
        self.principal = principal;
        self
    }

    /// Who the requests answered here were made for.
    pub(crate) fn principal(&self) -> Option<&Arc<Principal>> {
        self.principal.as_ref()
    }

    /// The address the requests answered here came from, when their client is one (HTTP
    /// without OAuth; an IPv6 client by its /64, as its shares are): a stateless client's
    /// tasks belong to it.
    #[cfg_attr(not(feature = "tasks"), allow(dead_code))]
    pub(crate) fn client_address(&self) -> Option<std::net::IpAddr> {
        self.client().and_then(|client| client.address())
    }
}

impl<T> Queue<T> {
    /// The client whose share this queue draws on, if it counts toward one (HTTP).
    pub(crate) fn client(&self) -> Option<&Arc<Client>> {
        self.shared.total.as_ref().and_then(Account::client)
    }
}

impl<T: Weigh> Queue<T> {
    /// Queues `message` for the client, unless the queue is closed or over its limit.
    pub(crate) fn send(&self, message: T) -> Result<(), NotSent> {
        let shared = &*self.shared;
        if shared.overflowed.load(Ordering::Acquire) {
            return Err(NotSent::Full);
        }
        let size = message.weight();
        let queued = shared.bytes.load(Ordering::Acquire);
        let reply = message.is_reply();
        // A reply answers a request the window admitted: it is counted in the total, never
        // refused by it (the window bounds how many there are).
        let in_total = match &shared.total {
            None => true,
            Some(total) if reply => {
                total.force(size);
                true
            }
            Some(total) => total.take(size),
        };
        let after = queued.saturating_add(size);
        let refused = match shared.overflow {
            Overflow::Close => !in_total || (queued > 0 && after > shared.limit),
            // Replies always queue; anything else is dropped when the total has no room or the
            // queue is twice over (the reader stops reading once it is over).
            Overflow::Backpressure => {
                !reply && (!in_total || (queued > 0 && after > shared.limit.saturating_mul(2)))
            }
        };
        if refused {
            if in_total && let Some(total) = &shared.total {
                total.give(size);
            }
            match shared.overflow {
                Overflow::Close => {
                    if !shared.overflowed.swap(true, Ordering::AcqRel) {
                        tracing::warn!(
                            limit = shared.limit,
                            "a client stopped reading its stream; the stream was cut off"
                        );
                        // Wakes a receiver that is waiting, so it sees the end; the message
                        // itself is dropped with the rest.
                        self.send_past_limit(message);
                    }
                }
                Overflow::Backpressure => {
                    if shared.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                        tracing::warn!(
                            limit = shared.limit,
                            "a client is not keeping up; notifications to it are dropped"
                        );
                    }
                }
            }
            return Err(NotSent::Full);
        }
        shared.bytes.fetch_add(size, Ordering::AcqRel);
        shared.fifo.send(message).map_err(|_| {
            shared.bytes.fetch_sub(size, Ordering::AcqRel);
            if let Some(total) = &shared.total {
                total.give(size);
            }
            NotSent::Closed
        })
    }

    /// Queues `message` whatever the limit (a replay of what a log already holds, which that
    /// log bounds); it still counts toward the limit.
    pub(crate) fn send_past_limit(&self, message: T) {
        let size = message.weight();
        let shared = &*self.shared;
        shared.bytes.fetch_add(size, Ordering::AcqRel);
        // Counted in the total too (which may pass its limit by this much), so that taking it
        // out gives back what was put in.
        if let Some(total) = &shared.total {
            total.force(size);
        }
        if shared.fifo.send(message).is_err() {
            shared.bytes.fetch_sub(size, Ordering::AcqRel);
            if let Some(total) = &shared.total {
                total.give(size);
            }
        }
    }

    /// Completes when the receiver is gone.
    pub(crate) async fn closed(&self) {
        self.shared.fifo.closed().await;
    }

    /// Whether the receiver is gone or the queue overflowed: nothing sent now is delivered.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.fifo.is_closed() || self.shared.overflowed.load(Ordering::Acquire)
    }

    /// Whether more than the limit is queued now.
    pub(crate) fn is_over(&self) -> bool {
        self.shared.bytes.load(Ordering::Acquire) > self.shared.limit
    }

    /// Waits while more than the limit is queued (the reader's backpressure on stdio).
    pub(crate) async fn drained(&self) {
        let shared = &*self.shared;
        loop {
            let notified = shared.drained.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if shared.bytes.load(Ordering::Acquire) <= shared.limit || shared.fifo.is_closed() {
                return;
            }
            notified.await;
        }
    }
}

impl<T: Weigh> Outbox<T> {
    fn took(&self, message: &T) {
        let shared = &*self.shared;
        let size = message.weight();
        if let Some(total) = &shared.total {
            total.give(size);
        }
        let before = shared.bytes.fetch_sub(size, Ordering::AcqRel);
        let after = before.saturating_sub(size);
        if before > shared.limit && after <= shared.limit {
            shared.dropped.store(0, Ordering::Relaxed);
            shared.drained.notify_waiters();
        }
    }

    /// A sending side again for this queue, once every one it had is gone, it is empty, and
    /// nothing was cut off: the same queue as new, with its limit and account, so that an HTTP
    /// connection's next POST uses its last one's instead of making one. `None` when a sink is
    /// still held (a request's work that went on, say), or anything is queued.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn reopen(&self) -> Option<Sink<T>> {
        let shared = &self.shared;
        // No sink (each holds the state) means nobody can send while this looks.
        if Arc::strong_count(shared) != 1
            || shared.overflowed.load(Ordering::Acquire)
            || shared.bytes.load(Ordering::Acquire) != 0
            || !shared.fifo.reopen()
        {
            return None;
        }
        Some(Sink {
            queue: Queue {
                shared: Arc::clone(shared),
            },
            principal: None,
            peer: None,
        })
    }

    /// The client whose share this queue draws on, if it counts toward one (HTTP).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn client(&self) -> Option<&Arc<Client>> {
        self.shared.total.as_ref().and_then(Account::client)
    }

    /// The next message; `None` once every sink is gone or the queue overflowed.
    pub(crate) async fn recv(&mut self) -> Option<T> {
        if self.shared.overflowed.load(Ordering::Acquire) {
            self.drop_queued();
            return None;
        }
        let message = std::future::poll_fn(|cx| self.shared.fifo.poll_recv(cx)).await?;
        // A receiver that always finds a message still gives way to other tasks, as it would
        // on tokio's channels.
        tokio::task::consume_budget().await;
        self.took(&message);
        if self.shared.overflowed.load(Ordering::Acquire) {
            self.drop_queued();
            return None;
        }
        Some(message)
    }

    /// The next message if one is queued.
    pub(crate) fn try_recv(&mut self) -> Option<T> {
        if self.shared.overflowed.load(Ordering::Acquire) {
            self.drop_queued();
            return None;
        }
        let message = self.shared.fifo.try_recv()?;
        self.took(&message);
        Some(message)
    }

    /// The next message, waiting on the current thread (the stdout thread).
    pub(crate) fn blocking_recv(&mut self) -> Option<T> {
        let message = self.shared.fifo.blocking_recv()?;
        self.took(&message);
        Some(message)
    }

    fn drop_queued(&mut self) {
        self.shared.fifo.close();
        while let Some(message) = self.shared.fifo.try_recv() {
            self.took(&message);
        }
    }
}

impl<T: Weigh> Drop for Outbox<T> {
    fn drop(&mut self) {
        // Nothing more is accepted, and what is left goes now, not with the last sender. It
        // gives its bytes back to the shared total; a send after this fails and gives back its
        // own.
        let left = self.shared.fifo.close_and_take();
        if self.shared.total.is_some() {
            for message in &left {
                self.took(message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(len: usize) -> Outgoing {
        Outgoing::Message(vec![b' '; len])
    }

    #[tokio::test]
    async fn an_http_stream_that_is_not_read_is_cut_off_past_its_limit() {
        let (sink, mut outbox) = channel(100, Overflow::Close);
        // One message larger than the limit is accepted into an empty queue.
        assert_eq!(sink.send(note(150)), Ok(()));
        assert_eq!(sink.send(note(10)), Err(NotSent::Full));
        // Once cut off, nothing more goes in, and the receiver ends without what was queued.
        assert_eq!(outbox.recv().await, None);
        assert_eq!(sink.send(note(1)), Err(NotSent::Full));
    }

    #[tokio::test]
    async fn stdio_keeps_replies_and_drops_notifications_when_far_over() {
        // Each message below weighs 800: its bytes and the entry overhead.
        let len = 800 - ENTRY_OVERHEAD;
        let (sink, mut outbox) = channel(1000, Overflow::Backpressure);
        let reply = || Outgoing::reply(crate::protocol::RequestId::Number(1), vec![b' '; len]);
        assert_eq!(sink.send(reply()), Ok(()));
        // Over the limit but not twice over: queued, and the reader must wait.
        assert_eq!(sink.send(note(len)), Ok(()));
        assert_eq!(sink.send(note(len)), Err(NotSent::Full));
        assert_eq!(sink.send(reply()), Ok(()));
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(20), sink.drained());
        assert!(
            waiting.await.is_err(),
            "the reader waits while the queue is over"
        );
        while outbox.try_recv().is_some() {}
        sink.drained().await;
        assert_eq!(sink.send(note(len)), Ok(()));
    }

    #[test]
    fn a_notifier_makes_its_queue_on_the_first_message_once_and_keeps_order() {
        let opened = Arc::new(AtomicUsize::new(0));
        let outbox = Arc::new(std::sync::Mutex::new(None));
        let notifier = Notifier::later();
        // Before the transport says where messages go, there is nowhere to send.
        assert_eq!(notifier.send(note(1)), Err(NotSent::Closed));
        notifier.open_with({
            let (opened, outbox) = (Arc::clone(&opened), Arc::clone(&outbox));
            Box::new(move || {
                opened.fetch_add(1, Ordering::SeqCst);
                let (sink, rx) = channel(1000, Overflow::Backpressure);
                *outbox.lock().unwrap() = Some(rx);
                sink.into_queue()
            })
        });
        assert!(!notifier.is_open(), "no queue until a message is sent");
        assert_eq!(opened.load(Ordering::SeqCst), 0);
        // Racing first senders make one queue between them.
        std::thread::scope(|scope| {
            for i in 0..4 {
                let notifier = &notifier;
                scope.spawn(move || notifier.send(note(i)));
            }
        });
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        for len in 4..8 {
            assert_eq!(notifier.send(note(len)), Ok(()));
        }
        let mut rx = outbox.lock().unwrap().take().unwrap();
        let mut lengths = Vec::new();
        while let Some(message) = rx.try_recv() {
            lengths.push(message.into_bytes().unwrap().len());
        }
        // All of them, and those sent one after another in the order sent.
        assert_eq!(lengths.len(), 8);
        assert_eq!(lengths[4..], [4, 5, 6, 7]);
    }

    #[tokio::test]
    async fn a_closed_receiver_is_reported() {
        let (sink, outbox) = channel(100, Overflow::Close);
        drop(outbox);
        assert_eq!(sink.send(note(1)), Err(NotSent::Closed));
    }
}
