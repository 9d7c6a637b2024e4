//! From a request to its response: the lifecycle gate, then one function per method.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use serde_json::{Map, Value, json};

use super::pagination;
use super::session::{Negotiated, RequestPeer, Session, Sink};
use crate::completion::{CompletionContext, Completions};
use crate::context::{CancelFlag, ClientInfo, Context, Meta, RequestInfo};
use crate::handle::{Broadcast, ServerHandle};
use crate::prompt::{GetPromptResult, PromptCall};
use crate::protocol::{
    ErrorObject, InitializeParams, LoggingLevel, ProtocolVersion, Request, RequestId, encode_error,
    encode_raw_response, encode_response, negotiate_version,
};
use crate::resource::{ResourceCall, ResourceError};
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
const HANDSHAKE_METHODS: &[&str] = &[
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// Every other request. `None` means no response is sent (the request was cancelled).
pub(crate) async fn handle_request(
    session: &Arc<Session>,
    request: Request,
    sink: &Sink,
    cancel: Arc<CancelFlag>,
) -> Option<Vec<u8>> {
    let id = request.id.clone();
    // What a timeout answer needs, taken before the request moves into its handler.
    let timeout = session.core.options.handler_timeout.map(|limit| {
        let tool = match (request.method.as_str(), request.params.get("name")) {
            ("tools/call", Some(Value::String(name))) => Some(name.clone()),
            _ => None,
        };
        (limit, tool)
    });
    let routed = catch_unwind(Box::pin(route(session, request, sink, Arc::clone(&cancel))));
    let outcome = match timeout {
        None => routed.await,
        Some((limit, tool)) => match tokio::time::timeout(limit, routed).await {
            Ok(outcome) => outcome,
            Err(_) => {
                // Dropping the future stopped the handler; work it handed to other tasks sees
                // the flag.
                cancel.cancel();
                tracing::warn!(request_id = %id, ?limit, "a request handler timed out");
                let message = format!("timed out after {limit:?}");
                return Some(match tool {
                    Some(tool) => encode_response(
                        &id,
                        &CallToolResult::error(format!("tool `{tool}` {message}")),
                    ),
                    None => encode_error(Some(&id), &ErrorObject::internal(message)),
                });
            }
        },
    };
    match outcome {
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

async fn route(
    session: &Arc<Session>,
    request: Request,
    sink: &Sink,
    cancel: Arc<CancelFlag>,
) -> Vec<u8> {
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
    let registry = &core.registry;
    let version = negotiated.version;
    let id = request.id.clone();
    let outcome: Result<Reply, ErrorObject> = match request.method.as_str() {
        "tools/list" if !registry.tools.is_empty() => pagination::offset(&request.params)
            .and_then(|o| registry.tools.list(version, o))
            .map(Reply::Raw),
        "tools/call" if !registry.tools.is_empty() => {
            call_tool(session, negotiated, request, sink, cancel)
                .await
                .map(|r| Reply::value(&r))
        }
        "resources/list" if !registry.resources.is_empty() => {
            match pagination::offset(&request.params) {
                Ok(offset) => registry
                    .resources
                    .list(version, offset)
                    .await
                    .map(Reply::text),
                Err(error) => Err(error),
            }
        }
        "resources/templates/list" if !registry.resources.is_empty() => {
            pagination::offset(&request.params)
                .and_then(|o| registry.resources.list_templates(version, o))
                .map(Reply::text)
        }
        "resources/read" if !registry.resources.is_empty() => {
            read_resource(session, negotiated, request, sink, cancel)
                .await
                .map(Reply::Value)
        }
        "resources/subscribe" | "resources/unsubscribe" if !registry.resources.is_empty() => {
            subscribe(session, &request).map(Reply::Value)
        }
        "prompts/list" if !registry.prompts.is_empty() => pagination::offset(&request.params)
            .and_then(|o| registry.prompts.list(version, o))
            .map(Reply::text),
        "prompts/get" if !registry.prompts.is_empty() => {
            get_prompt(session, negotiated, request, sink, cancel)
                .await
                .map(|r| Reply::value(&r))
        }
        "completion/complete" if core.capabilities.completions.is_some() => {
            complete(session, &request).map(Reply::Value)
        }
        "logging/setLevel" => set_level(session, &request).map(Reply::Value),
        method => Err(ErrorObject::method_not_found(method)),
    };
    match outcome {
        Ok(Reply::Raw(raw)) => encode_raw_response(&id, &raw),
        Ok(Reply::Value(value)) => encode_response(&id, &value),
        Err(error) => encode_error(Some(&id), &error),
    }
}

/// A result: JSON to serialize, or JSON text already serialized.
enum Reply {
    Value(Value),
    Raw(Arc<str>),
}

impl Reply {
    fn text(text: String) -> Self {
        Self::Raw(Arc::from(text))
    }

    fn value<T: serde::Serialize>(value: &T) -> Self {
        Self::Value(serde_json::to_value(value).unwrap_or(Value::Null))
    }
}

fn set_level(session: &Session, request: &Request) -> Result<Value, ErrorObject> {
    let level = match request.params.get("level") {
        Some(Value::String(level)) => level
            .parse::<LoggingLevel>()
            .map_err(ErrorObject::invalid_params)?,
        _ => {
            return Err(ErrorObject::invalid_params(
                "`logging/setLevel` needs `level`, a string",
            ));
        }
    };
    session
        .log_level
        .store(level.index(), std::sync::atomic::Ordering::Relaxed);
    Ok(json!({}))
}

fn context(
    session: &Arc<Session>,
    negotiated: &Negotiated,
    id: RequestId,
    meta: Meta,
    sink: &Sink,
    cancelled: Arc<CancelFlag>,
) -> Context {
    Context::new(RequestInfo {
        id,
        meta,
        version: negotiated.version,
        client: Arc::clone(&negotiated.client),
        peer: Arc::new(RequestPeer {
            session: Arc::clone(session),
            sink: sink.clone(),
        }),
        server: ServerHandle::new(Arc::clone(&session.core) as Arc<dyn Broadcast>),
        cancelled,
        last_progress: AtomicU64::new(f64::NEG_INFINITY.to_bits()),
    })
}

fn take_meta(params: &mut Map<String, Value>) -> Meta {
    match params.remove("_meta") {
        Some(Value::Object(meta)) => Meta(meta),
        _ => Meta::default(),
    }
}

fn string_param(
    params: &mut Map<String, Value>,
    key: &str,
    method: &str,
) -> Result<String, ErrorObject> {
    match params.remove(key) {
        Some(Value::String(value)) => Ok(value),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "`{key}` must be a string"
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "`{method}` needs `{key}`"
        ))),
    }
}

fn not_found(version: ProtocolVersion, uri: &str) -> ErrorObject {
    ErrorObject::new(
        version.resource_not_found_code(),
        format!("resource not found: `{uri}`"),
    )
    .with_data(json!({ "uri": uri }))
}

async fn read_resource(
    session: &Arc<Session>,
    negotiated: &Negotiated,
    request: Request,
    sink: &Sink,
    cancel: Arc<CancelFlag>,
) -> Result<Value, ErrorObject> {
    let Request { id, mut params, .. } = request;
    let uri = string_param(&mut params, "uri", "resources/read")?;
    let meta = take_meta(&mut params);
    let version = negotiated.version;
    let Some((def, bindings)) = session.core.registry.resources.resolve(&uri) else {
        return Err(not_found(version, &uri));
    };
    let bindings = match (bindings, &def.template) {
        (Some(bindings), Some(template)) => {
            if !def.allow_traversal
                && let Some((name, reason)) = template.escaping_variable(&bindings)
            {
                return Err(ErrorObject::invalid_params(format!(
                    "invalid value for `{name}`: {reason}"
                )));
            }
            bindings.into_map()
        }
        _ => HashMap::new(),
    };
    let call = ResourceCall {
        uri: uri.clone(),
        bindings,
        context: context(session, negotiated, id, meta, sink, cancel),
        errors: Vec::new(),
        mime_type: def.metadata.mime_type.clone(),
    };
    let outcome = match catch_unwind((def.handler)(call)).await {
        Ok(outcome) => outcome,
        Err(panic) => {
            tracing::error!(%uri, panic = panic_message(&*panic), "a resource handler panicked");
            Err(ResourceError::Internal("internal error".to_owned()))
        }
    };
    match outcome {
        Ok(contents) => Ok(json!({ "contents": contents })),
        Err(ResourceError::NotFound) => Err(not_found(version, &uri)),
        Err(ResourceError::InvalidParams(message)) => Err(ErrorObject::invalid_params(message)),
        Err(ResourceError::Internal(message)) => Err(ErrorObject::internal(message)),
    }
}

fn subscribe(session: &Session, request: &Request) -> Result<Value, ErrorObject> {
    let Some(Value::String(uri)) = request.params.get("uri") else {
        return Err(ErrorObject::invalid_params(format!(
            "`{}` needs `uri`, a string",
            request.method
        )));
    };
    let mut subscriptions = session
        .subscriptions
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if request.method == "resources/subscribe" {
        subscriptions.insert(uri.clone());
    } else {
        subscriptions.remove(uri);
    }
    Ok(json!({}))
}

async fn get_prompt(
    session: &Arc<Session>,
    negotiated: &Negotiated,
    request: Request,
    sink: &Sink,
    cancel: Arc<CancelFlag>,
) -> Result<GetPromptResult, ErrorObject> {
    let Request { id, mut params, .. } = request;
    let name = string_param(&mut params, "name", "prompts/get")?;
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "`arguments` must be an object of strings",
            ));
        }
    };
    let meta = take_meta(&mut params);
    let Some((prompt, prompt_name)) = session.core.registry.prompts.get(&name) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown prompt `{name}`"
        )));
    };
    let call = PromptCall {
        prompt: Arc::clone(prompt_name),
        arguments,
        context: context(session, negotiated, id, meta, sink, cancel),
        errors: Vec::new(),
    };
    match catch_unwind((prompt.handler)(call)).await {
        Ok(outcome) => outcome.map(|result| result.for_version(negotiated.version)),
        Err(panic) => {
            tracing::error!(prompt = %name, panic = panic_message(&*panic), "a prompt handler panicked");
            Err(ErrorObject::internal("internal error"))
        }
    }
}

fn complete(session: &Session, request: &Request) -> Result<Value, ErrorObject> {
    let params = &request.params;
    let reference = params.get("ref").and_then(Value::as_object);
    let argument = params.get("argument").and_then(Value::as_object);
    let (Some(reference), Some(argument)) = (reference, argument) else {
        return Err(ErrorObject::invalid_params(
            "`completion/complete` needs `ref` and `argument` objects",
        ));
    };
    let (Some(name), Some(prefix)) = (
        argument.get("name").and_then(Value::as_str),
        argument.get("value").and_then(Value::as_str),
    ) else {
        return Err(ErrorObject::invalid_params(
            "`argument` needs `name` and `value`, both strings",
        ));
    };
    let mut context = CompletionContext::default();
    if let Some(Value::Object(given)) = params.get("context").and_then(|c| c.get("arguments")) {
        for (key, value) in given {
            if let Some(value) = value.as_str() {
                context.arguments.insert(key.clone(), value.to_owned());
            }
        }
    }
    let registry = &session.core.registry;
    let completer = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt = reference
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            registry.prompts.completer(prompt, name)?
        }
        Some("ref/resource") => {
            let template = reference
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            registry.resources.completer(template, name)?
        }
        _ => {
            return Err(ErrorObject::invalid_params(
                "`ref.type` must be `ref/prompt` or `ref/resource`",
            ));
        }
    };
    let completions = match completer {
        Some(completer) => {
            match std::panic::catch_unwind(AssertUnwindSafe(|| completer(prefix, &context))) {
                Ok(completions) => completions.capped(),
                Err(panic) => {
                    tracing::error!(
                        panic = panic_message(&*panic),
                        "a completion function panicked"
                    );
                    return Err(ErrorObject::internal("internal error"));
                }
            }
        }
        None => Completions::default(),
    };
    Ok(json!({ "completion": completions }))
}

async fn call_tool(
    session: &Arc<Session>,
    negotiated: &Negotiated,
    request: Request,
    sink: &Sink,
    cancel: Arc<CancelFlag>,
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
    let meta = take_meta(&mut params);
    let Some((tool, tool_name)) = session.core.registry.tools.get(&name) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown tool `{name}`"
        )));
    };
    let version = negotiated.version;
    let context = context(session, negotiated, id, meta, sink, cancel);
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
