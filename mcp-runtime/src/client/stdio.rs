//! stdio: a child process (or any pair of byte streams) speaking newline-delimited JSON-RPC.
//! The child is killed when the client is dropped; the end of its stdout ends the connection,
//! and every request in flight fails with its exit status.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::connection::{Core, Outbound, SendFuture, Transport, lock};
use super::error::ClientError;
use crate::protocol::{Line, id_in_prefix, read_line};

/// What becomes of a child process's stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stderr {
    /// Passed through to this process's stderr (the default, as MCP hosts do).
    #[default]
    Inherit,
    /// Captured: its last lines are kept (at most 64 KiB) for
    /// [`Client::stderr_tail`](super::Client::stderr_tail), each line is logged at `debug`
    /// (target `mcp_runtime::client::stderr`), and an exit's error quotes the last line.
    Capture,
    /// Discarded.
    Null,
}

/// How to start an upstream server as a child process: a program, its arguments, environment
/// and working directory, and what becomes of its stderr.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) env_clear: bool,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) stderr: Stderr,
}

impl StdioCommand {
    /// Runs `program` (looked up in `PATH` when it has no slash).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            current_dir: None,
            stderr: Stderr::default(),
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child (which otherwise inherits this process's).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Starts the child with no environment but what [`env`](Self::env) sets.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    /// The child's working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// What becomes of the child's stderr ([`Stderr::Inherit`] by default).
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                Stderr::Inherit => Stdio::inherit(),
                Stderr::Capture => Stdio::piped(),
                Stderr::Null => Stdio::null(),
            })
            .kill_on_drop(true);
        if self.env_clear {
            command.env_clear();
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
    }
}

/// The last lines of a child's stderr, each with when it was read.
type StderrTail = Arc<Mutex<VecDeque<(Instant, String)>>>;

/// How much of a child's stderr is kept.
const STDERR_TAIL: usize = 64 * 1024;
/// How many messages may wait to be written to the server (each sender waits past it).
const WRITE_QUEUE: usize = 256;
/// How long `close` waits for a child to exit after its stdin closed before killing it.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Newline-delimited JSON-RPC over a byte stream pair, and the child process behind it.
pub(crate) struct LineTransport {
    writer: mpsc::Sender<Vec<u8>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr: Option<StderrTail>,
    /// The task writing to the server's input: aborting it closes that input.
    write_task: AbortHandle,
    tasks: Vec<AbortHandle>,
}

impl LineTransport {
    /// Spawns `command` and speaks to it.
    pub(crate) fn spawn(
        core: &Arc<Core>,
        command: &StdioCommand,
    ) -> Result<Arc<Self>, ClientError> {
        let mut child = command.command().spawn().map_err(|error| {
            ClientError::Transport(format!(
                "could not start `{}`: {error}",
                command.program.to_string_lossy()
            ))
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Transport(
                "the child has no stdio pipes".into(),
            ));
        };
        let stderr = child.stderr.take().map(|stderr| {
            let tail = Arc::new(Mutex::new(VecDeque::new()));
            (stderr, tail)
        });
        let tail = stderr.as_ref().map(|(_, tail)| Arc::clone(tail));
        let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
        let mut tasks = Vec::new();
        if let Some((stderr, tail)) = stderr {
            tasks.push(tokio::spawn(read_stderr(stderr, tail)).abort_handle());
        }
        Ok(Self::start(core, stdout, stdin, Some(child), tail, tasks))
    }

    /// Speaks over `reader` and `writer` (no process).
    pub(crate) fn io<R, W>(core: &Arc<Core>, reader: R, writer: W) -> Arc<Self>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::start(core, reader, writer, None, None, Vec::new())
    }

    fn start<R, W>(
        core: &Arc<Core>,
        reader: R,
        writer: W,
        child: Option<Arc<tokio::sync::Mutex<Option<Child>>>>,
        stderr: Option<StderrTail>,
        mut tasks: Vec<AbortHandle>,
    ) -> Arc<Self>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        let write_task = tokio::spawn(write_lines(writer, rx)).abort_handle();
        let child = child.unwrap_or_default();
        tasks.push(
            tokio::spawn(read_lines(
                Arc::downgrade(core),
                reader,
                Arc::clone(&child),
                stderr.clone(),
            ))
            .abort_handle(),
        );
        Arc::new(Self {
            writer: tx,
            child,
            stderr,
            write_task,
            tasks,
        })
    }
}

impl Transport for LineTransport {
    fn send(&self, message: Outbound) -> SendFuture<'_> {
        let bytes = match message {
            Outbound::Request { bytes, .. } | Outbound::Message(bytes) => bytes,
        };
        Box::pin(async move {
            self.writer
                .send(bytes)
                .await
                .map_err(|_| ClientError::Closed("the server's input is closed".into()))
        })
    }

    fn answers_in_send(&self) -> bool {
        false
    }

    fn cancel(&self, notification: Vec<u8>, _stateless: bool) {
        // Dropped when the write queue is full: the server then finishes the request, and its
        // answer finds no one waiting.
        let _ = self.writer.try_send(notification);
    }

    fn close(&self) -> SendFuture<'_> {
        Box::pin(async move {
            let child = Arc::clone(&self.child);
            let mut child = child.lock().await;
            if let Some(child) = child.as_mut() {
                // Closing stdin is how stdio asks a server to exit; the writer task closes it
                // when its queue is dropped, which aborting it does.
                self.write_task.abort();
                if tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.kill().await;
                }
            }
            Ok(())
        })
    }

    fn stderr_tail(&self) -> Option<String> {
        let tail = self.stderr.as_ref()?;
        let lines = lock(tail);
        Some(
            lines
                .iter()
                .map(|(_, line)| line.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        self.write_task.abort();
        for task in &self.tasks {
            task.abort();
        }
        // The child is killed when its handle drops (`kill_on_drop`).
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut queue: mpsc::Receiver<Vec<u8>>) {
    while let Some(mut line) = queue.recv().await {
        line.push(b'\n');
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_lines<R: AsyncRead + Unpin>(
    core: Weak<Core>,
    reader: R,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr: Option<StderrTail>,
) {
    let max = match core.upgrade() {
        Some(core) => core.limits.max_message_size,
        None => return,
    };
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let ended = loop {
        let read = read_line(&mut reader, &mut line, max).await;
        let Some(core) = core.upgrade() else { return };
        match read {
            Ok(Line::Complete) if line.iter().all(u8::is_ascii_whitespace) => {}
            Ok(Line::Complete) => core.receive(&line),
            Ok(Line::TooLong(length)) => core.too_long(id_in_prefix(&line), length),
            Ok(Line::End) => break "the server closed its output".to_owned(),
            Err(error) => break format!("reading the server's output failed: {error}"),
        }
    };
    // The reason names the child's exit when there is one.
    let mut reason = ended;
    if let Some(child) = child.lock().await.as_mut() {
        match tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
            Ok(Ok(status)) => reason = format!("the server process exited ({status})"),
            Ok(Err(error)) => reason = format!("{reason}; waiting for the process failed: {error}"),
            Err(_) => {}
        }
    }
    // The line and how long before the end it was written: a line from long before (a
    // complaint at start-up, say) is not why the server ended.
    if let Some(tail) = &stderr
        && let Some((written, last)) = lock(tail).back()
    {
        let before = written.elapsed().as_secs_f64();
        reason = if before < 1.0 {
            format!("{reason}; its last stderr line: {last}")
        } else {
            format!("{reason}; its last stderr line, written {before:.0} s before it ended: {last}")
        };
    }
    if let Some(core) = core.upgrade() {
        core.close(reason);
    }
}

async fn read_stderr<R: AsyncRead + Unpin>(stderr: R, tail: StderrTail) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut kept = 0usize;
    loop {
        match read_line(&mut reader, &mut line, STDERR_TAIL).await {
            Ok(Line::Complete) => {}
            Ok(Line::TooLong(_)) => line.truncate(1024),
            Ok(Line::End) | Err(_) => return,
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        tracing::debug!(target: "mcp_runtime::client::stderr", "{text}");
        let mut lines = lock(&tail);
        kept += text.len();
        lines.push_back((Instant::now(), text));
        while kept > STDERR_TAIL {
            match lines.pop_front() {
                Some((_, old)) => kept -= old.len(),
                None => break,
            }
        }
    }
}
