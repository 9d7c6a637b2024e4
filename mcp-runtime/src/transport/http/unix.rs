//! Streamable HTTP over a Unix domain socket: the same router, limits and shutdown as
//! `serve_http`, on a socket file instead of a port. For a local server this is what the
//! transports working group recommends: no port another program can take or reach, and access
//! controlled by the file's permissions.
//!
//! - The socket file is created with mode 0600 (its owner alone may connect) unless
//!   [`UnixSocket::bind_with_mode`] says otherwise. It is bound under a private directory
//!   (mode 0700) beside the path, given its mode, then renamed into place: no other user can
//!   connect in between, and a stale file is replaced in one step.
//! - A file already at the path is replaced only if it is a socket nothing listens on (a server
//!   that died without removing it). A live socket, or a file that is not a socket, is an error
//!   and nothing is touched.
//! - At shutdown the file is removed, if it is still the one this server bound.
//! - Every connection is one local client for the fair shares (address `127.0.0.1`, port 0,
//!   as middleware and telemetry see it): the file's permissions, not addresses, say who may
//!   connect. The DNS-rebinding check on `Host` and `Origin` is off unless hosts were
//!   configured, since no browser page can open a Unix socket.

use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;

use super::client::Peer;
use super::deadline;
use super::{HostPolicy, router, shutdown_signal, stdio_instead};
use crate::McpService;
use crate::server::{Budget, ClientKey, Clients, Kind};

/// How long the accept loop pauses after an accept error, so it neither spins nor stops.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The most a connection buffers while reading a request, as on TCP.
const CONNECTION_BUFFER: usize = 64 * 1024;

/// What a connection past the limit hears before it is closed.
const CONNECTION_LIMIT_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
    Content-Type: text/plain\r\nContent-Length: 28\r\nConnection: close\r\n\r\n\
    too many connections; retry\n";

/// The mode a socket file gets by default: its owner may connect, nobody else.
const DEFAULT_SOCKET_MODE: u32 = 0o600;

/// A Unix domain socket bound for [`McpService::serve_unix_on`]: the listener and the file it
/// owns, removed when this is dropped (if the file at the path is still this socket).
///
/// ```no_run
/// # async fn run(service: mcp_runtime::McpService) -> mcp_runtime::Result<()> {
/// use mcp_runtime::UnixSocket;
/// // Group members may connect too.
/// let socket = UnixSocket::bind_with_mode("/run/mcp/notes.sock", 0o660)?;
/// service.serve_unix_on(socket, std::future::pending()).await
/// # }
/// ```
#[derive(Debug)]
pub struct UnixSocket {
    listener: tokio::net::UnixListener,
    path: PathBuf,
    /// The device and inode of the file bound, to remove only this one.
    identity: (u64, u64),
}

impl UnixSocket {
    /// Binds a socket file at `path` with mode 0600. Must be called within a Tokio runtime.
    ///
    /// An error when something already listens on `path` ("another server is listening"),
    /// when `path` holds a file that is not a socket, or when the directory cannot be written.
    pub fn bind(path: impl AsRef<Path>) -> std::io::Result<Self> {
        Self::bind_with_mode(path, DEFAULT_SOCKET_MODE)
    }

    /// Binds a socket file at `path` with permission bits `mode` (for example `0o660` for the
    /// owner and the file's group). Otherwise as [`bind`](Self::bind).
    pub fn bind_with_mode(path: impl AsRef<Path>, mode: u32) -> std::io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        refuse_live_or_foreign(&path)?;
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Bound where only we can reach it, given its mode, then moved into place.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Unique in this process, and unlikely to meet a directory a crashed one left.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let private = parent.join(format!(
            ".mcp-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&private)?;
        let staged = private.join("s");
        let bound = bind_staged(&staged, &path, mode);
        let _ = std::fs::remove_file(&staged);
        let _ = std::fs::remove_dir(&private);
        let listener = bound?;
        let metadata = std::fs::symlink_metadata(&path)?;
        Ok(Self {
            listener,
            path,
            identity: (metadata.dev(), metadata.ino()),
        })
    }

    /// The path of the socket file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        // Only our own file: a later server may have replaced a file we left stale.
        if let Ok(metadata) = std::fs::symlink_metadata(&self.path)
            && (metadata.dev(), metadata.ino()) == self.identity
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds a listener at `staged`, gives the file `mode`, and renames it to `path` (replacing a
/// stale socket there in one step).
fn bind_staged(staged: &Path, path: &Path, mode: u32) -> std::io::Result<tokio::net::UnixListener> {
    let listener = tokio::net::UnixListener::bind(staged)?;
    std::fs::set_permissions(staged, std::fs::Permissions::from_mode(mode & 0o777))?;
    std::fs::rename(staged, path)?;
    Ok(listener)
}

/// Refuses a path that holds a live socket or a file that is not a socket; a stale socket (a
/// connection to it is refused) may be replaced.
fn refuse_live_or_foreign(path: &Path) -> std::io::Result<()> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    if !metadata.file_type().is_socket() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a socket; remove it or choose another path",
                path.display()
            ),
        ));
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            format!(
                "another server is listening on {}; stop it or choose another path",
                path.display()
            ),
        )),
        // Nothing listens: a file left by a server that did not shut down.
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => Ok(()),
        Err(error) => Err(std::io::Error::new(
            error.kind(),
            format!(
                "{} is a socket this user cannot probe: {error}",
                path.display()
            ),
        )),
    }
}

/// Streamable HTTP on a Unix domain socket.
impl McpService {
    /// Serves Streamable HTTP on a Unix domain socket at `path` (mode 0600) until Ctrl-C
    /// (SIGINT) or SIGTERM, then lets requests in flight finish and removes the socket file.
    /// The endpoint is at the configured path (`/mcp`): a client connects to the socket and
    /// posts to `http://localhost/mcp`. A stale socket file is replaced; a live one (another
    /// server listening) is an error. See [`UnixSocket`] for another mode.
    ///
    /// With `MCP_RUNTIME_TRANSPORT=stdio` it serves stdin and stdout instead, as
    /// [`serve_http`](Self::serve_http) does.
    pub async fn serve_unix(&self, path: impl AsRef<Path>) -> crate::Result<()> {
        if stdio_instead() {
            return self.serve_stdio().await;
        }
        let socket = UnixSocket::bind(path)?;
        self.serve_unix_on(socket, shutdown_signal()).await
    }

    /// Serves Streamable HTTP on a bound [`UnixSocket`] until `shutdown` completes; the socket
    /// file is removed when this returns.
    pub async fn serve_unix_on(
        &self,
        socket: UnixSocket,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> crate::Result<()> {
        if stdio_instead() {
            drop(socket);
            return self.serve_stdio().await;
        }
        #[cfg(feature = "redis")]
        self.core.connect_shared().await?;
        let mut options = self.core.options.http.clone();
        if !options.hosts_configured {
            options.hosts = HostPolicy::Any;
        }
        let limits = Limits {
            max_connections: options.max_connections,
            header_read_timeout: options.header_read_timeout,
            grace: self.core.options.shutdown_grace,
        };
        let endpoint = options.path.clone();
        let (router, state) = router(Arc::clone(&self.core), options);
        self.ready().await;
        let core = Arc::clone(&self.core);
        tracing::info!(
            "listening on unix:{} (endpoint {endpoint})",
            socket.path().display()
        );
        let shutdown = async move {
            shutdown.await;
            core.close();
        };
        serve(router, &state.clients, socket, shutdown, limits).await?;
        Ok(())
    }
}

/// The connection limits of [`serve`].
struct Limits {
    max_connections: usize,
    header_read_timeout: Duration,
    grace: Duration,
}

/// The accept loop: connections counted against `max_connections` (all of them one local
/// client's), headers read within the timeout, and at shutdown the grace period for those
/// open. The socket (and its file) goes when this returns.
async fn serve(
    router: Router,
    clients: &Clients,
    socket: UnixSocket,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    limits: Limits,
) -> std::io::Result<()> {
    use futures_util::FutureExt as _;
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        // The header-read timeout is the connections' own (`deadline`), not hyper's.
        .header_read_timeout(None)
        .max_buf_size(CONNECTION_BUFFER);
    let clock = deadline::Clock::new(limits.header_read_timeout, limits.max_connections);
    let sweeper = tokio::spawn(Arc::clone(&clock).sweep());
    let _sweeper = AbortOnDrop(sweeper.abort_handle());
    let open = Budget::shared(
        limits.max_connections,
        Kind::Connections,
        limits.max_connections,
    );
    let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let mut connections = tokio::task::JoinSet::new();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = socket.listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "Unix socket accept failed; retrying in {ACCEPT_BACKOFF:?}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        let Some(held) = open.account(None).charge(1) else {
            let _ = stream.try_write(CONNECTION_LIMIT_RESPONSE);
            tracing::debug!(
                max_connections = limits.max_connections,
                "Unix socket connection limit reached: connection refused"
            );
            continue;
        };
        let peer = Arc::new(Peer {
            client: clients.get(ClientKey::address(local.ip())),
            address: local,
            proxy: false,
            host: std::sync::OnceLock::new(),
            last_session: std::sync::Mutex::new(None),
            spare_replies: std::sync::Mutex::new(None),
        });
        let inner = TowerToHyperService::new(router.clone());
        let head = clock.connection();
        let deadline = head.clone();
        let service = hyper::service::service_fn(move |mut request| {
            // A head is in; the wait for the next starts when this response is written.
            let deadline = deadline.head_in();
            request.extensions_mut().insert(Arc::clone(&peer));
            hyper::service::Service::call(&inner, request)
                .map(move |response| response.map(|response| deadline.after_response(response)))
        });
        let builder = builder.clone();
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let _held = held;
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                biased;
                _ = head.within(connection.as_mut()) => return,
                _ = stopped.wait_for(|stop| *stop) => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = head.within(connection).await;
        });
    }
    // No new connections from here on: the file goes first, then the listener.
    drop(socket);
    let started = Instant::now();
    let _ = stop.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.grace, drained).await.is_err() {
        tracing::warn!(
            open = connections.len(),
            "Unix socket shutdown: {} connection(s) still open after the {:?} grace period are dropped",
            connections.len(),
            limits.grace
        );
    }
    tracing::info!(
        "Unix socket shutdown: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Aborts a task when dropped: the sweeper ends with the accept loop.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
