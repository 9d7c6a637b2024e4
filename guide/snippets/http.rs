//! Streamable HTTP.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{CacheHint, Cacheable};

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

// ANCHOR: serve
async fn serve(secret: String) -> mcp_runtime::Result<()> {
    Server::new("adder", env!("CARGO_PKG_VERSION"))
        // Behind a proxy, accept the public host name (loopback only by default).
        .allowed_hosts(["mcp.example.com"])
        // Every replica verifies the others' input-required `requestState`.
        .request_state_secret(secret)
        // Stateless clients may cache `tools/list` for five minutes.
        .cache_hint(
            Cacheable::Tools,
            CacheHint::public(Duration::from_secs(300)),
        )
        .serve_http("0.0.0.0:8000")
        .await
}
// ANCHOR_END: serve

// ANCHOR: router
async fn beside_other_routes() -> mcp_runtime::Result<()> {
    let service = Server::new("adder", "1.0.0").build()?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(service.into_router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    axum::serve(listener, app).await?;
    Ok(())
}
// ANCHOR_END: router

// ANCHOR: own_routes
async fn with_own_routes() -> mcp_runtime::Result<()> {
    Server::new("adder", "1.0.0")
        // Served by the same server as /mcp: its connection limit, timeouts and shutdown.
        .http_route("/version", axum::routing::get(|| async { "1.0.0" }))
        .http_route(
            "/hooks/deploy",
            axum::routing::post(|body: String| async move { format!("{} bytes", body.len()) }),
        )
        .serve_http("127.0.0.1:8000")
        .await
}
// ANCHOR_END: own_routes

// ANCHOR: json_only
fn json_only() -> Server {
    // Every POST answered with `application/json`, never an SSE stream.
    Server::new("adder", "1.0.0").json_response(true)
}
// ANCHOR_END: json_only

// ANCHOR: legacy
fn for_old_clients() -> Server {
    // GET /sse and POST /messages?sessionId=.. beside /mcp, for HTTP+SSE (2024-11-05) clients.
    Server::new("adder", "1.0.0").legacy_sse(true)
}
// ANCHOR_END: legacy

// ANCHOR: unix
async fn on_a_unix_socket() -> mcp_runtime::Result<()> {
    // Streamable HTTP at /mcp on a socket file only this user may open (mode 0600), removed
    // at shutdown.
    Server::new("adder", "1.0.0")
        .serve_unix("/run/user/1000/adder.sock")
        .await
}
// ANCHOR_END: unix

// ANCHOR: unix_client
async fn add_over_a_unix_socket(
    socket: &std::path::Path,
) -> Result<String, mcp_runtime::client::ClientError> {
    let client = mcp_runtime::client::Client::builder()
        // Every request goes through the socket; the URL names the endpoint.
        .unix_socket(socket)
        .http("http://localhost/mcp")
        .await?;
    let sum = client
        .call_tool("add", serde_json::json!({"a": 2, "b": 3}))
        .await?;
    Ok(sum.text())
}
// ANCHOR_END: unix_client

// ANCHOR: connection
async fn over_tcp_lines() -> mcp_runtime::Result<()> {
    // One JSON-RPC message per line over each accepted TCP connection, as on stdio.
    let service = Server::new("adder", "1.0.0").build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:9000").await?;
    loop {
        let (socket, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let (reader, writer) = socket.into_split();
            service.serve_connection(reader, writer).await
        });
    }
}
// ANCHOR_END: connection

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn any_byte_stream() -> Result<(), Box<dyn std::error::Error>> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let service = Server::builder().tool(add).build()?;
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(async move { service.serve_connection(server_read, server_write).await });
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await?;
        let mut line = String::new();
        BufReader::new(client_read).read_line(&mut line).await?;
        assert_eq!(serde_json::from_str::<serde_json::Value>(&line)?["id"], 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_unix_socket_serves_mcp_to_its_owner() -> Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let path = std::env::temp_dir().join(format!("mcp-guide-{}.sock", std::process::id()));
        let socket = mcp_runtime::UnixSocket::bind(&path)?;
        let metadata = std::fs::metadata(&path)?;
        assert!(metadata.file_type().is_socket());
        assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
        // A second server on the live socket is refused, and the socket is left alone.
        let second = mcp_runtime::UnixSocket::bind(&path).expect_err("the socket is live");
        assert_eq!(second.kind(), std::io::ErrorKind::AddrInUse);
        assert!(
            second.to_string().contains("another server is listening"),
            "{second}"
        );
        let service = Server::builder().tool(add).build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            service
                .serve_unix_on(socket, async move {
                    let _ = stopped.await;
                })
                .await
        });
        let sum =
            tokio::time::timeout(Duration::from_secs(20), add_over_a_unix_socket(&path)).await??;
        assert_eq!(sum, "5");
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(20), server).await???;
        assert!(!path.exists(), "the socket file is removed at shutdown");
        Ok(())
    }

    #[tokio::test]
    async fn the_router_serves_mcp() -> Result<(), Box<dyn std::error::Error>> {
        let service = Server::builder().tool(add).build()?;
        let app = axum::Router::new()
            .route("/health", axum::routing::get(|| async { "ok" }))
            .merge(service.into_router());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let mut stream = tokio::net::TcpStream::connect(address).await?;
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes()).await?;
        let mut answer = String::new();
        tokio::time::timeout(
            Duration::from_secs(10),
            tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut answer),
        )
        .await??;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("mcp-session-id"),
            "{answer}"
        );
        server.abort();
        Ok(())
    }
}
