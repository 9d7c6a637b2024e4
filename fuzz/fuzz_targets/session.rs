//! The stdio transport and the dispatcher behind it: after a valid `initialize`, arbitrary lines
//! from the client. The server must not panic or hang, and must still answer a `ping` sent after
//! them.

#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Echo a structured value back.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Shape {
    name: String,
    sides: Option<Vec<u8>>,
}

/// Describe a shape.
#[tool]
async fn describe(shape: Shape, ctx: Context) -> Result<String, ToolError> {
    ctx.info("describing").await;
    if shape.name.is_empty() {
        return Err(ToolError::new("a shape needs a name"));
    }
    Ok(format!("{} with {:?}", shape.name, shape.sides))
}

/// A note.
#[resource("note://{id}")]
async fn note(id: u32) -> Result<String, ResourceError> {
    if id > 10 {
        return Err(ResourceError::NotFound);
    }
    Ok(format!("note {id}"))
}

/// A prompt.
#[prompt]
fn greet(name: String) -> String {
    format!("Hello {name}")
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn service() -> &'static McpService {
    static SERVICE: OnceLock<McpService> = OnceLock::new();
    SERVICE.get_or_init(|| {
        Server::builder()
            .tool(add)
            .tool(describe)
            .resource(note)
            .prompt(greet)
            .max_message_size(64 * 1024)
            .handler_timeout(Duration::from_secs(2))
            .shutdown_grace(Duration::ZERO)
            .build()
            .expect("the fuzz server builds")
    })
}

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;
const FINAL_PING: &[u8] = b"\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-final-ping\",\"method\":\"ping\"}\n";

fuzz_target!(|bytes: &[u8]| {
    runtime().block_on(async {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(service().serve_connection(server_read, server_write));
        let (mut read, mut write) = tokio::io::split(client);
        let output = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = read.read_to_end(&mut out).await;
            out
        });
        let input = [INITIALIZE, bytes, FINAL_PING].concat();
        let session = async {
            write.write_all(&input).await.expect("the server reads its input");
            write.shutdown().await.expect("close the input");
            let output = output.await.expect("the reader");
            serving
                .await
                .expect("the session task does not panic")
                .expect("the session ends cleanly");
            output
        };
        let output = tokio::time::timeout(Duration::from_secs(20), session)
            .await
            .expect("the session ends in time");
        let text = String::from_utf8(output).expect("the output is UTF-8");
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).expect("every line is JSON");
        }
        assert!(
            text.contains(r#""id":"fuzz-final-ping","result":{}"#),
            "the final ping is answered: {text}"
        );
    });
});
