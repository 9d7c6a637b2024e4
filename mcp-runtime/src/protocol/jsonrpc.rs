//! The JSON-RPC 2.0 envelope: ids, requests, notifications, responses and errors.
//!
//! Incoming bytes are parsed once into a [`serde_json::Value`] by [`decode`] (which first refuses
//! nesting deeper than the server's limit, in one pass with no recursion) and taken apart by
//! [`Message::from_value`], which applies the rules MCP adds to JSON-RPC: ids are strings or
//! integers (never `null`, never fractional), `params` is an object, notifications have no id.
//! Outgoing messages are written by [`encode_response`], [`encode_error`] and
//! [`encode_notification`] straight into bytes.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) use super::object::Params;
use super::object::ParamsIn;

/// The member `key` of a JSON object. serde_json's map hashes every key it looks up (with
/// SipHash); the objects inside a request's params (`_meta`, say) have a few members, and
/// comparing their names costs less. A larger object is looked up by hash. (`params` and a tool
/// call's arguments are read into lists of members in the first place: [`Params`].)
pub(crate) fn member<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if object.len() > 8 {
        return object.get(key);
    }
    object
        .iter()
        .find_map(|(name, value)| (name == key).then_some(value))
}

/// The codes JSON-RPC and MCP define for errors.
pub mod error_codes {
    /// The input is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or its capability was not advertised.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params are invalid: an unknown tool, a missing argument, a bad cursor.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed while handling a valid request.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// JSON-RPC's first implementation-defined server error: the request was refused before it
    /// ran, by a transport limit (too many requests in flight) or an HTTP session problem.
    pub const SERVER_ERROR: i64 = -32000;
    /// `resources/read` of an unknown URI in the handshake era.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// `RateLimited`: the request is over a rate limit the server applies to its caller
    /// (`middleware::RateLimitLayer`). `data.retryAfterMs` (integer milliseconds) says when to
    /// try again; over HTTP the status is 429 with `Retry-After` = ceil(ms / 1000) seconds.
    ///
    /// The code and shape of SEP-3304 ("Standardizing Rate-Limiting Errors"), a draft not yet
    /// in a released revision, which the transports working group's error-condition-registry
    /// draft adopts unchanged. It lies in the band -32020..-32099 that 2026-07-28 reserves for
    /// the specification: this server uses it ahead of the revision that will define it, as
    /// the drafts' authors and the other SDKs do, rather than a code of its own that would
    /// later change. A rate limit an upstream API applies inside a tool is not this error but
    /// a tool error (`isError: true`).
    pub const RATE_LIMITED: i64 = -32023;
    /// `Unavailable`: the server cannot take the request now, for a reason that passes (its
    /// load: a shed request, a full budget). `data: {"reason": "overloaded", "retryAfterMs":
    /// ms}`; over HTTP the status is 503 with `Retry-After`.
    ///
    /// From the transports working group's error-condition-registry draft, which marks the
    /// number illustrative until the draft is accepted (it may change), in the band that
    /// 2026-07-28 reserves for the specification.
    pub const UNAVAILABLE: i64 = -32024;
    /// 2025-11-25: the request needs a URL elicitation first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// 2026-07-28: an HTTP header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a client capability it did not declare.
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC request id: a string or an integer, echoed exactly as it came (`1` is not `"1"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl RequestId {
    /// Reads an id from JSON: a string or an integer that fits in `i64`. `null`, fractions,
    /// booleans, arrays and objects are not ids.
    pub fn from_json(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(Arc::from(s.as_str()))),
            Value::Number(n) => n.as_i64().map(Self::Number),
            _ => None,
        }
    }

    /// The id as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Number(n) => Value::from(*n),
            Self::String(s) => Value::from(&**s),
        }
    }
}

impl fmt::Display for RequestId {
    /// The id as a message or a log line shows it: a string id past 128 bytes is cut.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{:?}", echo(s)),
        }
    }
}

/// The most of a client's text (a method, a name, a URI, a value) that a message repeats.
pub(crate) const ECHO_MAX: usize = 128;

/// The longest error message sent: anything longer is cut, however it was built.
pub(crate) const MESSAGE_MAX: usize = 4096;

/// A client's text as a message repeats it: whole when it is at most [`ECHO_MAX`] bytes, else
/// its head and its length, so a hostile megabyte of URI or name costs the reply a few dozen
/// bytes.
pub(crate) fn echo(text: &str) -> Cow<'_, str> {
    bounded(text, ECHO_MAX)
}

/// `text` whole when it is at most `max` bytes, else its first `max` bytes (cut at a character
/// boundary), an ellipsis and how long it was.
pub(crate) fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("{}… ({} bytes)", cut(text, max), text.len()))
}

/// `text`, cut to at most `max` bytes at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

impl From<i64> for RequestId {
    fn from(id: i64) -> Self {
        Self::Number(id)
    }
}

impl From<&str> for RequestId {
    fn from(id: &str) -> Self {
        Self::String(Arc::from(id))
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => serializer.serialize_i64(*n),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_json(&value)
            .ok_or_else(|| serde::de::Error::custom("a request id is a string or an integer"))
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ErrorObject {
    /// The error code, see [`error_codes`].
    pub code: i64,
    /// One concise sentence.
    pub message: Cow<'static, str>,
    /// Structured detail, for example `{"uri": ...}` for a missing resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A wait in whole milliseconds, rounded up, as `retryAfterMs` carries it: at least 1, so that
/// a client never reads "retry at once" from a wait it must still sit out.
pub(crate) fn retry_millis(wait: std::time::Duration) -> u64 {
    let millis = wait.as_millis() + u128::from(!wait.subsec_nanos().is_multiple_of(1_000_000));
    u64::try_from(millis.max(1)).unwrap_or(u64::MAX)
}

impl ErrorObject {
    /// An error with a code and a message; a message longer than 4 KiB is cut (messages
    /// repeat client text, which must not make a reply as large as the request).
    pub fn new(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        let mut message = message.into();
        if message.len() > MESSAGE_MAX {
            message = Cow::Owned(bounded(&message, MESSAGE_MAX).into_owned());
        }
        Self {
            code,
            message,
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32024 ([`UNAVAILABLE`](error_codes::UNAVAILABLE)): the server is too loaded to take
    /// the request now; `data: {"reason": "overloaded", "retryAfterMs": ms}` with `retry_after`
    /// in whole milliseconds, rounded up.
    pub fn unavailable(
        message: impl Into<Cow<'static, str>>,
        retry_after: std::time::Duration,
    ) -> Self {
        Self::new(error_codes::UNAVAILABLE, message).with_data(serde_json::json!({
            "reason": "overloaded",
            "retryAfterMs": retry_millis(retry_after),
        }))
    }

    /// -32700: the input is not valid JSON.
    #[cold]
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(error_codes::PARSE_ERROR, format!("parse error: {detail}"))
    }

    /// -32600: not a valid request.
    #[cold]
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(error_codes::INVALID_REQUEST, message)
    }

    /// -32601: no such method (or its capability is not advertised).
    #[cold]
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            error_codes::METHOD_NOT_FOUND,
            format!("method not found: `{}`", echo(method)),
        )
    }

    /// -32602: invalid params.
    #[cold]
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(error_codes::INVALID_PARAMS, message)
    }

    /// -32603: the server failed. The message must not carry internal detail.
    #[cold]
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(error_codes::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A request: it has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name (one the server knows is not copied from the message).
    pub method: Cow<'static, str>,
    /// The params object; absent params are an empty object.
    pub params: Params,
}

/// A notification: no id, never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name (one the server knows is not copied from the message).
    pub method: Cow<'static, str>,
    /// The params object; absent params are an empty object.
    pub params: Params,
}

/// A response to a request this side sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result, or the error.
    pub outcome: Result<Value, ErrorObject>,
}

/// One JSON-RPC message, as received.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response to a request of ours.
    Response(Response),
}

/// Parses the bytes of one message (or batch) into JSON: -32700 for anything that is not JSON,
/// invalid UTF-8 included, and for nesting deeper than `max_depth` (`{}` and `[]` are depth 1).
///
/// The depth is checked before parsing, by a single scan that keeps one counter, so hostile input
/// never reaches a recursive parser. `serde_json` adds its own limit of 127 levels: a `max_depth`
/// above it acts as 127.
// The fuzz targets read through it (HTTP bodies through `Scanned::decode`).
#[cfg_attr(not(any(feature = "fuzzing", test)), allow(dead_code))]
pub fn decode(bytes: &[u8], max_depth: usize) -> Result<Value, ErrorObject> {
    check_depth(bytes, max_depth)?;
    serde_json::from_slice(bytes).map_err(ErrorObject::parse_error)
}

/// -32700 when `bytes` nest deeper than `max_depth` (see [`parse`]).
pub(crate) fn check_depth(bytes: &[u8], max_depth: usize) -> Result<(), ErrorObject> {
    let openers = bytes
        .iter()
        .fold(0usize, |n, &b| n + usize::from(b == b'{' || b == b'['));
    check_depth_of(bytes, max_depth, openers)
}

/// [`check_depth`], given how many `{` and `[` the text has (inside strings or not).
fn check_depth_of(bytes: &[u8], max_depth: usize, openers: usize) -> Result<(), ErrorObject> {
    if openers > max_depth && exceeds_depth(bytes, max_depth) {
        return Err(ErrorObject::parse_error(format!(
            "nesting deeper than {max_depth} levels"
        )));
    }
    Ok(())
}

/// A message's text read once before it is parsed: its nesting checked and what parsing it
/// will cost known ([`ParseCost`](super::ParseCost)), so the transport can charge that first.
pub(crate) struct Scanned<'a> {
    bytes: &'a [u8],
    /// What parsing it builds (an upper bound).
    pub(crate) cost: super::ParseCost,
}

/// Reads `bytes` once: -32700 when they nest deeper than `max_depth`, else what parsing them
/// will cost, and the way to parse them without reading them again for the nesting.
pub(crate) fn scan(bytes: &[u8], max_depth: usize) -> Result<Scanned<'_>, ErrorObject> {
    let (cost, openers) = super::parse_cost::scan(bytes);
    check_depth_of(bytes, max_depth, openers)?;
    Ok(Scanned { bytes, cost })
}

impl Scanned<'_> {
    /// [`parse`] of the scanned text.
    pub(crate) fn parse(&self) -> Result<Incoming, ErrorObject> {
        parse_unchecked(self.bytes)
    }

    /// [`decode`] of the scanned text.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn decode(&self) -> Result<Value, ErrorObject> {
        serde_json::from_slice(self.bytes).map_err(ErrorObject::parse_error)
    }
}

/// What the bytes of one line or body hold: a message, or a batch of values.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// One message, or the reason it is not a valid one.
    Single(Result<Message, Box<InvalidMessage>>),
    /// A JSON array: a batch (valid only on 2025-03-26), each item still to be taken apart.
    Batch(Vec<Value>),
}

/// Parses the bytes of one message (or batch) straight into a [`Message`]: what [`decode`]
/// followed by [`Message::from_value`] gives, without building the envelope as a map.
///
/// A single message is read into its six JSON-RPC members at once; only `params`, `result`
/// and `error` become values. Anything that does not fit that shape (an array, a repeated or
/// unknown member, bytes that are not JSON) is parsed the general way, so the answer, and the
/// error, are the same either way. (An unknown member goes the general way because skipping it
/// would not check it: an invalid string inside must still make the whole message -32700.)
#[cfg_attr(
    not(any(feature = "client", feature = "fuzzing", test)),
    allow(dead_code)
)]
pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Incoming, ErrorObject> {
    check_depth(bytes, max_depth)?;
    parse_unchecked(bytes)
}

/// [`parse`] of text whose nesting was checked.
fn parse_unchecked(bytes: &[u8]) -> Result<Incoming, ErrorObject> {
    // Only an object: serde would also fill the struct from an array, by position.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    // Text checked as UTF-8 once, whole: read from bytes, serde_json checks every string apart.
    // (Bytes that are not UTF-8 go the general way, which says where.)
    if object
        && let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(wire) = serde_json::from_str::<Wire>(text)
    {
        let message = Message::from_members(Members {
            jsonrpc: wire.jsonrpc.map(|version| version.0),
            id: wire.id,
            method: wire.method,
            params: wire.params,
            result: wire.result,
            error: wire.error,
        });
        return Ok(Incoming::Single(message));
    }
    match serde_json::from_slice(bytes).map_err(ErrorObject::parse_error)? {
        Value::Array(items) => Ok(Incoming::Batch(items)),
        value => Ok(Incoming::Single(Message::from_value(value))),
    }
}

/// The members of a JSON-RPC object, each `Some` when present (`null` included); any other
/// member makes it fail.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    #[serde(default)]
    jsonrpc: Option<IsVersion2>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<MethodIn>,
    /// Read into its members, not as a map ([`Params`]); `null` reads as absent, which means
    /// the same.
    #[serde(default)]
    params: Option<ParamsIn>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// The `jsonrpc` member, read without keeping it: whether it is the string `"2.0"`. (A `null`
/// reads as absent, which is as wrong.)
struct IsVersion2(bool);

impl<'de> serde::Deserialize<'de> for IsVersion2 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OnString(|text: Option<&str>| {
            IsVersion2(text == Some("2.0"))
        }))
    }
}

/// Reads any JSON value and hands `F` its text when it is a string, `None` when it is anything
/// else. An array or object is read whole, as values, so what is inside is checked as strictly
/// as anywhere else (an invalid string still fails the message).
struct OnString<F>(F);

impl<'de, T, F: FnOnce(Option<&str>) -> T> serde::de::Visitor<'de> for OnString<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, value: &str) -> Result<T, E> {
        Ok((self.0)(Some(value)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<T, E> {
        Ok((self.0)(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<T, E> {
        Ok((self.0)(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<T, E> {
        Ok((self.0)(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok((self.0)(None))
    }

    fn visit_unit<E>(self) -> Result<T, E> {
        Ok((self.0)(None))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok((self.0)(None))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map.next_entry::<String, Value>()?.is_some() {}
        Ok((self.0)(None))
    }
}

/// A member that is there, even as `null` (which plain `Option` would read as absent).
fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// The JSON-RPC members of a message, taken out of wherever it was read from.
struct Members {
    /// Whether `jsonrpc` is `"2.0"` (`None`: absent).
    jsonrpc: Option<bool>,
    id: Option<Value>,
    method: Option<MethodIn>,
    params: Option<ParamsIn>,
    result: Option<Value>,
    error: Option<Value>,
}

/// A message's `method`: a name the server knows (not copied), another string, or a value that
/// is not a string (`null` included: a `method` that is there).
enum MethodIn {
    Known(&'static str),
    Other(String),
    NotString,
}

impl<'de> serde::Deserialize<'de> for MethodIn {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OnString(|text: Option<&str>| match text {
            Some(method) => {
                MethodIn::known(method).unwrap_or_else(|| MethodIn::Other(method.to_owned()))
            }
            None => MethodIn::NotString,
        }))
    }
}

impl MethodIn {
    /// The method, when the server knows it by this exact name.
    fn known(method: &str) -> Option<Self> {
        super::Method::parse(method)
            .map(super::Method::name)
            .filter(|&name| name == method)
            .map(Self::Known)
    }

    fn into_name(self) -> Option<Cow<'static, str>> {
        match self {
            Self::Known(name) => Some(Cow::Borrowed(name)),
            Self::Other(name) => Some(Cow::Owned(name)),
            Self::NotString => None,
        }
    }
}

impl From<Value> for MethodIn {
    fn from(value: Value) -> Self {
        match value {
            Value::String(method) => Self::known(&method).unwrap_or(Self::Other(method)),
            _ => Self::NotString,
        }
    }
}

/// Whether `bytes` opens more than `max` arrays or objects at once, outside strings. On invalid
/// JSON the count may be off, but only after the point where the parser fails anyway.
/// (Depth needs at least as many openers as levels: most messages have fewer openers in all than
/// the limit, and their count, which the callers take first, is far cheaper than this scan,
/// which has to follow strings.)
fn exceeds_depth(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// A message that is JSON but not valid JSON-RPC: the error to answer with, and the id when it
/// could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMessage {
    /// The id, when the message had a readable one.
    pub id: Option<RequestId>,
    /// The error to send back.
    pub error: ErrorObject,
}

impl Message {
    /// Takes a parsed JSON value apart into a message, checking the JSON-RPC 2.0 envelope.
    pub fn from_value(value: Value) -> Result<Self, Box<InvalidMessage>> {
        let Value::Object(mut object) = value else {
            return Err(invalid(None, "a JSON-RPC message is an object"));
        };
        Self::from_members(Members {
            jsonrpc: object
                .remove("jsonrpc")
                .map(|version| version.as_str() == Some("2.0")),
            id: object.remove("id"),
            method: object.remove("method").map(MethodIn::from),
            params: object.remove("params").map(ParamsIn::from),
            result: object.remove("result"),
            error: object.remove("error"),
        })
    }

    fn from_members(members: Members) -> Result<Self, Box<InvalidMessage>> {
        let Members {
            jsonrpc,
            id,
            method,
            params,
            result,
            error,
        } = members;
        let id = match id {
            None => None,
            Some(raw) => match RequestId::from_json(&raw) {
                Some(id) => Some(id),
                None => return Err(invalid(None, "`id` must be a string or an integer")),
            },
        };
        if jsonrpc != Some(true) {
            return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
        }
        match method.map(MethodIn::into_name) {
            Some(Some(method)) => {
                let params = match params {
                    None | Some(ParamsIn::Other(Value::Null)) => Params::new(),
                    Some(ParamsIn::Object(params)) => params,
                    Some(ParamsIn::Other(_)) => {
                        return Err(Box::new(InvalidMessage {
                            id,
                            error: ErrorObject::invalid_params("`params` must be an object"),
                        }));
                    }
                };
                Ok(match id {
                    Some(id) => Self::Request(Request { id, method, params }),
                    None => Self::Notification(Notification { method, params }),
                })
            }
            Some(_) => Err(invalid(id, "`method` must be a string")),
            None => {
                let Some(id) = id else {
                    return Err(invalid(
                        None,
                        "a message needs a `method`, or an `id` and a `result`",
                    ));
                };
                let outcome = match (result, error) {
                    (Some(result), None) => Ok(result),
                    (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
                        Ok(error) => Err(error),
                        Err(_) => return Err(invalid(Some(id), "malformed `error` object")),
                    },
                    _ => {
                        return Err(invalid(
                            Some(id),
                            "a response has exactly one of `result` and `error`",
                        ));
                    }
                };
                Ok(Self::Response(Response { id, outcome }))
            }
        }
    }
}

#[cold]
fn invalid(id: Option<RequestId>, message: &'static str) -> Box<InvalidMessage> {
    Box::new(InvalidMessage {
        id,
        error: ErrorObject::invalid_request(message),
    })
}

/// Looks a method up in a version-independent spelling: some clients send `initialized` or
/// `cancelled` without the `notifications/` prefix, and both spellings are accepted.
pub(crate) fn canonical_notification(method: &str) -> &str {
    match method {
        "initialized" => "notifications/initialized",
        "cancelled" => "notifications/cancelled",
        "progress" => "notifications/progress",
        other => other,
    }
}

#[derive(Serialize)]
struct ResultEnvelope<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    jsonrpc: &'static str,
    /// Always present: `null` when the request's id could not be read (JSON-RPC 2.0, 5).
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct NotificationEnvelope<'a, T: ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

#[derive(Serialize)]
struct RequestEnvelope<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

/// Serializes a result response. Serializing a `Value` or a derived type cannot fail; a
/// user type whose `Serialize` fails becomes an internal error response instead.
pub(crate) fn encode_response<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    serde_json::to_vec(&ResultEnvelope {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_else(|_| {
        encode_error(
            Some(id),
            &ErrorObject::internal("the result could not be serialized"),
        )
    })
}

/// Serializes an error response: `"id"` is the request's, or `null` when it could not be read
/// (an unparseable message, an invalid id, a body not read), as JSON-RPC 2.0 requires of every
/// response. Every error body the server sends, on every transport, is built here.
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    serde_json::to_vec(&ErrorEnvelope {
        jsonrpc: "2.0",
        id,
        error,
    })
    .unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#
            .to_vec()
    })
}

/// Serializes a notification.
pub(crate) fn encode_notification<T: Serialize + ?Sized>(
    method: &str,
    params: Option<&T>,
) -> Vec<u8> {
    serde_json::to_vec(&NotificationEnvelope {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

/// Serializes a request.
pub(crate) fn encode_request<T: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: Option<&T>,
) -> Vec<u8> {
    serde_json::to_vec(&RequestEnvelope {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .unwrap_or_default()
}

/// Serializes a result response around a result that is already JSON text, such as a cached
/// `tools/list` result, without parsing it again.
pub(crate) fn encode_raw_response(id: &RequestId, raw_result: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw_result.len() + 48);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing an id into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(raw_result.as_bytes());
    out.push(b'}');
    out
}

/// The id of a message of which only the first bytes are at hand (a line too long to read in
/// full): the top-level `"id"` member, when it comes whole before the cut. Anything else,
/// malformed or cut short, is `None`.
pub fn id_in_prefix(head: &[u8]) -> Option<RequestId> {
    let mut scan = Scan { bytes: head, at: 0 };
    scan.skip_space();
    scan.expect(b'{')?;
    loop {
        scan.skip_space();
        let key = scan.string()?;
        scan.skip_space();
        scan.expect(b':')?;
        scan.skip_space();
        let start = scan.at;
        scan.value()?;
        if key == br#""id""# {
            let raw = head.get(start..scan.at)?;
            let value: Value = serde_json::from_slice(raw).ok()?;
            return RequestId::from_json(&value);
        }
        scan.skip_space();
        scan.expect(b',')?;
    }
}

/// A cursor over JSON text that only skips: every read is checked, and running out is `None`.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A string with its quotes; the raw bytes, escapes undecoded.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return self.bytes.get(start..self.at),
                _ => {}
            }
        }
    }

    /// Skips one value: a string, an array or object (brackets counted outside strings), or a
    /// number or literal.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth = depth.checked_sub(1)?,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                // A literal that runs to the end of the prefix may be cut short.
                (self.at > start && self.peek().is_some()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn retry_after_is_whole_milliseconds_rounded_up_and_never_zero() {
        use std::time::Duration;
        assert_eq!(retry_millis(Duration::ZERO), 1);
        assert_eq!(retry_millis(Duration::from_nanos(1)), 1);
        assert_eq!(retry_millis(Duration::from_millis(2000)), 2000);
        assert_eq!(retry_millis(Duration::from_micros(1_000_500)), 1001);
        let unavailable = ErrorObject::unavailable("busy", Duration::from_secs(1));
        assert_eq!(unavailable.code, -32024);
        assert_eq!(
            unavailable.data,
            Some(json!({"reason": "overloaded", "retryAfterMs": 1000}))
        );
    }

    fn parse(value: Value) -> Result<Message, Box<InvalidMessage>> {
        Message::from_value(value)
    }

    #[test]
    fn the_direct_parser_agrees_with_decode_then_from_value() {
        let inputs: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
            r#"  {"method":"ping","id":"x","jsonrpc":"2.0","extra":[1,{"a":null}]}"#,
            // Found by the fuzzer: an invalid escape inside a member nobody reads.
            r#"{"jsonrpc":"2.0","id":"a","method":"ping","Params":{"b":"\udc00"}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\u{1}\"}",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":-1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":null,"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"["2.0",1,"ping"]"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"[]"#,
            r#""2.0""#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","method":"\u00e9\"q"}"#,
            "not json",
            "",
        ];
        for input in inputs {
            for depth in [1, 2, 64] {
                let general = decode(input.as_bytes(), depth).map(|value| match value {
                    Value::Array(items) => Incoming::Batch(items),
                    value => Incoming::Single(Message::from_value(value)),
                });
                assert_eq!(
                    super::parse(input.as_bytes(), depth),
                    general,
                    "{input} at {depth}"
                );
            }
        }
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = parse(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})).unwrap();
        assert!(matches!(
            request,
            Message::Request(Request {
                id: RequestId::Number(7),
                ..
            })
        ));
        let note = parse(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        assert!(matches!(note, Message::Notification(_)));
        let response = parse(json!({"jsonrpc": "2.0", "id": "a", "result": {}})).unwrap();
        assert!(matches!(
            response,
            Message::Response(Response { outcome: Ok(_), .. })
        ));
    }

    #[test]
    fn null_fractional_and_object_ids_are_invalid_requests() {
        for id in [json!(null), json!(1.5), json!({}), json!(true)] {
            let err = parse(json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).unwrap_err();
            assert_eq!(err.error.code, error_codes::INVALID_REQUEST);
            assert_eq!(err.id, None);
        }
    }

    #[test]
    fn wrong_jsonrpc_keeps_the_readable_id() {
        let err = parse(json!({"jsonrpc": "1.0", "id": "x", "method": "ping"})).unwrap_err();
        assert_eq!(err.id, Some(RequestId::from("x")));
        assert_eq!(err.error.code, error_codes::INVALID_REQUEST);
    }

    #[test]
    fn non_object_params_are_invalid_params() {
        let err = parse(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}))
            .unwrap_err();
        assert_eq!(err.error.code, error_codes::INVALID_PARAMS);
    }

    #[test]
    fn error_without_readable_id_has_a_null_id() {
        let bytes = encode_error(None, &ErrorObject::parse_error("eof"));
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value.get("id"), Some(&Value::Null));
        assert_eq!(value["error"]["code"], -32700);
        let bytes = encode_error(Some(&RequestId::from("a")), &ErrorObject::internal("x"));
        assert!(bytes.starts_with(br#"{"jsonrpc":"2.0","id":"a","error":"#));
    }

    #[test]
    fn nesting_is_limited_before_parsing() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(decode(nested(64).as_bytes(), 64).is_ok());
        let error = decode(nested(65).as_bytes(), 64).unwrap_err();
        assert_eq!(error.code, error_codes::PARSE_ERROR);
        assert!(
            error.message.contains("deeper than 64"),
            "{}",
            error.message
        );
        // A million levels cost one scan, no recursion.
        assert!(decode(nested(1_000_000).as_bytes(), 64).is_err());
        // Brackets inside strings, escaped quotes included, do not count.
        let text = format!(r#"{{"a":"\"{}\\"}}"#, "[".repeat(100));
        assert!(decode(text.as_bytes(), 2).is_ok(), "{text}");
        // serde_json's own limit still stands behind a larger one.
        assert_eq!(
            decode(nested(200).as_bytes(), 1_000).unwrap_err().code,
            error_codes::PARSE_ERROR
        );
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let error = decode(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", 64).unwrap_err();
        assert_eq!(error.code, error_codes::PARSE_ERROR);
    }

    #[test]
    fn a_message_with_invalid_utf8_is_the_parse_error_decode_gives() {
        for bytes in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/\xff\"}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"\xfe\":1}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\xff\"method\":\"x\"}",
        ] {
            let parsed = super::parse(bytes, 64).unwrap_err();
            assert_eq!(parsed, decode(bytes, 64).unwrap_err());
            assert_eq!(parsed.code, error_codes::PARSE_ERROR);
        }
    }

    #[test]
    fn ids_echo_with_their_type() {
        let bytes = encode_response(&RequestId::from("1"), &json!({}));
        assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":"1","result":{}}"#);
        let bytes = encode_response(&RequestId::Number(1), &json!({}));
        assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    }

    #[test]
    fn the_id_is_read_from_the_head_of_a_message_cut_short() {
        let id = |text: &str| id_in_prefix(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"x":"aaaa"#),
            Some(RequestId::Number(6))
        );
        assert_eq!(
            id(r#" { "method" : "x", "params": {"id": 1, "s": "}\"{"}, "id" : "a\"b" , "#),
            Some(RequestId::String(r#"a"b"#.into()))
        );
        // Cut inside the id, or before it: unknown.
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","params":{"id":3,"#), None);
        assert_eq!(id(r#"{"id":null,"#), None);
        assert_eq!(id("[{\"id\":1}]"), None);
        assert_eq!(id(""), None);
        assert_eq!(id("{\"a\":[[[[\"]]]]"), None);
    }
}
