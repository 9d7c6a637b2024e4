//! The checks a request passes before anything of it is read: `Host` and `Origin` against
//! DNS rebinding, `Accept`, `Content-Type`, `MCP-Protocol-Version` and the session header.

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{
    MCP_PROTOCOL_VERSION, MCP_SESSION_ID, before, error_response, error_response_to, json_response,
};
use crate::protocol::{ErrorObject, ProtocolVersion, RequestId, encode_error};
use crate::server::{HostPolicy, HttpOptions};

/// The headers the checks read, found in one pass over a request's headers instead of a
/// lookup each (every lookup hashes the name, and a request carries few headers).
pub(super) struct Seen<'h> {
    all: &'h HeaderMap,
    host: Found<'h>,
    /// Whether there is an `Origin`: all of them are checked, from `all`.
    origin: bool,
    accept: Option<&'h HeaderValue>,
    content_type: Option<&'h HeaderValue>,
    version: Option<&'h HeaderValue>,
    session: Found<'h>,
}

/// A header's first value (the one `HeaderMap::get` gives), and whether another follows.
#[derive(Default)]
struct Found<'h> {
    first: Option<&'h HeaderValue>,
    repeated: bool,
}

impl<'h> Found<'h> {
    fn see(&mut self, value: &'h HeaderValue) {
        match self.first {
            None => self.first = Some(value),
            Some(_) => self.repeated = true,
        }
    }
}

impl<'h> Seen<'h> {
    pub(super) fn of(headers: &'h HeaderMap) -> Self {
        let mut seen = Seen {
            all: headers,
            host: Found::default(),
            origin: false,
            accept: None,
            content_type: None,
            version: None,
            session: Found::default(),
        };
        // A map's iteration gives a name's values together, its first value first. A name
        // compares with a standard one by its index, with another by its text.
        for (name, value) in headers {
            if name == header::HOST {
                seen.host.see(value);
            } else if name == header::ACCEPT {
                seen.accept.get_or_insert(value);
            } else if name == header::CONTENT_TYPE {
                seen.content_type.get_or_insert(value);
            } else if name == header::ORIGIN {
                seen.origin = true;
            } else if name == MCP_SESSION_ID {
                seen.session.see(value);
            } else if name == MCP_PROTOCOL_VERSION {
                seen.version.get_or_insert(value);
            }
        }
        seen
    }

    /// All of the request's headers.
    pub(super) fn all(&self) -> &'h HeaderMap {
        self.all
    }

    /// Whether the request names a session.
    pub(super) fn has_session(&self) -> bool {
        self.session.first.is_some()
    }

    /// The bytes of the one `Mcp-Session-Id` the request carries (`None` without one, or with
    /// more than one).
    pub(super) fn session_bytes(&self) -> Option<&'h [u8]> {
        match self.session.repeated {
            true => None,
            false => self.session.first.map(HeaderValue::as_bytes),
        }
    }
}

/// The host part of an authority (`host`, `host:port`, `[v6]` or `[v6]:port`), brackets kept for
/// IPv6; `None` when it is malformed (an unclosed `[`, or anything after `]` but a port). The text
/// is the client's, so it is only ever split (at a checked character boundary), never sliced
/// unchecked.
pub(super) fn host_name(value: &str) -> Option<&str> {
    // Header text is visible ASCII, so ASCII whitespace is all there is to trim.
    let value = value.trim_ascii();
    if value.starts_with('[') {
        let (inside, after) = value.split_once(']')?;
        let port_ok = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|port| port.chars().all(|c| c.is_ascii_digit()));
        // `inside` keeps its `[`, so the host with its brackets is `inside` and one `]`.
        return port_ok.then(|| value.get(..inside.len() + 1)).flatten();
    }
    // Split at the last `:` (an ASCII byte, so a character boundary), which the port keeps.
    let last_colon = value.bytes().rposition(|b| b == b':');
    let host = match last_colon.and_then(|at| value.split_at_checked(at)) {
        Some((host, port)) if port.bytes().skip(1).all(|b| b.is_ascii_digit()) => host,
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
    headers: &Seen<'_>,
    target: &axum::http::Uri,
) -> Result<(), Response> {
    check_host_remembering(options, headers, target, None)
}

/// The longest `Host` value a connection remembers as allowed.
const REMEMBERED_HOST: usize = 255;

/// [`check_host`], on a connection that remembers the first `Host` value it allowed: a later
/// request with the same bytes (nearly every one) skips reading it again. Its request target
/// and `Origin` are checked every time.
pub(super) fn check_host_remembering(
    options: &HttpOptions,
    headers: &Seen<'_>,
    target: &axum::http::Uri,
    remembered: Option<&OnceLock<Box<[u8]>>>,
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
    if headers.host.repeated {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "more than one `Host` header",
        ));
    }
    if options.hosts == HostPolicy::Any {
        return Ok(());
    }
    let value = headers.host.first;
    let known = remembered
        .and_then(OnceLock::get)
        .is_some_and(|known| value.map(HeaderValue::as_bytes) == Some(&**known));
    if !known {
        let host = value.and_then(|v| v.to_str().ok()).and_then(host_name);
        if !host.is_some_and(allowed) {
            return Err(error_response(StatusCode::FORBIDDEN, "forbidden `Host`"));
        }
        if let (Some(remembered), Some(value)) = (remembered, value)
            && value.len() <= REMEMBERED_HOST
        {
            let _ = remembered.set(value.as_bytes().into());
        }
    }
    if let Some(authority) = target.authority()
        && !host_name(authority.as_str()).is_some_and(allowed)
    {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "forbidden host in the request target",
        ));
    }
    let origins = headers.origin.then(|| headers.all.get_all(header::ORIGIN));
    for origin in origins.into_iter().flatten() {
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
    headers: &Seen<'h>,
    request: Option<&RequestId>,
) -> Result<&'h str, Response> {
    let first = headers.session.first.and_then(|v| v.to_str().ok());
    if headers.session.repeated {
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
pub(super) fn accepts(headers: &Seen<'_>) -> (bool, bool) {
    let Some(accept) = headers.accept else {
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
    headers: &Seen<'_>,
    request: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, Response> {
    match headers.version {
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
    let seen = Seen::of(&map);
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
            &seen,
            &axum::http::Uri::from_static("/mcp"),
        )));
    }
    let _ = accepts(&seen);
    out.push(status(header_version(&seen, None).map(|_| ())));
    let _ = is_stateless_era(&seen);
    out.push(status(check_json_content_type(&seen)));
    out.push(status(session_header(&seen, None).map(|_| ())));
    out
}

/// Whether a GET or DELETE is on the stateless path, which has neither.
pub(super) fn is_stateless_era(headers: &Seen<'_>) -> bool {
    headers
        .version
        .and_then(|v| v.to_str().ok())
        .and_then(ProtocolVersion::parse)
        .is_some_and(|v| !v.has_handshake())
}

/// 415 unless the request's `Content-Type` is `application/json` (parameters allowed).
pub(super) fn check_json_content_type(headers: &Seen<'_>) -> Result<(), Response> {
    // The type MCP clients send, recognised whole before any reading.
    if headers
        .content_type
        .is_some_and(|v| v.as_bytes() == b"application/json")
    {
        return Ok(());
    }
    let content_type = headers
        .content_type
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
            accepts(&Seen::of(&headers))
        };
        assert_eq!(accepts(&Seen::of(&HeaderMap::new())), (true, false));
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
    fn a_connection_remembers_only_a_host_it_allowed() {
        let options = HttpOptions::default();
        let remembered = OnceLock::new();
        let check = |headers: &HeaderMap| {
            check_host_remembering(&options, &Seen::of(headers), &path(), Some(&remembered))
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert!(check(&headers).is_err());
        assert!(
            remembered.get().is_none(),
            "a refused host is not remembered"
        );
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert!(check(&headers).is_ok());
        assert_eq!(remembered.get().map(|h| &**h), Some(&b"localhost:8080"[..]));
        // Another host on the same connection is read again, and refused.
        headers.insert(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert!(check(&headers).is_err());
        // The remembered host with a foreign `Origin` or target: still refused.
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example.com"),
        );
        assert!(check(&headers).is_err());
        headers.remove(header::ORIGIN);
        let evil = axum::http::Uri::from_static("http://evil.example.com/mcp");
        let seen = Seen::of(&headers);
        assert!(check_host_remembering(&options, &seen, &evil, Some(&remembered)).is_err());
        // A repeated `Host` is refused whatever was remembered.
        headers.append(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert!(check(&headers).is_err());
    }

    #[test]
    fn hosts_are_compared_without_ports() {
        assert_eq!(host_name("127.0.0.1:3000"), Some("127.0.0.1"));
        assert_eq!(host_name("localhost"), Some("localhost"));
        assert_eq!(host_name("[::1]:80"), Some("[::1]"));
        assert_eq!(host_name("[::1]"), Some("[::1]"));
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("evil.example.com"));
        assert!(check_host(&HttpOptions::default(), &Seen::of(&headers), &path()).is_err());
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
        assert!(check_host(&HttpOptions::default(), &Seen::of(&headers), &path()).is_ok());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example.com"),
        );
        assert!(check_host(&HttpOptions::default(), &Seen::of(&headers), &path()).is_err());
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(check_host(&HttpOptions::default(), &Seen::of(&headers), &path()).is_ok());
    }

    #[test]
    fn malformed_hosts_and_origins_are_refused_without_panicking() {
        for bad in [
            "[", "[::1", "[::1]x", "[::1]:8x", "", ":80", "a:b", "\u{e9}:[", "[\u{e9}",
        ] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
        let status = |headers: &HeaderMap| match check_host(
            &HttpOptions::default(),
            &Seen::of(headers),
            &path(),
        ) {
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
        assert!(check_host(&any, &Seen::of(&headers), &path()).is_ok());
    }

    #[test]
    fn an_origin_needs_a_scheme_and_an_absolute_target_an_allowed_host() {
        let options = HttpOptions::default();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("localhost"));
        for origin in ["localhost", "localhost:3000", "://localhost", "127.0.0.1"] {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
            let refused = check_host(&options, &Seen::of(&headers), &path()).unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin}");
        }
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://localhost:3000"),
        );
        assert!(check_host(&options, &Seen::of(&headers), &path()).is_ok());
        headers.remove(header::ORIGIN);
        // `POST http://evil.example/mcp` with `Host: localhost`: the target's host counts too.
        let evil = axum::http::Uri::from_static("http://evil.example/mcp");
        let refused = check_host(&options, &Seen::of(&headers), &evil).unwrap_err();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let local = axum::http::Uri::from_static("http://127.0.0.1:8000/mcp");
        assert!(check_host(&options, &Seen::of(&headers), &local).is_ok());
    }

    #[test]
    fn one_pass_finds_what_a_lookup_finds() {
        let mut headers = HeaderMap::new();
        headers.append("x-other", HeaderValue::from_static("1"));
        headers.append(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.append(MCP_PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        headers.append(header::HOST, HeaderValue::from_static("localhost"));
        headers.append(header::ACCEPT, HeaderValue::from_static("application/json"));
        headers.append(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        headers.append(MCP_SESSION_ID, HeaderValue::from_static("s"));
        let seen = Seen::of(&headers);
        assert_eq!(seen.accept, headers.get(header::ACCEPT));
        assert_eq!(seen.accept.unwrap(), "text/event-stream");
        assert_eq!(seen.version, headers.get(MCP_PROTOCOL_VERSION));
        assert_eq!(seen.content_type, headers.get(header::CONTENT_TYPE));
        assert_eq!(seen.host.first, headers.get(header::HOST));
        assert_eq!(seen.session.first, headers.get(MCP_SESSION_ID));
        assert!(!seen.host.repeated && !seen.session.repeated && !seen.origin);
        assert!(seen.has_session());
        headers.append(header::HOST, HeaderValue::from_static("evil.example.com"));
        headers.append(header::ORIGIN, HeaderValue::from_static("http://localhost"));
        let seen = Seen::of(&headers);
        assert_eq!(seen.host.first.unwrap(), "localhost");
        assert!(seen.host.repeated && seen.origin);
        assert!(!Seen::of(&HeaderMap::new()).has_session());
    }

    #[test]
    fn two_session_ids_are_refused() {
        let mut headers = HeaderMap::new();
        assert_eq!(
            session_header(&Seen::of(&headers), None)
                .unwrap_err()
                .status(),
            StatusCode::BAD_REQUEST
        );
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("a"));
        assert_eq!(session_header(&Seen::of(&headers), None).ok(), Some("a"));
        headers.append(&MCP_SESSION_ID, HeaderValue::from_static("b"));
        assert_eq!(
            session_header(&Seen::of(&headers), None)
                .unwrap_err()
                .status(),
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
        assert_eq!(accepts(&Seen::of(&headers)), (true, true));
        headers.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        assert_eq!(accepts(&Seen::of(&headers)), (false, false));
    }
}
