//! The panic catcher: a handler's panic becomes an error answer, never a dead task. The tasks
//! that run a tool after its request has been answered use it; the dispatch catches inside the
//! poll of its own futures, and both name the panic with [`panic_message`].

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;

/// Runs a future, turning a panic inside it into an `Err` instead of a dead task.
#[cfg_attr(not(feature = "tasks"), allow(dead_code))]
pub(crate) async fn catch_unwind<F: Future>(future: F) -> Result<F::Output, Box<dyn Any + Send>> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await
}

/// The text of a panic's payload, when it is one.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
