//! Streamable HTTP for the stateless era (2026-07-28): one POST, one message, no session.
//!
//! A POST whose body is an enveloped request (or `server/discover`) comes here. It is admitted
//! in the checklist's order: the envelope (400 + -32602 naming a missing key), the standard
//! headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, decoded from the `=?base64?…?=`
//! form when so sent; 400 + -32020 on a mismatch), the `Mcp-Param-*` headers of the arguments a
//! tool's schema marks with `x-mcp-header` (`#[arg(header = "Name")]`), the version (400 +
//! -32022). Then:
//!
//! - the reply is JSON when the handler answers before sending anything else (with 400 for
//!   -32700/-32600/-32602/-32020/-32021/-32022, 404 for -32601, else 200), and an SSE stream
//!   otherwise: the request's own progress and log notifications, then its response, which ends
//!   it. A handler still running after a few seconds switches to SSE too, with keep-alive
//!   comments, so a client that goes away is noticed;
//! - `subscriptions/listen` is always a stream: the acknowledgement, the notifications, and the
//!   final result when the server shuts down;
//! - closing the response cancels the request: its handler is stopped and nothing more is sent.
//!
//! `Mcp-Session-Id` and `Last-Event-ID` are ignored; events carry no ids.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::Value;
use tokio::task::AbortHandle;

use super::stream::named_event;
use super::{HttpState, json_response};
use crate::context::CancelFlag;
use crate::context::Principal;
use crate::protocol::{
    ErrorObject, InvalidMessage, Message, Method, Outgoing, Request, RequestId, echo, encode_error,
    error_codes,
};
use crate::server::{Charge, Client, Envelope, Outbox, handle_stateless, read_envelope};

/// How long a request may run silently before its reply turns into an SSE stream.
const JSON_WINDOW: Duration = Duration::from_secs(5);
/// How often an idle SSE stream gets a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The HTTP status of a JSON reply, from its JSON-RPC error code.
fn status_of(reply: &[u8]) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Reply {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    let code = serde_json::from_slice::<Reply>(reply)
        .ok()
        .and_then(|r| r.error)
        .map(|e| e.code);
    match code {
        Some(
            error_codes::PARSE_ERROR
            | error_codes::INVALID_REQUEST
            | error_codes::INVALID_PARAMS
            | error_codes::HEADER_MISMATCH
            | error_codes::MISSING_CLIENT_CAPABILITY
            | error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(error_codes::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn refuse(id: Option<&RequestId>, error: &ErrorObject) -> Response {
    let reply = encode_error(id, error);
    json_response(status_of(&reply), reply)
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(error_codes::HEADER_MISMATCH, message)
}

/// A standard header's value: absent, or its one value decoded from the base64 sentinel form.
fn header_value(headers: &HeaderMap, name: &str) -> Result<Option<String>, ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(mismatch(format!("the `{name}` header is repeated")));
    }
    let text = value
        .to_str()
        .map_err(|_| mismatch(format!("the `{name}` header is not visible ASCII")))?;
    if let Some(encoded) = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| mismatch(format!("the `{name}` header is not valid base64")))?;
        return String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| mismatch(format!("the `{name}` header is not UTF-8")));
    }
    Ok(Some(text.to_owned()))
}

/// The standard headers must agree with the body (SEP-2243).
fn check_headers(
    headers: &HeaderMap,
    request: &Request,
    envelope: &Envelope,
) -> Result<(), ErrorObject> {
    let expect = |name: &str, wanted: &str| -> Result<(), ErrorObject> {
        match header_value(headers, name)? {
            Some(value) if value == wanted => Ok(()),
            Some(value) => Err(mismatch(format!(
                "the `{name}` header says `{}` but the body says `{}`",
                echo(&value),
                echo(wanted)
            ))),
            None => Err(mismatch(format!("the `{name}` header is missing"))),
        }
    };
    expect("mcp-protocol-version", &envelope.requested)?;
    expect("mcp-method", &request.method)?;
    let name_key = Method::parse(&request.method).and_then(Method::target);
    if let Some(key) = name_key
        && let Some(Value::String(name)) = request.params.get(key)
    {
        expect("mcp-name", name)?;
    }
    Ok(())
}

/// `Mcp-Param-*` headers must mirror the arguments the tool's schema marks with `x-mcp-header`:
/// present exactly when the argument is (and not null), equal to it (numbers compared as
/// numbers).
fn check_param_headers(
    headers: &HeaderMap,
    request: &Request,
    core: &crate::server::Core,
) -> Result<(), ErrorObject> {
    if request.method != "tools/call" {
        return Ok(());
    }
    let Some(Value::String(name)) = request.params.get("name") else {
        return Ok(());
    };
    let registry = core.registry();
    let Some((tool, _)) = registry.tools.get(name) else {
        return Ok(());
    };
    if tool.header_params.is_empty() {
        return Ok(());
    }
    // (An object `arguments` is built as a value only here, for a tool that has such headers.)
    let arguments = request.params.get("arguments");
    for (header, path) in tool.header_params.iter() {
        let found = path
            .iter()
            .fold(arguments, |value, key| value.and_then(|v| v.get(key)))
            .filter(|v| !v.is_null());
        let field = format!("mcp-param-{}", header.to_ascii_lowercase());
        let sent = header_value(headers, &field)?;
        match (found, sent) {
            (None, None) => {}
            (Some(value), Some(sent)) if agrees(value, &sent) => {}
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "the `Mcp-Param-{header}` header is missing"
                )));
            }
            (_, Some(sent)) => {
                return Err(mismatch(format!(
                    "the `Mcp-Param-{header}` header says `{}`, which the arguments do not",
                    echo(&sent)
                )));
            }
        }
    }
    Ok(())
}

fn agrees(value: &Value, sent: &str) -> bool {
    match value {
        Value::String(text) => text == sent,
        Value::Bool(flag) => sent == if *flag { "true" } else { "false" },
        Value::Number(number) => match (number.as_i64(), sent.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => number
                .as_f64()
                .zip(sent.parse::<f64>().ok())
                .is_some_and(|(a, b)| a == b),
        },
        _ => false,
    }
}

/// Stops the request's handler when its response is dropped: the client closed the stream.
struct CancelOnDrop {
    task: AbortHandle,
    flag: Arc<CancelFlag>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.task.is_finished() {
            self.flag.cancel();
            self.task.abort();
        }
    }
}

/// Who a stateless POST is from, and what its body holds.
pub(super) struct Caller {
    pub(super) principal: Option<Arc<Principal>>,
    /// Whose shares it counts toward.
    pub(super) client: Option<Arc<Client>>,
    /// The client's address, for middleware and telemetry (see `Sink::with_peer`).
    pub(super) peer: Option<std::net::SocketAddr>,
    /// Its bytes, charged until it ends.
    pub(super) charge: Charge,
}

/// Serves one stateless POST whose body is `message`.
pub(super) async fn handle(
    state: &Arc<HttpState>,
    headers: &HeaderMap,
    message: Result<Message, Box<InvalidMessage>>,
    mut accepts_sse: bool,
    caller: Caller,
) -> Response {
    let Caller {
        principal,
        client,
        peer,
        charge,
    } = caller;
    let request = match message {
        Ok(Message::Request(request)) => request,
        // Notifications (only `notifications/cancelled` exists, and HTTP cancels by closing the
        // stream) are accepted and have no effect.
        Ok(Message::Notification(_)) => return StatusCode::ACCEPTED.into_response(),
        Ok(Message::Response(_)) => {
            return refuse(
                None,
                &ErrorObject::invalid_request("servers send no requests in 2026-07-28"),
            );
        }
        Err(invalid) => return refuse(invalid.id.as_ref(), &invalid.error),
    };
    let id = request.id.clone();
    let envelope = match read_envelope(&request.params) {
        Ok(envelope) => envelope,
        Err(error) => return refuse(Some(&id), &error),
    };
    if let Err(error) = check_headers(headers, &request, &envelope)
        .and_then(|()| check_param_headers(headers, &request, &state.core))
    {
        return refuse(Some(&id), &error);
    }
    if let Err(error) = envelope.version() {
        return refuse(Some(&id), &error);
    }
    let listen = request.method == "subscriptions/listen";
    if listen && !accepts_sse {
        return refuse(
            Some(&id),
            &ErrorObject::invalid_request(
                "`subscriptions/listen` needs `Accept: text/event-stream`",
            ),
        );
    }
    // A listen is a stream from the start, within its client's share of them.
    let mut open = None;
    if listen {
        match state.open_stream(client.as_ref()) {
            Ok(charged) => open = charged,
            Err(response) => return response,
        }
    }

    let (sink, mut replies) = state.channel(client.as_ref());
    let sink = sink.with_principal(principal).with_peer(peer);
    let flag = Arc::new(CancelFlag::default());
    let core = Arc::clone(&state.core);
    let cancel = Arc::clone(&flag);
    let task = tokio::spawn(async move {
        // The request's bytes stay charged until it ends.
        let _charge = charge;
        let reply = handle_stateless(&core, None, envelope, request, &sink, cancel).await;
        if let Some(reply) = reply {
            let _ = sink.send(reply);
        }
    });
    let guard = CancelOnDrop {
        task: task.abort_handle(),
        flag,
    };

    let ids = HashSet::from([id]);
    let first = if listen {
        None
    } else {
        match tokio::time::timeout(JSON_WINDOW, replies.recv()).await {
            Ok(Some(first)) if answers(&first, &ids) => {
                drop(guard);
                return reply_response(first);
            }
            Ok(Some(first)) => Some(first),
            Ok(None) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            Err(_) => None,
        }
    };
    // A request that has not answered yet becomes a stream, if its client has room for one
    // and the server does not answer with JSON only.
    if accepts_sse && !listen && state.options().deploy.json_response {
        accepts_sse = false;
    }
    if accepts_sse && !listen {
        match state.open_stream(client.as_ref()) {
            Ok(charged) => open = charged,
            Err(_) => accepts_sse = false,
        }
    }
    if !accepts_sse {
        // No stream allowed: notifications are dropped, and the response is all there is.
        let mut pending = first;
        loop {
            if let Some(message) = pending.take()
                && answers(&message, &ids)
            {
                drop(guard);
                return reply_response(message);
            }
            match replies.recv().await {
                Some(message) => pending = Some(message),
                None => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
    }
    sse(first, replies, ids, (guard, open))
}

/// Whether `message` is the response to the request with one of `ids`.
fn answers(message: &Outgoing, ids: &HashSet<RequestId>) -> bool {
    message.reply_to().is_some_and(|id| ids.contains(id))
}

/// A response, as the whole answer to a POST.
fn reply_response(reply: Outgoing) -> Response {
    if reply.refused().is_some() {
        return super::reply_response(reply);
    }
    let bytes = reply.into_bytes().unwrap_or_default();
    json_response(status_of(&bytes), bytes)
}

/// The request's stream: what the handler sends, until its response, with keep-alives. The
/// guard and the stream's place in its client's share go with the response.
fn sse(
    first: Option<Outgoing>,
    replies: Outbox,
    ids: HashSet<RequestId>,
    guard: (CancelOnDrop, Option<Charge>),
) -> Response {
    struct Stream {
        first: Option<Outgoing>,
        replies: Outbox,
        ids: HashSet<RequestId>,
        done: bool,
        _guard: (CancelOnDrop, Option<Charge>),
    }
    let stream = Stream {
        first,
        replies,
        ids,
        done: false,
        _guard: guard,
    };
    let body = futures_util::stream::unfold(stream, |mut s| async move {
        if s.done {
            return None;
        }
        let message = match s.first.take() {
            Some(message) => message,
            None => match tokio::time::timeout(KEEP_ALIVE, s.replies.recv()).await {
                Ok(Some(message)) => message,
                Ok(None) => return None,
                Err(_) => return Some((Ok::<_, Infallible>(Bytes::from_static(b":\n\n")), s)),
            },
        };
        s.done = answers(&message, &s.ids);
        // A stateless request's stream is its only one: there is no stream to close early.
        let frame = message
            .bytes()
            .map_or_else(Bytes::new, |m| named_event("message", m));
        Some((Ok(frame), s))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// 405 for GET and DELETE on the stateless path.
pub(super) fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static("POST"))],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_error_code() {
        let error = |code: i64| encode_error(None, &ErrorObject::new(code, "x"));
        assert_eq!(status_of(&error(-32602)), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(&error(-32020)), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(&error(-32601)), StatusCode::NOT_FOUND);
        assert_eq!(status_of(&error(-32603)), StatusCode::OK);
        assert_eq!(
            status_of(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
    }

    #[test]
    fn header_values_decode_the_base64_form() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", HeaderValue::from_static("=?base64?w6lk?="));
        assert_eq!(
            header_value(&headers, "mcp-name").unwrap().as_deref(),
            Some("éd")
        );
        headers.append("mcp-name", HeaderValue::from_static("x"));
        assert_eq!(header_value(&headers, "mcp-name").unwrap_err().code, -32020);
    }
}
