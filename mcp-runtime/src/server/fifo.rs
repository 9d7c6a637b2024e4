//! The queue an [`Outbox`](super::Outbox) is made of: messages in the order sent, from any
//! number of senders to one receiver, which waits for them on a task or on a thread.
//!
//! It lives inside the outbox's shared state, so a queue costs one allocation with its
//! bookkeeping, and a buffer only once two messages wait in it at the same time: the next one
//! is held in place. (An HTTP POST makes a queue for its replies on every request, and most
//! receive one message, the answer; tokio's unbounded channel took two allocations more, one
//! of them aligned to a cache line, and as many frees.)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

pub(crate) struct Fifo<T> {
    state: Mutex<State<T>>,
    /// The senders alive: once none is, a receiver that finds the queue empty gets `None`.
    /// Counted outside the lock, as every request clones its sender; the last one to go takes
    /// the lock to wake the receiver, which reads the count under it.
    senders: AtomicUsize,
    /// Wakes those waiting for the receiver to go ([`Fifo::closed`]).
    gone: tokio::sync::Notify,
    /// Wakes a receiver waiting on a thread ([`Fifo::blocking_recv`]).
    ready: Condvar,
}

struct State<T> {
    /// The next item, held in place when it came to an empty queue (then the items after it
    /// are in `items`).
    next: Option<T>,
    /// The items after `next`, in order, or all of them when `next` is empty.
    items: VecDeque<T>,
    /// The receiver is gone or closed the queue: nothing more is accepted.
    closed: bool,
    /// The receiver's task, waiting for a message.
    waker: Option<Waker>,
    /// The receiver waits on a thread (only then is the condition variable signalled).
    blocked: bool,
}

/// The most items whose room an empty queue keeps: the rest of a burst's is given back, so a
/// long-lived queue (a session's) holds no more than this once drained.
const KEPT: usize = 64;

impl<T> State<T> {
    fn push(&mut self, item: T) {
        if self.next.is_none() && self.items.is_empty() {
            self.next = Some(item);
        } else {
            self.items.push_back(item);
        }
    }

    fn pop(&mut self) -> Option<T> {
        if let Some(item) = self.next.take() {
            return Some(item);
        }
        let item = self.items.pop_front()?;
        if self.items.is_empty() && self.items.capacity() > KEPT {
            self.items.shrink_to(KEPT);
        }
        Some(item)
    }
}

impl<T> Fifo<T> {
    /// An empty queue with one sender.
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                next: None,
                items: VecDeque::new(),
                closed: false,
                waker: None,
                blocked: false,
            }),
            senders: AtomicUsize::new(1),
            gone: tokio::sync::Notify::new(),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `item`, or gives it back when the receiver is gone.
    pub(crate) fn send(&self, item: T) -> Result<(), T> {
        let mut state = self.lock();
        if state.closed {
            return Err(item);
        }
        state.push(item);
        self.wake_receiver(state);
        Ok(())
    }

    /// Wakes the receiver, wherever it waits, once `state` is unlocked.
    fn wake_receiver(&self, mut state: MutexGuard<'_, State<T>>) {
        let waker = state.waker.take();
        let blocked = state.blocked;
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        if blocked {
            self.ready.notify_one();
        }
    }

    /// Makes a queue whose senders are all gone, and which is open and empty, a queue with one
    /// sender again, as [`new`](Self::new) makes it; `false` (and nothing changed) when it is
    /// closed or holds an item. The caller knows no sender is left.
    pub(crate) fn reopen(&self) -> bool {
        let mut state = self.lock();
        if state.closed || state.next.is_some() || !state.items.is_empty() {
            return false;
        }
        state.waker = None;
        self.senders.store(1, Ordering::Release);
        true
    }

    /// One more sender (a sender cloned).
    pub(crate) fn add_sender(&self) {
        self.senders.fetch_add(1, Ordering::Relaxed);
    }

    /// One sender fewer; the last one's going ends the receiver's wait.
    pub(crate) fn drop_sender(&self) {
        if self.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_receiver(self.lock());
        }
    }

    fn no_sender(&self) -> bool {
        self.senders.load(Ordering::Acquire) == 0
    }

    /// Whether the receiver is gone or closed the queue.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Completes when the receiver is gone or closed the queue.
    pub(crate) async fn closed(&self) {
        loop {
            let notified = self.gone.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.is_closed() {
                return;
            }
            notified.await;
        }
    }

    /// Accepts nothing more; what is queued can still be received.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        if !state.closed {
            state.closed = true;
            drop(state);
            self.gone.notify_waiters();
        }
    }

    /// Closes the queue and takes what it holds (the receiver is gone), in one lock.
    pub(crate) fn close_and_take(&self) -> VecDeque<T> {
        let mut state = self.lock();
        let was_open = !std::mem::replace(&mut state.closed, true);
        let mut items = std::mem::take(&mut state.items);
        if let Some(next) = state.next.take() {
            items.push_front(next);
        }
        drop(state);
        if was_open {
            self.gone.notify_waiters();
        }
        items
    }

    /// The next item; `None` once the queue is empty and no sender is left, or it is closed.
    pub(crate) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.lock();
        if let Some(item) = state.pop() {
            return Poll::Ready(Some(item));
        }
        if state.closed || self.no_sender() {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            waker => *waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next item if one is queued.
    pub(crate) fn try_recv(&self) -> Option<T> {
        self.lock().pop()
    }

    /// The next item, waiting on the current thread; `None` as [`poll_recv`](Self::poll_recv)
    /// says.
    pub(crate) fn blocking_recv(&self) -> Option<T> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.pop() {
                state.blocked = false;
                return Some(item);
            }
            if state.closed || self.no_sender() {
                state.blocked = false;
                return None;
            }
            state.blocked = true;
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    async fn recv<T>(fifo: &Fifo<T>) -> Option<T> {
        std::future::poll_fn(|cx| fifo.poll_recv(cx)).await
    }

    #[tokio::test]
    async fn items_arrive_in_order_and_the_last_sender_ends_the_wait() {
        let fifo = Arc::new(Fifo::new());
        fifo.add_sender();
        let receiver = tokio::spawn({
            let fifo = Arc::clone(&fifo);
            async move {
                let mut got = Vec::new();
                while let Some(item) = recv(&fifo).await {
                    got.push(item);
                }
                got
            }
        });
        for n in 0..100 {
            assert!(fifo.send(n).is_ok());
            if n % 10 == 0 {
                tokio::task::yield_now().await;
            }
        }
        fifo.drop_sender();
        // One sender is left: the receiver still waits.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!receiver.is_finished());
        fifo.drop_sender();
        let got = tokio::time::timeout(Duration::from_secs(5), receiver)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_closed_queue_refuses_and_wakes_who_waits_for_it() {
        let fifo = Arc::new(Fifo::new());
        assert_eq!(fifo.send(1), Ok(()));
        let waiting = tokio::spawn({
            let fifo = Arc::clone(&fifo);
            async move { fifo.closed().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        fifo.close();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert!(fifo.is_closed());
        assert_eq!(fifo.send(2), Err(2));
        // What was queued before is still received, then the end.
        assert_eq!(recv(&fifo).await, Some(1));
        assert_eq!(recv(&fifo).await, None);
    }

    #[test]
    fn a_thread_waits_for_items_and_for_the_last_sender() {
        let fifo = Arc::new(Fifo::new());
        let receiver = std::thread::spawn({
            let fifo = Arc::clone(&fifo);
            move || {
                let mut got = Vec::new();
                while let Some(item) = fifo.blocking_recv() {
                    got.push(item);
                }
                got
            }
        });
        for n in 0..50 {
            fifo.send(n).unwrap();
            if n % 7 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        fifo.drop_sender();
        assert_eq!(receiver.join().unwrap(), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn one_item_at_a_time_takes_no_buffer_and_order_holds_across_both_places() {
        let fifo = Fifo::new();
        fifo.send(1).unwrap();
        assert_eq!(fifo.try_recv(), Some(1));
        fifo.send(2).unwrap();
        assert_eq!(fifo.try_recv(), Some(2));
        assert_eq!(fifo.lock().items.capacity(), 0);
        // Items sent while others wait, and taken in between, keep their order.
        fifo.send(3).unwrap();
        fifo.send(4).unwrap();
        assert_eq!(fifo.try_recv(), Some(3));
        fifo.send(5).unwrap();
        assert_eq!(fifo.try_recv(), Some(4));
        fifo.send(6).unwrap();
        fifo.send(7).unwrap();
        assert_eq!(fifo.close_and_take(), [5, 6, 7]);
        assert_eq!(fifo.try_recv(), None);
    }

    #[test]
    fn a_drained_queue_gives_back_a_burst_s_room() {
        let fifo = Fifo::new();
        for n in 0..1000 {
            fifo.send(n).unwrap();
        }
        assert!(fifo.lock().items.capacity() >= 1000);
        while fifo.try_recv().is_some() {}
        assert!(fifo.lock().items.capacity() <= KEPT);
    }
}
