//! The stdio transport: one JSON-RPC message per line, in and out.
//!
//! Reading and writing run apart: the reader hands each line to the session, which answers it
//! on the spot or, when its handler has to wait, on a task of its own, and one writer drains
//! every reply into the output, flushing when nothing more is queued, so a burst of replies
//! costs one flush. When stdin and stdout are pipes they are read and written through the
//! runtime's reactor (see [`pipes`]); otherwise a thread of ours reads, or writes. A line longer
//! than the configured limit is skipped (with an error to the client) without ever being held
//! in memory whole; nesting deeper than the limit is refused before parsing. At the end of
//! input, or when the output is gone (the client stopped reading), requests still running get
//! the grace period to finish.
//!
//! Requests run in a bounded window: each takes a slot, which the session keeps with the
//! request's in-flight entry and which is free again when the request ends, however it ends
//! (answered, cancelled, timed out, panicked). A request that finds the window full is answered
//! at once with an error.

use std::any::TypeId;
use std::io::{self, Read as _, Write as _};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc;

use crate::error::Result;
use crate::protocol::{
    ErrorObject, Incoming, Line, Message, Outgoing, buffered_line, id_in_prefix, read_line, scan,
};
use crate::server::{
    Budget, Core, McpService, Outbox, Overflow, REQUEST_OVERHEAD, Session, Sink, Transport, Window,
    channel,
};

/// The stdio entry points, on the built server.
impl McpService {
    /// Serves one session on stdin and stdout (newline-delimited JSON-RPC) until stdin closes.
    /// Logs belong on stderr: stdout carries protocol messages only.
    pub async fn serve_stdio(&self) -> Result<()> {
        self.serve_connection(tokio::io::stdin(), tokio::io::stdout())
            .await
    }

    /// Serves one session over any byte stream pair with stdio framing: one JSON-RPC message
    /// per line. Returns when `reader` reaches its end. A server that proxies upstreams first
    /// waits until it is [`ready`](Self::ready).
    pub async fn serve_connection<R, W>(&self, reader: R, writer: W) -> Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.ready_logged("reading requests").await;
        serve(Arc::clone(&self.core), reader, writer).await
    }
}

/// Connections served so far in this process, to tell sessions apart in traces.
static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(crate) async fn serve<R, W>(core: Arc<Core>, reader: R, writer: W) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // The read loop runs on a runtime worker, not on the caller's thread. `serve_stdio` is
    // usually awaited in `block_on` on the main thread, and from there every request task it
    // spawns, and every reply it hands the writer, crosses to a worker with a futex wake. On a
    // worker, tokio's LIFO slot runs the request and then the writer on the same thread.
    match tokio::spawn(serve_on_worker(core, reader, writer)).await {
        Ok(result) => result,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => Err(io::Error::other(error).into()),
    }
}

async fn serve_on_worker<R, W>(core: Arc<Core>, reader: R, writer: W) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sink, outbox) = channel(core.options.stream_buffer, Overflow::Backpressure);
    let stdout = TypeId::of::<W>() == TypeId::of::<tokio::io::Stdout>();
    let writer = if let Some(pipe) = stdout.then(pipes::stdout).flatten() {
        // The process's stdout is a pipe: written without blocking, by a task, when the
        // runtime's reactor says it has room.
        drop(writer);
        Writer::Task(tokio::spawn(write_lines(pipe, outbox)))
    } else if stdout {
        // The process's own stdout, but not a pipe: tokio's `Stdout` hands every write to the
        // blocking pool (a mutex, a condvar wake, and a wake back per flush); one thread of our
        // own that blocks on the queue and writes costs a single wake per burst of replies.
        drop(writer);
        let (done, finished) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("mcp-stdout".to_owned())
            .spawn(move || {
                let _ = done.send(write_stdout(outbox));
            })?;
        Writer::Thread(finished)
    } else {
        Writer::Task(tokio::spawn(write_lines(writer, outbox)))
    };
    let max = core.options.max_message_size;
    let grace = core.options.shutdown_grace;
    let inbox = Inbox {
        window: Window::new(core.options.max_in_flight),
        max_depth: core.options.max_nesting_depth,
        requests: Arc::clone(&core.request_bytes),
    };
    let session = Session::new(
        core,
        Transport::Stdio,
        sink.clone().into_queue().into(),
        None,
    );
    let opened = std::time::Instant::now();
    let reader: Pin<Box<dyn AsyncRead + Send>> =
        if TypeId::of::<R>() == TypeId::of::<tokio::io::Stdin>() {
            drop(reader);
            match pipes::stdin() {
                // A pipe is read when the reactor says it is readable: no thread in between.
                Some(pipe) => Box::pin(pipe),
                // Anything else (a terminal, a file): tokio's `Stdin` sends every read through
                // the blocking pool, so a thread of our own reads it.
                None => Box::pin(StdinThread::spawn()?),
            }
        } else {
            Box::pin(reader)
        };
    let connection = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = session.trace_name.set(format!("stdio-{connection}"));
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    let read_result = loop {
        // Backpressure: while the client leaves more than the stream buffer unread, its next
        // request waits in the pipe.
        if sink.is_over() {
            tokio::select! {
                () = sink.drained() => {}
                () = sink.closed() => break Ok(()),
            }
        }
        // A line already read whole is handled at once; the writer's end is checked as the
        // wait below would.
        if buffered_line(&mut reader, &mut line, max) {
            if sink.is_closed() {
                break Ok(());
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                inbox.receive(&session, &line, &sink);
            }
            continue;
        }
        let read = tokio::select! {
            read = read_line(&mut reader, &mut line, max) => read,
            // The writer stopped (the client closed our output): nobody hears answers any more.
            () = sink.closed() => break Ok(()),
        };
        match read {
            Ok(Line::End) => break Ok(()),
            Ok(Line::Complete) => {
                if !line.iter().all(u8::is_ascii_whitespace) {
                    inbox.receive(&session, &line, &sink);
                }
            }
            Ok(Line::TooLong(length)) => {
                let error = ErrorObject::invalid_request(format!(
                    "message of {length} bytes exceeds the limit of {max} bytes"
                ));
                // The line's head is kept, and its id is usually there.
                let id = id_in_prefix(&line);
                let _ = sink.send(Outgoing::error(id.as_ref(), &error));
            }
            Err(error) => break Err(error),
        }
    };
    // End of input: nothing more will be asked. Requests and tasks still running get the
    // grace period; what runs after it is stopped (nobody could read a task's result any more),
    // and said so.
    let started = std::time::Instant::now();
    let requests = session.shutdown(opened, grace, true).await;
    let tasks = session.release_tasks().await;
    if !requests.is_empty() || !tasks.is_empty() {
        tracing::warn!(
            grace_ms = grace.as_millis() as u64,
            requests = %requests.join(", "),
            tasks = %tasks.join(", "),
            "end of input: {} request(s) and {} task(s) still running after the {:.1} s grace \
             period were stopped",
            requests.len(),
            tasks.len(),
            grace.as_secs_f64()
        );
    } else if started.elapsed() >= std::time::Duration::from_millis(100) {
        tracing::info!(
            waited_ms = started.elapsed().as_millis() as u64,
            "end of input: every request and task finished"
        );
    }
    drop(session);
    drop(sink);
    let write_result = match writer {
        Writer::Task(task) => task.await.unwrap_or(Ok(())),
        Writer::Thread(finished) => finished.await.unwrap_or(Ok(())),
    };
    read_result?;
    // A client that closed its end of our output is gone: that is an ending, not a failure.
    match write_result {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(()),
    }
}

/// What happens to a line: the depth limit, then the session, requests in a slot of the window.
struct Inbox {
    window: Arc<Window>,
    max_depth: usize,
    /// The server's total of request bytes in flight.
    requests: Arc<Budget>,
}

impl Inbox {
    /// Parses one line and hands it to the session; a request runs in a slot of the window.
    /// What parsing the line builds is charged to the server's request total before it is
    /// built (a line that could never fit is refused unparsed) and, for a request, while it
    /// runs; a line that finds the total full is parsed only when it is small, and then only a
    /// message that holds nothing once handled (`ping`, notifications, responses) goes on.
    fn receive(&self, session: &Arc<Session>, line: &[u8], sink: &Sink) {
        // One pass over the line: its nesting, and what parsing it builds.
        let scanned = match scan(line, self.max_depth) {
            Ok(scanned) => scanned,
            Err(error) => {
                let _ = sink.send(Outgoing::error(None, &error));
                return;
            }
        };
        let cost = scanned.cost;
        let id = || id_in_prefix(line);
        if cost.peak.saturating_add(REQUEST_OVERHEAD) > self.requests.limit() {
            let error = ErrorObject::invalid_request(format!(
                "the message would hold {} bytes once parsed (its JSON values cost far more \
                 than their text), more than the server holds for all requests ({})",
                cost.peak,
                self.requests.limit()
            ));
            let _ = sink.send(Outgoing::error(id().as_ref(), &error));
            return;
        }
        let mut charge = self.requests.charge(cost.peak + REQUEST_OVERHEAD);
        if charge.is_none() && line.len() > SMALL_LINE {
            let _ = sink.send(Outgoing::error(id().as_ref(), &busy()));
            return;
        }
        let incoming = match scanned.parse() {
            Ok(incoming) => incoming,
            Err(error) => {
                let _ = sink.send(Outgoing::error(None, &error));
                return;
            }
        };
        if let Some(charge) = &mut charge {
            charge.shrink(cost.peak - cost.held);
        }
        let slots = Window::slots_needed(&incoming);
        if slots == 0 {
            session.receive(incoming, sink, None);
            return;
        }
        let refuse = |error: &ErrorObject| {
            let id = match &incoming {
                Incoming::Single(Ok(Message::Request(request))) => Some(&request.id),
                _ => None,
            };
            let _ = sink.send(Outgoing::error(id, error));
        };
        let Some(charge) = charge else {
            return refuse(&busy());
        };
        let mut running = match self.window.enter(slots) {
            Ok(running) => running,
            Err(error) => return refuse(&error),
        };
        // What the request holds stays charged to the server's total while it runs.
        running.hold(charge);
        // The session holds the slot until the request ends (or is cancelled).
        session.receive(incoming, sink, Some(running));
    }
}

/// The longest line parsed uncharged when the request total is full, for the messages that
/// hold nothing once handled: one line at a time, so at most this much (and its parse).
const SMALL_LINE: usize = 64 * 1024;

/// The error of a request that finds the server's request total full.
fn busy() -> ErrorObject {
    ErrorObject::unavailable(
        "the server is busy (too many request bytes in flight): wait for an answer",
        std::time::Duration::from_secs(1),
    )
}

/// The process's stdin and stdout as non-blocking pipes on the runtime's reactor.
///
/// MCP clients start a stdio server with pipes; read and written through the reactor, a request
/// and its reply cross no thread but the worker's. Switching a pipe to non-blocking mode applies
/// to every holder of that end, so it is only done for an end that is a pipe (never a terminal
/// or a file) and, for stdout, not the same pipe as stderr (where a blocking `eprintln!` would
/// then fail when the pipe is full).
#[cfg(unix)]
mod pipes {
    use std::fs::File;
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};

    use tokio::net::unix::pipe;

    fn dup(fd: impl AsFd) -> Option<File> {
        fd.as_fd().try_clone_to_owned().ok().map(File::from)
    }

    fn is_pipe(file: &File) -> bool {
        file.metadata().is_ok_and(|m| m.file_type().is_fifo())
    }

    pub(super) fn stdin() -> Option<pipe::Receiver> {
        let file = dup(std::io::stdin()).filter(is_pipe)?;
        pipe::Receiver::from_file(file).ok()
    }

    pub(super) fn stdout() -> Option<pipe::Sender> {
        let file = dup(std::io::stdout()).filter(is_pipe)?;
        let same = |a: &File, b: &File| match (a.metadata(), b.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => true,
        };
        if dup(std::io::stderr()).is_some_and(|stderr| same(&file, &stderr)) {
            return None;
        }
        pipe::Sender::from_file(file).ok()
    }
}

#[cfg(not(unix))]
mod pipes {
    pub(super) fn stdin() -> Option<tokio::io::Empty> {
        None
    }

    pub(super) fn stdout() -> Option<tokio::io::Sink> {
        None
    }
}

/// The process's stdin, read by a thread of our own that blocks in `read` and hands each chunk
/// over (at most a few chunks ahead, for backpressure). The thread ends at end of input, or
/// when this side is dropped and its next chunk has nowhere to go.
struct StdinThread {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
}

impl StdinThread {
    fn spawn() -> io::Result<Self> {
        let (sender, chunks) = mpsc::channel(4);
        std::thread::Builder::new()
            .name("mcp-stdin".to_owned())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let chunk = match stdin.lock().read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => Ok(buf[..n].to_vec()),
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                        Err(error) => Err(error),
                    };
                    let failed = chunk.is_err();
                    if sender.blocking_send(chunk).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks,
            current: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for StdinThread {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at == this.current.len() {
            match std::task::ready!(this.chunks.poll_recv(cx)) {
                Some(Ok(chunk)) => {
                    this.current = chunk;
                    this.at = 0;
                }
                Some(Err(error)) => return Poll::Ready(Err(error)),
                // End of input: a read of nothing.
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = buf.remaining().min(this.current.len() - this.at);
        buf.put_slice(&this.current[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Where replies are written from.
enum Writer {
    Task(tokio::task::JoinHandle<io::Result<()>>),
    Thread(tokio::sync::oneshot::Receiver<io::Result<()>>),
}

/// Writes every reply to the process's stdout, one burst at a time, until every sender is gone.
/// The stdout lock is held only while a burst is written, so a stray `println!` elsewhere
/// waits instead of deadlocking.
fn write_stdout(mut outbox: Outbox) -> io::Result<()> {
    let stdout = std::io::stdout();
    let mut burst = Vec::with_capacity(BURST);
    while let Some(message) = outbox.blocking_recv() {
        burst.clear();
        push_line(&mut burst, &message);
        while burst.len() < BURST {
            match outbox.try_recv() {
                Some(message) => push_line(&mut burst, &message),
                None => break,
            }
        }
        let mut out = stdout.lock();
        out.write_all(&burst)?;
        out.flush()?;
    }
    Ok(())
}

/// How many bytes of replies are written at once.
const BURST: usize = 64 * 1024;

fn push_line(burst: &mut Vec<u8>, message: &Outgoing) {
    // `CloseStream` asks an HTTP stream to disconnect; stdio has nothing to do.
    if let Some(message) = message.bytes() {
        burst.extend_from_slice(message);
        burst.push(b'\n');
    }
}

/// Writes every reply to `writer`, one burst at a time, until every sender is gone: the replies
/// queued are copied into one buffer of up to [`BURST`] bytes, written and flushed together.
async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut outbox: Outbox) -> io::Result<()> {
    let mut burst = Vec::with_capacity(BURST);
    while let Some(message) = outbox.recv().await {
        burst.clear();
        push_line(&mut burst, &message);
        drop(message);
        while burst.len() < BURST {
            match outbox.try_recv() {
                Some(message) => push_line(&mut burst, &message),
                None => break,
            }
        }
        writer.write_all(&burst).await?;
        writer.flush().await?;
        // A reply larger than a burst leaves its room behind.
        if burst.capacity() > BURST {
            burst = Vec::with_capacity(BURST);
        }
    }
    writer.shutdown().await
}
