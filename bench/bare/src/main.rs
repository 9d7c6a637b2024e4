//! The benchmark's floor: no MCP framework, only the JSON-RPC the benchmark sends
//! (`initialize`, `notifications/initialized`, `tools/list`, `tools/call`), answered minimally.
//!
//! `bench-bare stdio` is a tokio + serde_json newline loop; `bench-bare http 127.0.0.1:PORT` is a
//! bare hyper handler (JSON replies, no sessions). Replies have the same shape as the
//! frameworks' (`content` text block + `structuredContent`), so the bytes on the wire compare.
//! Over HTTP it hands out a fixed `Mcp-Session-Id` on `initialize`, so the benchmark's client
//! sends it the same headers it sends the frameworks (`Mcp-Session-Id`, `MCP-Protocol-Version`)
//! and hyper parses the same requests; it does nothing with them.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode, body::Incoming, header};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};

#[derive(Deserialize)]
struct Message {
    id: Option<Value>,
    method: Option<String>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Args>,
}

#[derive(Deserialize)]
struct Args {
    a: Option<i64>,
    b: Option<i64>,
    x: Option<i64>,
}

/// The parts of every reply that never change, serialized once.
struct Fixed {
    initialize: String,
    tools_list: String,
}

fn fixed() -> Fixed {
    let number = |description: &str| json!({"type": "integer", "description": description});
    let output = json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]});
    let add = |name: &str, description: &str| {
        json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": {"a": number("The first addend."), "b": number("The second addend.")}, "required": ["a", "b"]},
            "outputSchema": output,
            "annotations": {"readOnlyHint": true, "idempotentHint": true},
        })
    };
    let mut tools = vec![
        add("add", "Add two integers."),
        add("add_sync", "Add two integers, in a sync tool."),
    ];
    for n in 1..=20 {
        tools.push(json!({
            "name": format!("t{n:02}"),
            "description": format!("Trivial tool {n}: adds {n}."),
            "inputSchema": {"type": "object", "properties": {"x": number("A number.")}, "required": ["x"]},
            "outputSchema": output,
        }));
    }
    Fixed {
        initialize: json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "bench", "version": "0.0.0"},
        })
        .to_string(),
        tools_list: json!({ "tools": tools }).to_string(),
    }
}

/// The reply to one message, or `None` for a notification.
fn answer(line: &[u8], fixed: &Fixed) -> Option<Vec<u8>> {
    answer_message(line, fixed).map(|(reply, _)| reply)
}

/// The reply, and whether it answers `initialize`.
fn answer_message(line: &[u8], fixed: &Fixed) -> Option<(Vec<u8>, bool)> {
    let message: Message = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(_) => {
            return Some((
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
                    .to_vec(),
                false,
            ));
        }
    };
    let id = message.id?;
    let id = serde_json::to_string(&id).unwrap_or_else(|_| "null".to_owned());
    let initialize = message.method.as_deref() == Some("initialize");
    let result = match message.method.as_deref() {
        Some("initialize") => fixed.initialize.clone(),
        Some("tools/list") => fixed.tools_list.clone(),
        Some("tools/call") => {
            let params = message.params?;
            let args = params.arguments?;
            let sum = match params.name.as_deref() {
                Some("add" | "add_sync") => args.a? + args.b?,
                Some(name) => {
                    let n: i64 = name.strip_prefix('t')?.parse().ok()?;
                    args.x? + n
                }
                None => return None,
            };
            format!(
                r#"{{"content":[{{"type":"text","text":"{sum}"}}],"structuredContent":{{"result":{sum}}},"isError":false}}"#
            )
        }
        _ => {
            return Some((
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"method not found"}}}}"#)
                    .into_bytes(),
                false,
            ));
        }
    };
    Some((
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).into_bytes(),
        initialize,
    ))
}

async fn serve_stdio(fixed: Fixed) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut writer = BufWriter::with_capacity(64 * 1024, tokio::io::stdout());
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        if let Some(mut reply) = answer(&line, &fixed) {
            reply.push(b'\n');
            writer.write_all(&reply).await?;
        }
        // Flush when no more input is waiting, so a pipelined burst costs one write.
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await
}

async fn handle(
    request: Request<Incoming>,
    fixed: Arc<Fixed>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    Ok(match answer_message(&body, &fixed) {
        Some((reply, initialize)) => {
            let mut response = Response::builder().header(header::CONTENT_TYPE, "application/json");
            if initialize {
                response = response.header("mcp-session-id", "bare");
            }
            response
                .body(Full::new(Bytes::from(reply)))
                .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR))
        }
        None => status(StatusCode::ACCEPTED),
    })
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

async fn serve_http(addr: String, fixed: Fixed) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let fixed = Arc::new(fixed);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let fixed = Arc::clone(&fixed);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |r| handle(r, Arc::clone(&fixed)));
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let fixed = fixed();
    match args.next().as_deref() {
        Some("http") => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            serve_http(addr, fixed).await
        }
        _ => serve_stdio(fixed).await,
    }
}
