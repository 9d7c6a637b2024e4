//! Context parameters: the runtime's extractors and a user type implementing `FromContext`, next
//! to arguments.

use mcp_runtime::context::{ClientInfo, ContextError, Meta};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RequestId;

/// The whole context.
#[tool]
async fn whoami(ctx: Context) -> String {
    ctx.client().implementation.name.clone()
}

/// The request id.
#[tool]
fn request(id: RequestId) -> String {
    id.to_string()
}

/// The negotiated protocol revision, after an argument.
#[tool]
async fn revision(prefix: String, version: ProtocolVersion) -> String {
    format!("{prefix}{version}")
}

/// The request's `_meta` and the client.
#[tool]
fn progress(meta: Meta, client: ClientInfo) -> bool {
    meta.progress_token().is_some() && !client.implementation.name.is_empty()
}

/// The whole context in a sync tool, which runs on the blocking pool.
#[tool]
fn cancelled(ctx: Context, word: String) -> String {
    format!("{word} {}", ctx.is_cancelled())
}

struct TraceId(Option<String>);

impl FromContext for TraceId {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        let id = ctx.meta().0.get("traceparent").and_then(|v| v.as_str());
        Ok(TraceId(id.map(str::to_owned)))
    }
}

/// A user type implementing `FromContext`, between two arguments.
#[tool]
async fn traced(a: i64, trace: TraceId, b: i64) -> String {
    format!("{} {}", a + b, trace.0.unwrap_or_default())
}

fn main() {
    Server::builder()
        .tool(whoami)
        .tool(request)
        .tool(revision)
        .tool(progress)
        .tool(traced)
        .tool(cancelled)
        .build()
        .unwrap();
}
