//! The request-head deadline of every connection: one slot per connection, one sweeper per
//! listener.
//!
//! A connection has the header-read timeout to send each request head: from its accept, and
//! from the end of each response's body. hyper's own header-read timer would do this too, but
//! it arms and drops a boxed timer for every request, and makes the connection go once more
//! round its poll loop every time it goes idle, which costs a busy server several percent of
//! its throughput. Here the connection's service arms and disarms the deadline with a store
//! into the connection's own slot: disarmed when hyper calls it (a head is in), armed again
//! when the response's body is dropped (hyper drops it once it has written all of it, as it
//! goes back to reading). A sweeper task, one per listener, advances a coarse clock every tick
//! and wakes the connections whose deadline has passed, which then close; a deadline fires
//! within one tick of its time (a tenth of the timeout, at most one second).
//!
//! The slots are bounded: one per open connection (the accept loop bounds those), plus the
//! slots of connections closed since the last sweep, which are dropped whenever the list
//! reaches twice the connection limit.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use hyper::Response;
use hyper::body::{Body as HttpBody, Frame, SizeHint};

/// A slot's deadline when nothing is armed.
const DISARMED: u64 = u64::MAX;

/// The coarse clock and the connections' slots.
pub(crate) struct Clock {
    base: Instant,
    /// Milliseconds since `base`, as of the last tick.
    now_ms: AtomicU64,
    slots: Mutex<Vec<Weak<Slot>>>,
    /// The length at which the list is cleared of closed connections' slots.
    prune_at: usize,
    tick: Duration,
    /// The header-read timeout, in milliseconds.
    timeout_ms: u64,
}

/// One connection's deadline and the waker of the task that waits on it.
///
/// The clock is reached through the slot so that arming a deadline touches no reference
/// count that other connections share: only the slot's, which is the connection's own.
struct Slot {
    clock: Arc<Clock>,
    /// Milliseconds since the clock's base, or [`DISARMED`].
    deadline: AtomicU64,
    waker: AtomicWaker,
}

impl Slot {
    /// Whether the deadline is armed and past.
    fn passed(&self) -> bool {
        self.deadline.load(Ordering::Acquire) <= self.clock.now_ms()
    }
}

impl Clock {
    /// A clock for deadlines of `timeout`, for at most `max_connections` connections at once.
    pub(crate) fn new(timeout: Duration, max_connections: usize) -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            now_ms: AtomicU64::new(0),
            slots: Mutex::new(Vec::new()),
            prune_at: max_connections.saturating_mul(2).max(16),
            tick: (timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(1)),
            timeout_ms: millis(timeout),
        })
    }

    /// The deadline of one new connection, armed: it has the timeout to send its first head.
    pub(crate) fn connection(self: &Arc<Self>) -> HeadDeadline {
        let slot = Arc::new(Slot {
            clock: Arc::clone(self),
            deadline: AtomicU64::new(DISARMED),
            waker: AtomicWaker::new(),
        });
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.len() >= self.prune_at {
            slots.retain(|slot| slot.strong_count() > 0);
        }
        slots.push(Arc::downgrade(&slot));
        drop(slots);
        let deadline = HeadDeadline { slot };
        deadline.arm();
        deadline
    }

    /// Advances the clock every tick and wakes the connections past their deadline; runs
    /// until dropped.
    pub(crate) async fn sweep(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(self.tick);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let now = millis(self.base.elapsed());
            self.now_ms.store(now, Ordering::Release);
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            slots.retain(|slot| match slot.upgrade() {
                Some(slot) => {
                    // Woken again each tick until its connection sees it and closes, so a
                    // wake that raced with the arming is only a tick late.
                    if slot.deadline.load(Ordering::Acquire) <= now {
                        slot.waker.wake();
                    }
                    true
                }
                None => false,
            });
        }
    }

    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
}

/// Milliseconds, saturating below [`DISARMED`].
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).map_or(DISARMED - 1, |ms| ms.min(DISARMED - 1))
}

/// One connection's request-head deadline (see the module docs). Its clones are the
/// connection's: its service's, and each response body's.
#[derive(Clone)]
pub(crate) struct HeadDeadline {
    slot: Arc<Slot>,
}

impl HeadDeadline {
    /// Starts the wait for a request head: the deadline is a timeout from now.
    fn arm(&self) {
        let clock = &self.slot.clock;
        let at = clock.now_ms().saturating_add(clock.timeout_ms);
        self.slot
            .deadline
            .store(at.min(DISARMED - 1), Ordering::Release);
    }

    /// A head is in: no deadline until the response is written. The clone goes with the
    /// response ([`after_response`](Self::after_response)).
    pub(crate) fn head_in(&self) -> Self {
        self.slot.deadline.store(DISARMED, Ordering::Release);
        self.clone()
    }

    /// Resolves once the deadline has passed while armed: the connection is then closed.
    fn expired(&self) -> Expired<'_> {
        Expired { slot: &self.slot }
    }

    /// `future`'s output, or `None` if the deadline passes first.
    pub(crate) async fn within<F: Future>(&self, future: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            output = future => Some(output),
            () = self.expired() => None,
        }
    }

    /// `response`, whose body arms the deadline again when it is dropped: hyper drops a
    /// response's body once it has written all of it, and then waits for the next head.
    pub(crate) fn after_response<B>(self, response: Response<B>) -> Response<ArmedAfter<B>> {
        response.map(|body| ArmedAfter {
            body,
            arm: ArmOnDrop(self),
        })
    }
}

/// [`HeadDeadline::expired`].
struct Expired<'a> {
    slot: &'a Slot,
}

impl Future for Expired<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.slot.passed() {
            return Poll::Ready(());
        }
        self.slot.waker.register(cx.waker());
        // Armed between the check and the registration, and past already: not left for the
        // sweeper's next tick.
        if self.slot.passed() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// Arms its deadline when dropped.
struct ArmOnDrop(HeadDeadline);

impl Drop for ArmOnDrop {
    fn drop(&mut self) {
        self.0.arm();
    }
}

pin_project_lite::pin_project! {
    /// A response's body that arms its connection's head deadline when dropped
    /// ([`HeadDeadline::after_response`]).
    pub(crate) struct ArmedAfter<B> {
        #[pin]
        body: B,
        arm: ArmOnDrop,
    }
}

impl<B: HttpBody> HttpBody for ArmedAfter<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_fires_within_a_tick_and_not_before() {
        let clock = Clock::new(Duration::from_millis(200), 4);
        let _sweeper = tokio::spawn(Arc::clone(&clock).sweep());
        let started = Instant::now();
        let deadline = clock.connection();
        deadline.expired().await;
        let took = started.elapsed();
        // The tick is 20 ms: the deadline is read off a clock up to a tick behind, and
        // fires up to a tick late.
        assert!(took >= Duration::from_millis(170), "{took:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
    }

    #[tokio::test]
    async fn a_head_disarms_it_and_the_end_of_a_response_arms_it_again() {
        let clock = Clock::new(Duration::from_millis(100), 4);
        let _sweeper = tokio::spawn(Arc::clone(&clock).sweep());
        let deadline = clock.connection();
        let response = deadline.head_in();
        let waited = tokio::time::timeout(Duration::from_millis(400), deadline.expired()).await;
        assert!(waited.is_err(), "a disarmed deadline fired");
        // A response in the writing: still disarmed.
        let body = response.after_response(hyper::Response::new(axum::body::Body::from("answer")));
        let waited = tokio::time::timeout(Duration::from_millis(400), deadline.expired()).await;
        assert!(
            waited.is_err(),
            "the deadline fired while a response was written"
        );
        // Written: the wait for the next head starts.
        drop(body);
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(2), deadline.expired())
            .await
            .expect("the deadline fires once the response is written");
        assert!(started.elapsed() >= Duration::from_millis(70));
    }

    #[tokio::test]
    async fn slots_are_bounded() {
        let clock = Clock::new(Duration::from_millis(100), 4);
        let _sweeper = tokio::spawn(Arc::clone(&clock).sweep());
        let kept = clock.connection();
        for _ in 0..100 {
            drop(clock.connection());
        }
        let slots = clock.slots.lock().unwrap().len();
        assert!(slots <= 16, "{slots} slots kept for closed connections");
        drop(kept);
    }
}
