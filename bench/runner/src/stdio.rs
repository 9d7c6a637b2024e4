//! Driving a server over stdio: spawn, handshake, sequential and pipelined calls.

use std::cell::RefCell;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Semaphore;
use tokio::time::timeout;

use crate::measure::{Run, reply_id};

/// Longest wait for any one reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-runner","version":"0.0.0"}}}"#;
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

pub fn call_add(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#
    )
}

/// `add` mounted as `m` (`bench-gateway mount`).
pub fn call_mounted_add(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"m_add","arguments":{{"a":{id},"b":1}}}}}}"#
    )
}

/// `add` proxied as `p` (`bench-gateway proxy`).
pub fn call_proxied_add(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"p_add","arguments":{{"a":{id},"b":1}}}}}}"#
    )
}

pub fn call_add_sync(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add_sync","arguments":{{"a":{id},"b":1}}}}}}"#
    )
}

pub fn list_tools(id: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

pub struct StdioServer {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl StdioServer {
    pub fn spawn(binary: &Path) -> std::io::Result<Self> {
        Self::spawn_mode(binary, "stdio")
    }

    /// The server started with `mode` as its argument (`stdio`, or ours' `stdio-tasks`).
    pub fn spawn_mode(binary: &Path, mode: &str) -> std::io::Result<Self> {
        Self::spawn_args(binary, &[mode])
    }

    /// The server started with `args`.
    pub fn spawn_args(binary: &Path, args: &[&str]) -> std::io::Result<Self> {
        let mut child = Command::new(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped"));
        let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped"));
        Ok(Self {
            child,
            stdin,
            stdout,
            line: Vec::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    async fn send(&mut self, message: &str) -> std::io::Result<()> {
        self.stdin.write_all(message.as_bytes()).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await
    }

    async fn receive(&mut self) -> std::io::Result<&[u8]> {
        self.line.clear();
        let read = timeout(REPLY_TIMEOUT, self.stdout.read_until(b'\n', &mut self.line))
            .await
            .map_err(|_| std::io::Error::other("no reply within 10 s"))??;
        if read == 0 {
            return Err(std::io::Error::other("the server closed its stdout"));
        }
        Ok(&self.line)
    }

    /// Sends `initialize`, waits for its reply, sends `notifications/initialized`.
    pub async fn initialize(&mut self) -> std::io::Result<()> {
        self.send(INITIALIZE).await?;
        let reply = self.receive().await?;
        if !crate::measure::reply_ok(reply) {
            return Err(std::io::Error::other(format!(
                "initialize failed: {}",
                String::from_utf8_lossy(reply)
            )));
        }
        self.send(INITIALIZED).await
    }

    /// `calls` requests one at a time (each waits for the previous reply), at most `cap` long.
    pub async fn sequential(
        &mut self,
        calls: usize,
        cap: Duration,
        request: fn(usize) -> String,
    ) -> std::io::Result<Run> {
        let mut run = Run::new(calls);
        let start = Instant::now();
        for id in 1..=calls {
            if start.elapsed() > cap {
                break;
            }
            let message = request(id);
            let sent = Instant::now();
            self.send(&message).await?;
            let reply = self.receive().await?;
            run.record(sent, reply);
        }
        run.elapsed = start.elapsed();
        Ok(run)
    }

    /// `calls` tasks one at a time: `tools/call add_task` with `task` (2025-11-25's form), then
    /// `tasks/result` for the id it returns; one call is both round trips, at most `cap` long.
    pub async fn task_round_trips(&mut self, calls: usize, cap: Duration) -> std::io::Result<Run> {
        let mut run = Run::new(calls);
        let start = Instant::now();
        for id in 1..=calls {
            if start.elapsed() > cap {
                break;
            }
            let sent = Instant::now();
            let task = self.create_task(2 * id).await?;
            let result = format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"tasks/result","params":{{"taskId":"{task}"}}}}"#,
                2 * id + 1
            );
            self.send(&result).await?;
            let reply = self.receive().await?;
            run.record(sent, reply);
        }
        run.elapsed = start.elapsed();
        Ok(run)
    }

    /// Creates a task of `add_task` with request id `id` and returns its id.
    pub async fn create_task(&mut self, id: usize) -> std::io::Result<String> {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add_task","arguments":{{"a":{id},"b":1}},"task":{{"ttl":600000}}}}}}"#
        );
        self.send(&call).await?;
        let reply = self.receive().await?;
        let value: serde_json::Value = serde_json::from_slice(reply)
            .map_err(|e| std::io::Error::other(format!("a task reply that is not JSON: {e}")))?;
        value["result"]["task"]["taskId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                std::io::Error::other(format!("no task in {}", String::from_utf8_lossy(reply)))
            })
    }

    /// `calls` `tools/call add` requests with up to `window` in flight; the whole run must
    /// finish within `cap`.
    pub async fn pipelined(
        &mut self,
        calls: usize,
        window: usize,
        cap: Duration,
    ) -> std::io::Result<Run> {
        self.pipelined_with(calls, window, cap, call_add).await
    }

    /// [`pipelined`](Self::pipelined) with the requests `request` makes.
    pub async fn pipelined_with(
        &mut self,
        calls: usize,
        window: usize,
        cap: Duration,
        request: fn(usize) -> String,
    ) -> std::io::Result<Run> {
        let in_flight = Semaphore::new(window);
        let sent_at: RefCell<Vec<Option<Instant>>> = RefCell::new(vec![None; calls + 1]);
        let mut run = Run::new(calls);
        let stdin = &mut self.stdin;
        let stdout = &mut self.stdout;
        let line = &mut self.line;
        let start = Instant::now();
        let write = async {
            for id in 1..=calls {
                match in_flight.try_acquire() {
                    Ok(permit) => permit.forget(),
                    Err(_) => {
                        // The window is full: push what is buffered, then wait for a reply.
                        stdin.flush().await?;
                        in_flight
                            .acquire()
                            .await
                            .map_err(std::io::Error::other)?
                            .forget();
                    }
                }
                sent_at.borrow_mut()[id] = Some(Instant::now());
                stdin.write_all(request(id).as_bytes()).await?;
                stdin.write_all(b"\n").await?;
            }
            stdin.flush().await
        };
        let read = async {
            for _ in 0..calls {
                line.clear();
                if stdout.read_until(b'\n', line).await? == 0 {
                    return Err(std::io::Error::other("the server closed its stdout"));
                }
                let sent =
                    reply_id(line).and_then(|id| sent_at.borrow().get(id).copied().flatten());
                match sent {
                    Some(sent) => run.record(sent, line),
                    None => run.errors += 1,
                }
                in_flight.add_permits(1);
            }
            Ok::<(), std::io::Error>(())
        };
        timeout(cap, async { tokio::try_join!(write, read) })
            .await
            .map_err(|_| std::io::Error::other("pipelined run exceeded its time cap"))??;
        run.elapsed = start.elapsed();
        Ok(run)
    }

    /// Closes stdin (the server should exit) and reaps the process, killing it if it lingers.
    pub async fn close(mut self) {
        drop(self.stdin);
        if timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Spawn-to-initialize: from spawning the process to reading its `initialize` reply.
pub async fn startup(binary: &Path) -> std::io::Result<Duration> {
    let start = Instant::now();
    let mut server = StdioServer::spawn(binary)?;
    server.send(INITIALIZE).await?;
    server.receive().await?;
    let elapsed = start.elapsed();
    server.close().await;
    Ok(elapsed)
}
