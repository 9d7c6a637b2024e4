//! One call of an operation: the arguments checked and laid out as the description says, the
//! request sent, the answer read within its bounds.

use std::fmt::Write as _;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::upstream::{Credential, Upstream};
use super::{Body, BodyShape, Encoding, Kind, Location, Operation, Parameter, Style};
use crate::context::Context;
use crate::protocol::Content;
use crate::tool::{CallToolResult, ToolError};

/// A successful (2xx) answer of an operation.
#[derive(Debug, Clone)]
pub struct Response {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

impl Response {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The `Content-Type`, when the API sent one.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }

    /// The body.
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.body).ok()
    }

    /// The body as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        if self.body.is_empty() {
            return None;
        }
        serde_json::from_slice(&self.body).ok()
    }

    /// The tool's result: the body as text, and as `structuredContent` when the operation
    /// declares an output schema.
    pub(crate) fn into_tool_result(self, operation: &Operation) -> CallToolResult {
        let text = match self.text() {
            Some("") => format!("{} {}: {}", operation.method, operation.path, self.status),
            Some(text) => text.to_owned(),
            None => format!(
                "{} {} answered {} bytes of `{}`, which are not text",
                operation.method,
                operation.path,
                self.body.len(),
                self.content_type.as_deref().unwrap_or("no content type")
            ),
        };
        let mut result = CallToolResult::success([Content::text(text)]);
        if operation.output_schema.is_some() {
            let Some(json) = self.json() else {
                return CallToolResult::error(format!(
                    "{} {} answered {} without the JSON its description promises",
                    operation.method, operation.path, self.status
                ));
            };
            result.structured_content = Some(if operation.wrap_output {
                Value::Object(Map::from_iter([("result".to_owned(), json)]))
            } else {
                json
            });
        }
        result
    }
}

impl crate::tool::IntoCallToolResult for Response {
    fn into_call_tool_result(self) -> CallToolResult {
        let text = String::from_utf8_lossy(&self.body).into_owned();
        CallToolResult::success([Content::text(text)])
    }
}

/// Sends `operation` with `arguments` through `upstream`, for the request of `context`.
pub(crate) async fn send(
    upstream: &Upstream,
    context: &Context,
    operation: &'static Operation,
    arguments: Map<String, Value>,
) -> Result<Response, ToolError> {
    let what = || format!("{} {}", operation.method, operation.path);
    let request = Request::build(upstream, operation, arguments)?;
    let method = reqwest::Method::from_bytes(operation.method.as_bytes())
        .map_err(|_| ToolError::new(format!("{}: not an HTTP method", what())))?;
    let mut builder = upstream
        .client
        .request(method, request.url)
        .timeout(upstream.timeout)
        .headers(upstream.headers.clone());
    for (name, value) in request.headers {
        builder = builder.header(name, value);
    }
    if let Some(authorization) = authorization(upstream, context).await? {
        builder = builder.header(AUTHORIZATION, authorization);
    }
    if let Some((content_type, body)) = request.body {
        builder = builder.header(CONTENT_TYPE, content_type).body(body);
    }
    let mut response = builder
        .send()
        .await
        .map_err(|e| ToolError::new(format!("{}: the request failed: {}", what(), describe(e))))?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if !status.is_success() {
        // An error body is read only as far as it is shown.
        let body = read(&mut response, upstream.max_error_bytes + 4, false)
            .await
            .unwrap_or_default();
        let mut message = format!("{} answered {status}", what());
        let shown = trim(&String::from_utf8_lossy(&body), upstream.max_error_bytes);
        if !shown.is_empty() {
            let _ = write!(message, ": {shown}");
        }
        return Err(ToolError::new(message));
    }
    if let Some(length) = response.content_length()
        && length > upstream.max_response_bytes as u64
    {
        return Err(ToolError::new(format!(
            "{}: the response has {length} bytes, over the bound of {}",
            what(),
            upstream.max_response_bytes
        )));
    }
    let body = read(&mut response, upstream.max_response_bytes, true)
        .await
        .map_err(|e| ToolError::new(format!("{}: {e}", what())))?;
    Ok(Response {
        status: status.as_u16(),
        content_type,
        body,
    })
}

/// Reads at most `limit` bytes of a body; past it, an error (`strict`) or the bytes so far.
async fn read(
    response: &mut reqwest::Response,
    limit: usize,
    strict: bool,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    if strict {
                        return Err(format!("the response is over the bound of {limit} bytes"));
                    }
                    let room = limit - body.len();
                    body.extend_from_slice(&chunk[..room.min(chunk.len())]);
                    return Ok(body);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(format!("reading the response failed: {}", describe(e))),
        }
    }
}

/// At most `limit` bytes of `text`, cut at a character boundary, `…` marking the cut.
pub(crate) fn trim(text: &str, limit: usize) -> String {
    let text = text.trim();
    if text.len() <= limit {
        return text.to_owned();
    }
    format!("{}…", crate::protocol::cut(text, limit))
}

/// A reqwest error in words, without the URL (it may carry a query with secrets).
fn describe(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "could not connect".to_owned()
    } else if error.is_redirect() {
        "too many redirects, or one to another origin".to_owned()
    } else {
        error.without_url().to_string()
    }
}

/// The `Authorization` value of a request, as the upstream's credential says.
async fn authorization(
    upstream: &Upstream,
    context: &Context,
) -> Result<Option<HeaderValue>, ToolError> {
    let value = match &upstream.credential {
        Credential::None => return Ok(None),
        Credential::Bearer(value) => return Ok(Some(value.clone())),
        Credential::ForwardCaller { audience } => {
            let Some(principal) = context.principal() else {
                return Err(ToolError::new(
                    "this tool forwards the caller's OAuth token, and this request carries none \
                     (stdio, or HTTP without OAuth)",
                ));
            };
            let Some(token) = principal.access_token() else {
                return Err(ToolError::new(
                    "this tool forwards the caller's OAuth token, and the server does not keep it \
                     (`OAuth::expose_access_token`), or it is DPoP-bound",
                ));
            };
            let names = |aud: &Value| match aud {
                Value::String(one) => one == audience,
                Value::Array(many) => many.iter().any(|a| a == audience.as_str()),
                _ => false,
            };
            if !principal.claims().get("aud").is_some_and(names) {
                return Err(ToolError::new(format!(
                    "the caller's token is not issued for `{audience}`, so it is not forwarded there"
                )));
            }
            format!("Bearer {token}")
        }
        Credential::Custom(authorize) => match authorize(context.clone()).await? {
            Some(value) => value,
            None => return Ok(None),
        },
    };
    let mut value = HeaderValue::from_str(&value)
        .map_err(|_| ToolError::new("the credential is not a header value"))?;
    value.set_sensitive(true);
    Ok(Some(value))
}

/// A request laid out from a call's arguments.
struct Request {
    url: reqwest::Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Option<(&'static str, Vec<u8>)>,
}

impl Request {
    /// Checks `arguments` against `operation` and lays them out; every problem is named in one
    /// error.
    fn build(
        upstream: &Upstream,
        operation: &'static Operation,
        mut arguments: Map<String, Value>,
    ) -> Result<Self, ToolError> {
        let mut problems = Vec::new();
        let body_names: &[&str] = match &operation.body {
            Some(Body {
                shape: BodyShape::Whole(name),
                ..
            }) => std::slice::from_ref(name),
            Some(Body {
                shape: BodyShape::Properties { names, .. },
                ..
            }) => names,
            None => &[],
        };
        for name in arguments.keys() {
            let known = operation.parameters.iter().any(|p| p.argument == name)
                || body_names.contains(&name.as_str());
            if !known {
                problems.push(format!("unknown argument `{name}`"));
            }
        }
        let mut path = operation.path.to_owned();
        let mut query = Vec::new();
        let mut headers = Vec::new();
        for parameter in operation.parameters {
            let Some(value) = arguments
                .remove(parameter.argument)
                .filter(|v| !v.is_null())
            else {
                if parameter.required {
                    problems.push(format!(
                        "missing argument `{}`{}",
                        parameter.argument,
                        kind_name(parameter.kind)
                    ));
                }
                continue;
            };
            if !fits(parameter.kind, &value) {
                problems.push(format!(
                    "argument `{}` must be {}",
                    parameter.argument,
                    kind_noun(parameter.kind)
                ));
                continue;
            }
            lay_out(
                parameter,
                &value,
                &mut path,
                &mut query,
                &mut headers,
                &mut problems,
            );
        }
        let body = operation
            .body
            .as_ref()
            .and_then(|body| encode_body(body, &mut arguments, &mut problems));
        if !problems.is_empty() {
            return Err(ToolError::new(format!(
                "{} {}: {}",
                operation.method,
                operation.path,
                problems.join("; ")
            )));
        }
        let mut url =
            reqwest::Url::parse(&format!("{}{path}", upstream.base_url)).map_err(|e| {
                ToolError::new(format!(
                    "{} {}: not a URL: {e}",
                    operation.method, operation.path
                ))
            })?;
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &query {
                pairs.append_pair(name, value);
            }
        }
        Ok(Self { url, headers, body })
    }
}

/// Writes one parameter's value where it goes.
fn lay_out(
    parameter: &Parameter,
    value: &Value,
    path: &mut String,
    query: &mut Vec<(String, String)>,
    headers: &mut Vec<(HeaderName, HeaderValue)>,
    problems: &mut Vec<String>,
) {
    let name = parameter.name;
    match parameter.location {
        Location::Path => {
            let text = match parameter.style {
                Style::Json => value.to_string(),
                _ => joined(value, ","),
            };
            *path = path.replace(&format!("{{{name}}}"), &encode_segment(&text));
        }
        Location::Header => {
            let text = match parameter.style {
                Style::Json => value.to_string(),
                _ => joined(value, ","),
            };
            match (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&text),
            ) {
                (Ok(header), Ok(text)) => headers.push((header, text)),
                _ => problems.push(format!(
                    "argument `{}` cannot be a header value",
                    parameter.argument
                )),
            }
        }
        Location::Query => match (parameter.style, value) {
            (Style::Json, value) => query.push((name.to_owned(), value.to_string())),
            (Style::FormExplode, Value::Array(items)) => {
                query.extend(items.iter().map(|item| (name.to_owned(), scalar(item))));
            }
            (Style::FormExplode, Value::Object(fields)) => {
                query.extend(fields.iter().map(|(k, v)| (k.clone(), scalar(v))));
            }
            (Style::DeepObject, Value::Object(fields)) => {
                query.extend(
                    fields
                        .iter()
                        .map(|(k, v)| (format!("{name}[{k}]"), scalar(v))),
                );
            }
            (Style::SpaceDelimited, value) => query.push((name.to_owned(), joined(value, " "))),
            (Style::PipeDelimited, value) => query.push((name.to_owned(), joined(value, "|"))),
            (_, value) => query.push((name.to_owned(), joined(value, ","))),
        },
    }
}

/// The request body from its arguments, or `None` (a problem recorded when one is needed).
fn encode_body(
    body: &Body,
    arguments: &mut Map<String, Value>,
    problems: &mut Vec<String>,
) -> Option<(&'static str, Vec<u8>)> {
    let value = match body.shape {
        BodyShape::Whole(name) => match arguments.remove(name) {
            Some(value) => value,
            None if body.required => {
                problems.push(format!("missing argument `{name}`"));
                return None;
            }
            None => return None,
        },
        BodyShape::Properties { names, required } => {
            let mut object = Map::new();
            for name in names {
                if let Some(value) = arguments.remove(*name) {
                    object.insert((*name).to_owned(), value);
                } else if required.contains(name) {
                    problems.push(format!("missing argument `{name}`"));
                }
            }
            if object.is_empty() && !body.required {
                return None;
            }
            Value::Object(object)
        }
    };
    let bytes = match body.encoding {
        Encoding::Json => serde_json::to_vec(&value).unwrap_or_default(),
        Encoding::Form => match &value {
            Value::Object(fields) => {
                let mut form = reqwest::Url::parse("http://form.invalid/").ok()?;
                {
                    let mut pairs = form.query_pairs_mut();
                    for (k, v) in fields {
                        pairs.append_pair(k, &scalar(v));
                    }
                }
                form.query().unwrap_or_default().as_bytes().to_vec()
            }
            _ => {
                problems.push("the form body must be an object".to_owned());
                return None;
            }
        },
        Encoding::Text => match value {
            Value::String(text) => text.into_bytes(),
            other => other.to_string().into_bytes(),
        },
    };
    Some((body.content_type, bytes))
}

/// Whether `value` has the JSON type `kind`.
fn fits(kind: Kind, value: &Value) -> bool {
    match kind {
        Kind::String => value.is_string(),
        Kind::Integer => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        Kind::Number => value.is_number(),
        Kind::Boolean => value.is_boolean(),
        Kind::Array => value.is_array(),
        Kind::Object => value.is_object(),
        Kind::Any => true,
    }
}

fn kind_noun(kind: Kind) -> &'static str {
    match kind {
        Kind::String => "a string",
        Kind::Integer => "an integer",
        Kind::Number => "a number",
        Kind::Boolean => "a boolean",
        Kind::Array => "an array",
        Kind::Object => "an object",
        Kind::Any => "a value",
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::String => " (a string)",
        Kind::Integer => " (an integer)",
        Kind::Number => " (a number)",
        Kind::Boolean => " (a boolean)",
        Kind::Array => " (an array)",
        Kind::Object => " (an object)",
        Kind::Any => "",
    }
}

/// A scalar's text: a string as it is, anything else as its JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A list's items (or an object's keys and values) joined by `separator`; a scalar's text.
fn joined(value: &Value, separator: &str) -> String {
    match value {
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(separator),
        Value::Object(fields) => fields
            .iter()
            .flat_map(|(k, v)| [k.clone(), scalar(v)])
            .collect::<Vec<_>>()
            .join(separator),
        other => scalar(other),
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters, so a value stays one path
/// segment (`/` and `..` included).
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    // `.` and `..` alone would still move up the path.
    match out.as_str() {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_at_a_character_boundary() {
        assert_eq!(trim("héllo", 2), "h…");
        assert_eq!(trim("  short  ", 10), "short");
    }

    #[test]
    fn path_values_stay_one_segment() {
        assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
        assert_eq!(encode_segment(".."), "%2E%2E");
        assert_eq!(encode_segment("ü"), "%C3%BC");
    }

    #[test]
    fn integers_accept_whole_floats_only() {
        assert!(fits(Kind::Integer, &serde_json::json!(3)));
        assert!(fits(Kind::Integer, &serde_json::json!(3.0)));
        assert!(!fits(Kind::Integer, &serde_json::json!(3.5)));
        assert!(!fits(Kind::Integer, &serde_json::json!("3")));
    }
}
