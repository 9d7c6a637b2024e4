//! Driving a server over Streamable HTTP: a keep-alive hyper connection per client, each with
//! its own `initialize` handshake and `Mcp-Session-Id` when the server hands one out.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::process::{Child, Command};
use tokio::time::timeout;

use crate::measure::{Run, reply_ok};
use crate::stdio::{INITIALIZE, INITIALIZED, call_add};

const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

pub struct HttpServer {
    child: Child,
    pub addr: SocketAddr,
}

impl HttpServer {
    /// Spawns `binary http 127.0.0.1:<free port>` and waits until it accepts connections.
    pub async fn spawn(binary: &Path) -> std::io::Result<Self> {
        Self::spawn_mode(binary, "http").await
    }

    /// The same with another mode than `http` (bench-layers' `http-<variant>`).
    pub async fn spawn_mode(binary: &Path, mode: &str) -> std::io::Result<Self> {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let child = Command::new(binary)
            .arg(mode)
            .arg(addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let start = Instant::now();
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                return Err(std::io::Error::other(
                    "the HTTP server did not listen within 10 s",
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(Self { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// One keep-alive connection, with the session it opened.
pub struct Client {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    session: Option<HeaderValue>,
    /// `Authorization: Bearer $BENCH_BEARER`, when that is set (the OAuth row of bench/auth.sh),
    /// or `DPoP $BENCH_BEARER` with `$BENCH_DPOP_PROOFS`.
    bearer: Option<HeaderValue>,
}

/// The DPoP proofs of bench/auth.sh's DPoP row: one per line of the file `$BENCH_DPOP_PROOFS`,
/// each used once, in order, by whichever connection sends next.
struct Proofs {
    lines: Vec<HeaderValue>,
    next: std::sync::atomic::AtomicUsize,
}

fn proofs() -> Option<&'static Proofs> {
    static PROOFS: std::sync::OnceLock<Option<Proofs>> = std::sync::OnceLock::new();
    PROOFS
        .get_or_init(|| {
            let path = std::env::var_os("BENCH_DPOP_PROOFS")?;
            let text = std::fs::read_to_string(path).expect("BENCH_DPOP_PROOFS is readable");
            Some(Proofs {
                lines: text
                    .lines()
                    .map(|line| HeaderValue::from_str(line).expect("a proof per line"))
                    .collect(),
                next: std::sync::atomic::AtomicUsize::new(0),
            })
        })
        .as_ref()
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(connection);
        Ok(Self {
            sender,
            host: HeaderValue::from_str(&addr.to_string()).map_err(std::io::Error::other)?,
            session: None,
            bearer: std::env::var("BENCH_BEARER").ok().and_then(|token| {
                let scheme = if proofs().is_some() { "DPoP" } else { "Bearer" };
                HeaderValue::from_str(&format!("{scheme} {token}")).ok()
            }),
        })
    }

    /// POSTs one message to `/mcp` and reads the whole reply body (JSON or an SSE stream).
    pub async fn post(
        &mut self,
        body: String,
    ) -> std::io::Result<(StatusCode, Option<HeaderValue>, Bytes)> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(bearer) = &self.bearer {
            request = request.header("authorization", bearer.clone());
        }
        if let Some(proofs) = proofs() {
            let next = proofs
                .next
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let proof = proofs
                .lines
                .get(next)
                .ok_or_else(|| std::io::Error::other("out of DPoP proofs"))?;
            request = request.header("dpop", proof.clone());
        }
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session.clone())
                .header("mcp-protocol-version", "2025-11-25");
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(std::io::Error::other)?;
        let exchange = async {
            self.sender.ready().await.map_err(std::io::Error::other)?;
            let response = self
                .sender
                .send_request(request)
                .await
                .map_err(std::io::Error::other)?;
            let status = response.status();
            let session = response.headers().get("mcp-session-id").cloned();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(std::io::Error::other)?
                .to_bytes();
            Ok::<_, std::io::Error>((status, session, body))
        };
        timeout(REPLY_TIMEOUT, exchange)
            .await
            .map_err(|_| std::io::Error::other("no HTTP reply within 10 s"))?
    }

    /// `initialize` (keeping the session id, if any) then `notifications/initialized`.
    pub async fn initialize(&mut self) -> std::io::Result<()> {
        self.session = None;
        let (status, session, body) = self.post(INITIALIZE.to_owned()).await?;
        if !status.is_success() || !reply_ok(&body) {
            return Err(std::io::Error::other(format!(
                "initialize failed: {status} {}",
                String::from_utf8_lossy(&body)
            )));
        }
        self.session = session;
        let (status, _, body) = self.post(INITIALIZED.to_owned()).await?;
        if !status.is_success() {
            return Err(std::io::Error::other(format!(
                "notifications/initialized failed: {status} {}",
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(())
    }
}

/// `tools/call add` over `connections` connections (each its own session), until `calls`
/// calls in all or `cap` has passed.
pub async fn load(
    addr: SocketAddr,
    connections: usize,
    calls: usize,
    cap: Duration,
) -> std::io::Result<Run> {
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        let mut client = Client::connect(addr).await?;
        client.initialize().await?;
        clients.push(client);
    }
    let next = Arc::new(AtomicUsize::new(1));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for mut client in clients {
        let next = Arc::clone(&next);
        tasks.push(tokio::spawn(async move {
            let mut run = Run::new(calls / connections + 1);
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id > calls || start.elapsed() > cap {
                    break;
                }
                let sent = Instant::now();
                let (status, _, body) = client.post(call_add(id)).await?;
                run.record(sent, &body);
                if !status.is_success() {
                    run.errors += 1;
                }
            }
            Ok::<Run, std::io::Error>(run)
        }));
    }
    let mut total = Run::new(calls);
    for task in tasks {
        let run = task.await.map_err(std::io::Error::other)??;
        total.calls += run.calls;
        total.errors += run.errors;
        total.latencies.extend(run.latencies);
    }
    total.elapsed = start.elapsed();
    Ok(total)
}

/// Opens `count` sessions (each `initialize` + `notifications/initialized`) on one connection
/// and leaves them open.
pub async fn open_sessions(
    addr: SocketAddr,
    count: usize,
    cap: Duration,
) -> std::io::Result<usize> {
    let mut client = Client::connect(addr).await?;
    let start = Instant::now();
    for opened in 0..count {
        if start.elapsed() > cap {
            return Ok(opened);
        }
        client.initialize().await?;
    }
    Ok(count)
}
