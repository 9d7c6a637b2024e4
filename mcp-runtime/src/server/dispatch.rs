//! From a request to its response: the lifecycle gate, then one function per method.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use serde_json::{Map, Value, json};

use super::session::{Negotiated, Session, Sink};
use crate::context::{ClientInfo, Context, Meta, RequestInfo};
use crate::protocol::{
    ErrorObject, InitializeParams, Request, encode_error, encode_raw_response, encode_response,
    negotiate_version,
};
use crate::tool::{CallToolResult, ToolCall};

/// `initialize` and `ping`: answered in order, without a task of their own.
pub(crate) fn handle_sync(session: &Session, request: &Request) -> Vec<u8> {
    match request.method.as_str() {
        "ping" => encode_response(&request.id, &json!({})),
        _ => match initialize(session, request) {
            Ok(result) => encode_response(&request.id, &result),
            Err(error) => encode_error(Some(&request.id), &error),
        },
    }
}

fn initialize(session: &Session, request: &Request) -> Result<Value, ErrorObject> {
    if session.negotiated.get().is_some() {
        return Err(ErrorObject::invalid_request(
            "the session is already initialized",
        ));
    }
    let params: InitializeParams = serde_json::from_value(Value::Object(request.params.clone()))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid `initialize` params: {e}")))?;
    let version = negotiate_version(&params.protocol_version);
    let client = Arc::new(ClientInfo {
        implementation: params.client_info,
        capabilities: params.capabilities,
    });
    session
        .negotiated
        .set(Negotiated { version, client })
        .map_err(|_| ErrorObject::invalid_request("the session is already initialized"))?;
    let core = &session.core;
    let mut result = Map::new();
    result.insert("protocolVersion".into(), Value::from(version.as_str()));
    result.insert(
        "capabilities".into(),
        core.capabilities.for_version(version),
    );
    result.insert("serverInfo".into(), core.info.for_version(version));
    if let Some(instructions) = &core.instructions {
        result.insert("instructions".into(), Value::from(instructions.as_str()));
    }
    Ok(Value::Object(result))
}

/// The requests this server knows in the handshake era, besides `initialize` and `ping`.
const HANDSHAKE_METHODS: &[&str] = &["tools/list", "tools/call"];

/// Every other request. `None` means no response is sent (the request was cancelled).
pub(crate) async fn handle_request(
    session: &Arc<Session>,
    request: Request,
    sink: &Sink,
) -> Option<Vec<u8>> {
    let id = request.id.clone();
    match catch_unwind(Box::pin(route(session, request, sink))).await {
        Ok(reply) => Some(reply),
        Err(panic) => {
            tracing::error!(request_id = %id, panic = panic_message(&*panic), "a request handler panicked");
            Some(encode_error(
                Some(&id),
                &ErrorObject::internal("internal error"),
            ))
        }
    }
}

async fn route(session: &Arc<Session>, request: Request, sink: &Sink) -> Vec<u8> {
    if request.method == "ping" || request.method == "initialize" {
        return handle_sync(session, &request);
    }
    if !HANDSHAKE_METHODS.contains(&request.method.as_str()) {
        // Unknown here in any state, `server/discover` (the stateless era's opener) included:
        // an immediate error lets a dual-era client fall back to `initialize`.
        return encode_error(
            Some(&request.id),
            &ErrorObject::method_not_found(&request.method),
        );
    }
    let Some(negotiated) = session.negotiated.get() else {
        let error = ErrorObject::invalid_request(format!(
            "the session is not initialized: send `initialize` before `{}`",
            request.method
        ));
        return encode_error(Some(&request.id), &error);
    };
    if !session.initialized.load(Ordering::Acquire) {
        // Lenient on purpose: on HTTP a request can overtake `notifications/initialized`.
        tracing::trace!(method = %request.method, "request before notifications/initialized");
    }
    let core = &session.core;
    match request.method.as_str() {
        "tools/list" if !core.tools.is_empty() => {
            encode_raw_response(&request.id, &core.tools.list(negotiated.version))
        }
        "tools/call" if !core.tools.is_empty() => {
            let id = request.id.clone();
            match call_tool(session, negotiated, request, sink).await {
                Ok(result) => encode_response(&id, &result),
                Err(error) => encode_error(Some(&id), &error),
            }
        }
        method => encode_error(Some(&request.id), &ErrorObject::method_not_found(method)),
    }
}

async fn call_tool(
    session: &Arc<Session>,
    negotiated: &Negotiated,
    request: Request,
    sink: &Sink,
) -> Result<CallToolResult, ErrorObject> {
    let Request { id, mut params, .. } = request;
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ErrorObject::invalid_params("`name` must be a string")),
        None => {
            return Err(ErrorObject::invalid_params(
                "`tools/call` needs the tool's `name`",
            ));
        }
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments,
        Some(_) => return Err(ErrorObject::invalid_params("`arguments` must be an object")),
    };
    let meta = match params.remove("_meta") {
        Some(Value::Object(meta)) => Meta(meta),
        _ => Meta::default(),
    };
    let Some((tool, tool_name)) = session.core.tools.get(&name) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown tool `{name}`"
        )));
    };
    let version = negotiated.version;
    let context = Context::new(RequestInfo {
        id,
        meta,
        version,
        client: Arc::clone(&negotiated.client),
        peer: Arc::new(sink.clone()),
    });
    let call = ToolCall {
        tool: Arc::clone(tool_name),
        arguments,
        context,
        output: tool.output,
        errors: Vec::new(),
        takes_args_struct: tool.takes_args_struct,
        argument_names: Arc::clone(&tool.argument_names),
    };
    let result = match catch_unwind((tool.handler)(call)).await {
        Ok(result) => result,
        Err(panic) => {
            tracing::error!(tool = %name, panic = panic_message(&*panic), "a tool panicked");
            CallToolResult::error(format!("tool `{name}` failed unexpectedly"))
        }
    };
    Ok(result.for_version(version))
}

/// Runs a future, turning a panic inside it into an `Err` instead of a dead task.
async fn catch_unwind<T>(
    mut future: std::pin::Pin<Box<dyn Future<Output = T> + Send + '_>>,
) -> Result<T, Box<dyn Any + Send>> {
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
