//! The checks a request passes before anything of it is read: `Host` and `Origin` against
//! DNS rebinding, `Accept`, `Content-Type`, `MCP-Protocol-Version` and the session header.

#[cfg(feature = "fuzzing")]
use axum::http::HeaderValue;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::{
    MCP_PROTOCOL_VERSION, MCP_SESSION_ID, before, error_response, error_response_to, json_response,
};
use crate::protocol::{ErrorObject, ProtocolVersion, RequestId, encode_error};
use crate::server::{HostPolicy, HttpOptions};

/// The host part of an authority (`host`, `host:port`, `[v6]` or `[v6]:port`), brackets kept for
/// IPv6; `None` when it is malformed (an unclosed `[`, or anything after `]` but a port). The text
/// is the client's, so it is only ever split, never sliced by computed offsets.
pub(super) fn host_name(value: &str) -> Option<&str> {
    let value = value.trim();
    if value.starts_with('[') {
        let (inside, after) = value.split_once(']')?;
        let port_ok = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|port| port.chars().all(|c| c.is_ascii_digit()));
        // `inside` keeps its `[`, so the host with its brackets is `inside` and one `]`.
        return port_ok.then(|| value.get(..inside.len() + 1)).flatten();
    }
    let host = match value.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        Some(_) => return None,
        None => value,
    };
    (!host.is_empty()).then_some(host)
}

/// The DNS-rebinding check: `Host`, the host of an absolute-form request target
/// (`POST http://host/mcp`), and `Origin` when present must name an allowed host. A repeated
/// `Host` is 400 (which one would the check believe?); a malformed `Host` or `Origin`, an
/// `Origin` without a scheme (an origin is `scheme://host[:port]`), and `Origin: null` (an
/// opaque origin, such as a sandboxed page), are 403 unless the policy is [`HostPolicy::Any`].
pub(super) fn check_host(
    options: &HttpOptions,
    headers: &HeaderMap,
    target: &axum::http::Uri,
) -> Result<(), Response> {
    let allowed = |host: &str| -> bool {
        match &options.hosts {
            HostPolicy::Any => true,
            HostPolicy::Loopback => ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host)),
            HostPolicy::Only(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
        }
    };
    // One lookup for both: the first `Host`, and whether there is another.
    let mut hosts = headers.get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "more than one `Host` header",
        ));
    }
    if options.hosts == HostPolicy::Any {
        return Ok(());
    }
    let host = first.and_then(|v| v.to_str().ok()).and_then(host_name);
    if !host.is_some_and(allowed) {
        return Err(error_response(StatusCode::FORBIDDEN, "forbidden `Host`"));
    }
    if let Some(authority) = target.authority()
        && !host_name(authority.as_str()).is_some_and(allowed)
    {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "forbidden host in the request target",
        ));
    }
    for origin in headers.get_all(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = match origin.split_once("://") {
            Some((scheme, rest)) if !scheme.is_empty() => rest,
            _ => "",
        };
        let authority = authority.split('/').next().unwrap_or("");
        if !host_name(authority).is_some_and(allowed) {
            return Err(error_response(StatusCode::FORBIDDEN, "forbidden `Origin`"));
        }
    }
    Ok(())
}

/// The `Mcp-Session-Id` of a request: 400 (answering `request`) when it has none, or more than
/// one (which would the server believe?).
pub(super) fn session_header<'h>(
    headers: &'h HeaderMap,
    request: Option<&RequestId>,
) -> Result<&'h str, Response> {
    let mut ids = headers.get_all(&MCP_SESSION_ID).iter();
    let first = ids.next().and_then(|v| v.to_str().ok());
    if ids.next().is_some() {
        return Err(error_response_to(
            request,
            StatusCode::BAD_REQUEST,
            "more than one `Mcp-Session-Id` header",
        ));
    }
    first.ok_or_else(|| {
        error_response_to(
            request,
            StatusCode::BAD_REQUEST,
            "the `Mcp-Session-Id` header is missing: send `initialize` first",
        )
    })
}

/// What the client's `Accept` header allows, read as a list.
pub(super) fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let Some(accept) = headers.get(header::ACCEPT) else {
        return (true, false);
    };
    // The list MCP clients send (the spec's own), recognised whole before any reading.
    if accept.as_bytes() == b"application/json, text/event-stream" {
        return (true, true);
    }
    let Ok(accept) = accept.to_str() else {
        return (true, false);
    };
    let mut json = false;
    let mut sse = false;
    // Read as bytes: the text is ASCII (`to_str` checked it), so trimming ASCII whitespace is
    // `str::trim`, and splitting on a byte skips `str`'s pattern machinery.
    for item in accept.as_bytes().split(|&b| b == b',') {
        let media = item
            .split(|&b| b == b';')
            .next()
            .unwrap_or(item)
            .trim_ascii();
        let is = |name: &str| media.eq_ignore_ascii_case(name.as_bytes());
        if is("application/json") || is("*/*") || is("application/*") {
            json = true;
        } else if is("text/event-stream") {
            sse = true;
        }
    }
    (json, sse)
}

/// The `MCP-Protocol-Version` of a handshake-era request: absent, or a revision this server
/// supports (else 400). `2026-07-28` without an envelope is 400 + -32602. A refusal answers
/// `request`, the id of the request in the body (a GET has none).
pub(super) fn header_version(
    headers: &HeaderMap,
    request: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, Response> {
    match headers.get(&MCP_PROTOCOL_VERSION) {
        None => Ok(None),
        Some(value) => match value.to_str().ok().and_then(ProtocolVersion::parse) {
            Some(version) if version.has_handshake() => Ok(Some(version)),
            Some(_) => Err(json_response(
                StatusCode::BAD_REQUEST,
                encode_error(
                    request,
                    &ErrorObject::invalid_params(
                        "a 2026-07-28 request needs the `_meta` envelope \
                         (`io.modelcontextprotocol/protocolVersion`)",
                    ),
                ),
            )),
            None => Err(error_response_to(
                request,
                StatusCode::BAD_REQUEST,
                "unsupported `MCP-Protocol-Version`",
            )),
        },
    }
}

/// The header guard alone, for the `http_headers` fuzz target: `headers` (name, raw value;
/// values HTTP cannot carry are skipped, as hyper would refuse them) through the `Host`/`Origin`
/// check under each host policy, `Accept`, `MCP-Protocol-Version`, `Content-Type` (415 when not
/// JSON) and the
/// session header's text. The statuses the checks answer (200 when they pass); never a panic.
#[cfg(feature = "fuzzing")]
pub fn fuzz_guard(headers: &[(&str, &[u8])]) -> Vec<u16> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_bytes(value),
        ) {
            map.append(name, value);
        }
    }
    let status =
        |result: Result<(), Response>| result.map_or_else(|r| r.status().as_u16(), |()| 200);
    let mut out = Vec::new();
    for hosts in [
        HostPolicy::Loopback,
        HostPolicy::Any,
        HostPolicy::Only(vec!["example.com".to_owned()]),
    ] {
        let options = HttpOptions {
            hosts,
            ..HttpOptions::default()
        };
        out.push(status(check_host(
            &options,
            &map,
            &axum::http::Uri::from_static("/mcp"),
        )));
    }
    let _ = accepts(&map);
    out.push(status(header_version(&map, None).map(|_| ())));
    let _ = is_stateless_era(&map);
    out.push(status(check_json_content_type(&map)));
    let _ = map
        .get(&MCP_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::len);
    out
}

/// Whether a GET or DELETE is on the stateless path, which has neither.
pub(super) fn is_stateless_era(headers: &HeaderMap) -> bool {
    headers
        .get(&MCP_PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| !v.has_handshake())
}

/// 415 unless the request's `Content-Type` is `application/json` (parameters allowed).
pub(super) fn check_json_content_type(headers: &HeaderMap) -> Result<(), Response> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = before(content_type, b';').trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "`Content-Type` must be `application/json`",
        ))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    /// An origin-form request target, as most requests have.
    fn path() -> axum::http::Uri {
        axum::http::Uri::from_static("/mcp")
    }

    #[test]
    fn accept_is_read_as_a_list_of_media_types() {
        let read = |value: &'static [u8]| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_bytes(value).unwrap());
            accepts(&headers)
        };
        assert_eq!(accepts(&HeaderMap::new()), (true, false));
        assert_eq!(read(b"application/json, text/event-stream"), (true, true));
        assert_eq!(read(b"application/json,  text/event-stream"), (true, true));
        assert_eq!(read(b"application/json, text/event-stream2"), (true, false));
        assert_eq!(
            read(b"application/json\xff, text/event-stream"),
            (true, false)
        );
        assert_eq!(
            read(b"\t Application/JSON ;q=0.9 ,TEXT/event-stream;x=1"),
            (true, true)
        );
        assert_eq!(read(b"*/*"), (true, false));
        assert_eq!(read(b"application/*;q=1"), (true, false));
        assert_eq!(read(b"text/event-stream"), (false, true));
        assert_eq!(read(b"text/html, application/jsonx, ,;"), (false, false));
        assert_eq!(read(b""), (false, false));
        // Not visible ASCII: read as no `Accept` at all, as before.
        assert_eq!(read(b"text/event-stream, \xe9"), (true, false));
    }

    #[test]
    fn hosts_are_compared_without_ports() {
        assert_eq!(host_name("127.0.0.1:3000"), Some("127.0.0.1"));
        assert_eq!(host_name("localhost"), Some("localhost"));
        assert_eq!(host_name("[::1]:80"), Some("[::1]"));
        assert_eq!(host_name("[::1]"), Some("[::1]"));
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_err());
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_ok());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example.com"),
        );
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_err());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(check_host(&HttpOptions::default(), &headers, &path()).is_ok());
    }

    #[test]
    fn malformed_hosts_and_origins_are_refused_without_panicking() {
        for bad in [
            "[", "[::1", "[::1]x", "[::1]:8x", "", ":80", "a:b", "\u{e9}:[", "[\u{e9}",
        ] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
        let status =
            |headers: &HeaderMap| match check_host(&HttpOptions::default(), headers, &path()) {
                Ok(()) => StatusCode::OK,
                Err(response) => response.status(),
            };
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("["));
        assert_eq!(status(&headers), StatusCode::FORBIDDEN);
        headers.insert(header::HOST, HeaderValue::from_static("localhost"));
        for origin in ["http://[", "null", "http://", "http://[::1"] {
            headers.insert(header::ORIGIN, HeaderValue::from_static(origin));
            assert_eq!(status(&headers), StatusCode::FORBIDDEN, "{origin}");
        }
        headers.remove(header::ORIGIN);
        headers.append(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert_eq!(status(&headers), StatusCode::BAD_REQUEST);
        // `Origin: null` is only let through when any host is.
        let any = HttpOptions {
            hosts: HostPolicy::Any,
            ..HttpOptions::default()
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(check_host(&any, &headers, &path()).is_ok());
    }

    #[test]
    fn an_origin_needs_a_scheme_and_an_absolute_target_an_allowed_host() {
        let options = HttpOptions::default();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("localhost"));
        for origin in ["localhost", "localhost:3000", "://localhost", "127.0.0.1"] {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
            let refused = check_host(&options, &headers, &path()).unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin}");
        }
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://localhost:3000"),
        );
        assert!(check_host(&options, &headers, &path()).is_ok());
        headers.remove(header::ORIGIN);
        // `POST http://evil.example/mcp` with `Host: localhost`: the target's host counts too.
        let evil = axum::http::Uri::from_static("http://evil.example/mcp");
        let refused = check_host(&options, &headers, &evil).unwrap_err();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let local = axum::http::Uri::from_static("http://127.0.0.1:8000/mcp");
        assert!(check_host(&options, &headers, &local).is_ok());
    }

    #[test]
    fn two_session_ids_are_refused() {
        let mut headers = HeaderMap::new();
        assert_eq!(
            session_header(&headers, None).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("a"));
        assert_eq!(session_header(&headers, None).ok(), Some("a"));
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("b"));
        assert_eq!(
            session_header(&headers, None).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn accept_is_a_list() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json;q=0.9"),
        );
        assert_eq!(accepts(&headers), (true, true));
        headers.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        assert_eq!(accepts(&headers), (false, false));
    }
}
