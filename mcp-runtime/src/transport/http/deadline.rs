//! The clock behind hyper's header-read timeout: one slot per connection, one sweeper per
//! listener.
//!
//! hyper arms its header-read timer for every request head a keep-alive connection waits
//! for, and drops it when the head is in. With tokio's timer that is a registration and a
//! cancellation in the timer wheel per request, which costs a busy server several percent
//! of its throughput. This timer makes arming a deadline a few atomic stores into the
//! connection's own slot. A sweeper task, one per listener, advances a coarse clock every
//! tick and wakes the connections whose deadline has passed, so a deadline fires within one
//! tick of its time (a tenth of the timeout, at most one second).
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

impl Clock {
    /// A clock for deadlines of `timeout`, for at most `max_connections` connections at once.
    pub(crate) fn new(timeout: Duration, max_connections: usize) -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            now_ms: AtomicU64::new(0),
            slots: Mutex::new(Vec::new()),
            prune_at: max_connections.saturating_mul(2).max(16),
            tick: (timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(1)),
        })
    }

    /// A timer for one new connection.
    pub(crate) fn timer(self: &Arc<Self>) -> ConnectionTimer {
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
        ConnectionTimer { slot }
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
                    // Woken again each tick until the sleep sees it and is dropped, so a
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

/// hyper's [`Timer`](hyper::rt::Timer) for one connection.
#[derive(Clone)]
pub(crate) struct ConnectionTimer {
    slot: Arc<Slot>,
}

impl hyper::rt::Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(SlotSleep {
            slot: Arc::clone(&self.slot),
            deadline: millis(deadline.saturating_duration_since(self.slot.clock.base)),
        })
    }

    /// The coarse clock: deadlines are a tick coarse anyway, and reading it is one load.
    fn now(&self) -> Instant {
        let clock = &self.slot.clock;
        clock.base + Duration::from_millis(clock.now_ms())
    }
}

/// A deadline armed in its connection's slot while it is polled, disarmed when dropped.
struct SlotSleep {
    slot: Arc<Slot>,
    deadline: u64,
}

impl Future for SlotSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.slot.clock.now_ms() >= self.deadline {
            return Poll::Ready(());
        }
        self.slot.waker.register(cx.waker());
        self.slot.deadline.store(self.deadline, Ordering::Release);
        Poll::Pending
    }
}

impl hyper::rt::Sleep for SlotSleep {}

impl Drop for SlotSleep {
    fn drop(&mut self) {
        // Only its own deadline: a newer sleep of the same connection stays armed.
        let _ = self.slot.deadline.compare_exchange(
            self.deadline,
            DISARMED,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer as _;

    #[tokio::test]
    async fn a_deadline_fires_within_a_tick_and_not_before() {
        let clock = Clock::new(Duration::from_millis(200), 4);
        let _sweeper = tokio::spawn(Arc::clone(&clock).sweep());
        let timer = clock.timer();
        let started = Instant::now();
        timer.sleep(Duration::from_millis(200)).await;
        let took = started.elapsed();
        // The tick is 20 ms: the deadline is read off a clock up to a tick behind, and
        // fires up to a tick late.
        assert!(took >= Duration::from_millis(170), "{took:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
    }

    #[tokio::test]
    async fn a_dropped_deadline_wakes_nothing_and_slots_are_bounded() {
        let clock = Clock::new(Duration::from_millis(100), 4);
        let _sweeper = tokio::spawn(Arc::clone(&clock).sweep());
        let timer = clock.timer();
        let waker = futures_util::task::noop_waker();
        let mut sleep = timer.sleep(Duration::from_secs(60));
        assert!(
            sleep
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        assert_ne!(timer.slot.deadline.load(Ordering::Acquire), DISARMED);
        drop(sleep);
        assert_eq!(timer.slot.deadline.load(Ordering::Acquire), DISARMED);
        // A newer sleep stays armed when an older one of the same connection is dropped.
        let older = timer.sleep(Duration::from_millis(50));
        let mut newer = timer.sleep(Duration::from_secs(60));
        assert!(
            newer
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        drop(older);
        assert_ne!(timer.slot.deadline.load(Ordering::Acquire), DISARMED);
        drop((newer, timer));
        for _ in 0..100 {
            drop(clock.timer());
        }
        let slots = clock.slots.lock().unwrap().len();
        assert!(slots <= 16, "{slots} slots kept for closed connections");
    }
}
