//! Streamable HTTP: each message a POST, answered with JSON or an SSE stream; in the handshake
//! era the `Mcp-Session-Id` the server assigns, the standalone GET stream, streams resumed with
//! `Last-Event-ID` where the server numbers its events, and DELETE on close; in 2026-07-28 the
//! standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) and no
//! session.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::task::AbortHandle;

use super::connection::{Core, Outbound, SendFuture, Transport, lock};
use super::error::ClientError;
use crate::protocol::{ProtocolVersion, RequestId};

/// How many times a request's SSE stream that ended before its answer is resumed.
const MAX_RESUMES: usize = 5;
/// The longest wait between two tries of the standalone stream.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How much of an HTTP error's body is quoted in the error.
const ERROR_BODY: usize = 512;

/// Where and how to reach a Streamable HTTP server.
#[derive(Debug, Clone)]
pub(crate) struct HttpTarget {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) bearer: Option<String>,
    pub(crate) connect_timeout: Duration,
    /// The Unix domain socket every connection goes through, instead of TCP.
    pub(crate) unix_socket: Option<std::path::PathBuf>,
}

struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    core: Weak<Core>,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<ProtocolVersion>>,
}

pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
    standalone: Mutex<Option<AbortHandle>>,
}

impl HttpTransport {
    pub(crate) fn new(core: &Arc<Core>, target: &HttpTarget) -> Result<Arc<Self>, ClientError> {
        let url = reqwest::Url::parse(&target.url)
            .map_err(|e| ClientError::Transport(format!("`{}` is not a URL: {e}", target.url)))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &target.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Transport(format!("header `{name}`: {e}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| ClientError::Transport(format!("header `{name}`: {e}")))?;
            headers.append(name, value);
        }
        if let Some(token) = &target.bearer {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                ClientError::Transport("the bearer token is not a header value".into())
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let mut http = reqwest::Client::builder().connect_timeout(target.connect_timeout);
        #[cfg(unix)]
        if let Some(path) = &target.unix_socket {
            http = http.unix_socket(path.as_path());
        }
        let http = http
            .build()
            .map_err(|e| ClientError::Transport(format!("the HTTP client: {e}")))?;
        Ok(Arc::new(Self {
            shared: Arc::new(Shared {
                http,
                url,
                headers,
                core: Arc::downgrade(core),
                session: Mutex::new(None),
                version: Mutex::new(None),
            }),
            standalone: Mutex::new(None),
        }))
    }

    /// Opens the standalone GET stream (handshake era), kept open, and reopened with
    /// `Last-Event-ID` and backoff, until the client closes or the server says it has none.
    fn open_standalone(&self) {
        let shared = Arc::clone(&self.shared);
        let task = tokio::spawn(async move { shared.standalone().await });
        if let Some(old) = lock(&self.standalone).replace(task.abort_handle()) {
            old.abort();
        }
    }
}

impl Shared {
    fn stateless(&self) -> bool {
        lock(&self.version).is_some_and(|v| !v.has_handshake())
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut request = self.http.request(method, self.url.clone());
        request = request.headers(self.headers.clone());
        if let Some(version) = *lock(&self.version) {
            request = request.header("mcp-protocol-version", version.as_str());
        }
        if let Some(session) = lock(&self.session).clone() {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    async fn post(
        &self,
        body: Vec<u8>,
        headers: &[(String, String)],
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self
            .request(reqwest::Method::POST)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = request.body(body).send().await.map_err(transport_error)?;
        self.keep_session(&response);
        Ok(response)
    }

    /// The session id the server assigned (on its answer to `initialize`).
    fn keep_session(&self, response: &reqwest::Response) {
        if let Some(id) = response.headers().get("mcp-session-id") {
            let mut session = lock(&self.session);
            if session.is_none() {
                *session = Some(id.clone());
            }
        }
    }

    fn core(&self) -> Result<Arc<Core>, ClientError> {
        self.core
            .upgrade()
            .ok_or_else(|| ClientError::Closed("the client is gone".into()))
    }

    /// What a POST's answer holds: JSON, an SSE stream, nothing (202), or an HTTP error.
    async fn read_answer(
        &self,
        response: reqwest::Response,
        id: Option<&RequestId>,
    ) -> Result<(), ClientError> {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
            return Err(ClientError::SessionExpired);
        }
        let core = self.core()?;
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status.is_success() && content_type.starts_with("text/event-stream") {
            let mut stream = EventStream::new(response, core.limits.max_message_size);
            return self.follow(&core, &mut stream, id).await;
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        let body = read_body(response, core.limits.max_message_size).await?;
        if content_type.starts_with("application/json") && !body.is_empty() {
            // An HTTP error with a JSON-RPC error body (400 with -32022, say) answers the
            // request like any other error does.
            core.receive_for(&body, id);
            if status.is_success() || id.is_none_or(|id| !core.is_pending(id)) {
                return Ok(());
            }
        }
        if status.is_success() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&body);
        let quoted: String = text.chars().take(ERROR_BODY).collect();
        Err(ClientError::Transport(format!("HTTP {status}: {quoted}")))
    }

    /// Reads an SSE stream to its end, and, if it ended before the answer to `id` and the
    /// server numbers its events, resumes it with `Last-Event-ID`.
    async fn follow(
        &self,
        core: &Arc<Core>,
        stream: &mut EventStream,
        id: Option<&RequestId>,
    ) -> Result<(), ClientError> {
        let mut resumes = 0;
        loop {
            while let Some(event) = stream.next().await {
                core.receive_for(&event, id);
            }
            let waiting = id.is_some_and(|id| core.is_pending(id));
            let Some(last) = stream.last_event_id() else {
                return Ok(());
            };
            if !waiting || resumes == MAX_RESUMES || self.stateless() {
                return Ok(());
            }
            resumes += 1;
            tokio::time::sleep(stream.retry()).await;
            let response = self
                .request(reqwest::Method::GET)
                .header(ACCEPT, "text/event-stream")
                .header("last-event-id", last)
                .send()
                .await
                .map_err(transport_error)?;
            if !response.status().is_success() {
                return Err(ClientError::Transport(format!(
                    "resuming the response stream: HTTP {}",
                    response.status()
                )));
            }
            stream.replace(response);
        }
    }

    async fn standalone(self: Arc<Self>) {
        let mut backoff = Duration::from_secs(1);
        let mut last: Option<String> = None;
        loop {
            let mut request = self
                .request(reqwest::Method::GET)
                .header(ACCEPT, "text/event-stream");
            if let Some(last) = &last {
                request = request.header("last-event-id", last.as_str());
            }
            match request.send().await {
                Ok(response) if response.status().is_success() => {
                    let Ok(core) = self.core() else { return };
                    let mut stream = EventStream::new(response, core.limits.max_message_size);
                    drop(core);
                    while let Some(event) = stream.next().await {
                        let Ok(core) = self.core() else { return };
                        if !event.is_empty() {
                            core.receive(&event);
                        }
                        backoff = Duration::from_secs(1);
                    }
                    last = stream.last_event_id().or(last);
                    backoff = backoff.max(stream.retry());
                }
                // 409: the server still counts the session's previous stream as open (it
                // notices a dropped connection a little late); 429: it has no room for
                // another stream just now. Both pass: tried again after the backoff.
                Ok(response)
                    if matches!(
                        response.status(),
                        StatusCode::CONFLICT | StatusCode::TOO_MANY_REQUESTS
                    ) =>
                {
                    tracing::debug!(status = %response.status(), "the standalone stream is busy; trying again");
                }
                Ok(response) if response.status().is_client_error() => {
                    // 405: this server offers no standalone stream; 404: the session is gone.
                    tracing::debug!(status = %response.status(), "no standalone SSE stream");
                    return;
                }
                Ok(response) => {
                    tracing::debug!(status = %response.status(), "the standalone stream failed");
                }
                Err(error) => tracing::debug!(%error, "the standalone stream failed"),
            }
            if self.core.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

impl Transport for HttpTransport {
    fn send(&self, message: Outbound) -> SendFuture<'_> {
        Box::pin(async move {
            let shared = &self.shared;
            match message {
                Outbound::Request { id, bytes, headers } => {
                    let response = shared.post(bytes, &headers).await?;
                    shared.read_answer(response, Some(&id)).await
                }
                Outbound::Message(bytes) => {
                    let response = shared.post(bytes, &[]).await?;
                    shared.read_answer(response, None).await
                }
            }
        })
    }

    fn answers_in_send(&self) -> bool {
        true
    }

    fn cancel(&self, notification: Vec<u8>, stateless: bool) {
        if stateless {
            return;
        }
        let shared = Arc::clone(&self.shared);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(response) = shared.post(notification, &[]).await {
                    let _ = shared.read_answer(response, None).await;
                }
            });
        }
    }

    fn set_protocol_version(&self, version: Option<ProtocolVersion>) {
        *lock(&self.shared.version) = version;
    }

    fn opened(&self) {
        self.open_standalone();
    }

    fn close(&self) -> SendFuture<'_> {
        Box::pin(async move {
            if let Some(task) = lock(&self.standalone).take() {
                task.abort();
            }
            if lock(&self.shared.session).is_some() {
                let delete = self.shared.request(reqwest::Method::DELETE).send();
                let _ = tokio::time::timeout(Duration::from_secs(5), delete).await;
                *lock(&self.shared.session) = None;
            }
            Ok(())
        })
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.standalone).take() {
            task.abort();
        }
        // The session is ended on the server's side too, when there is a runtime to do it.
        if lock(&self.shared.session).is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let delete = self.shared.request(reqwest::Method::DELETE).send();
            runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), delete).await;
            });
        }
    }
}

fn transport_error(error: reqwest::Error) -> ClientError {
    ClientError::Transport(error.to_string())
}

async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > max {
            return Err(ClientError::Transport(format!(
                "the server's answer is over the client's message size limit ({max} bytes)"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The events of an SSE response, read with [`SseParser`].
struct EventStream {
    response: Option<reqwest::Response>,
    parser: SseParser,
}

impl EventStream {
    fn new(response: reqwest::Response, max: usize) -> Self {
        Self {
            response: Some(response),
            parser: SseParser::new(max),
        }
    }

    /// Reads on from a resumed stream, keeping the last event id and retry.
    fn replace(&mut self, response: reqwest::Response) {
        self.response = Some(response);
        self.parser.restart();
    }

    fn last_event_id(&self) -> Option<String> {
        self.parser.last_event_id.clone()
    }

    fn retry(&self) -> Duration {
        self.parser.retry
    }

    /// The next event's data; `None` at the end of the stream (or when it fails).
    async fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event);
            }
            let Ok(Some(chunk)) = self.response.as_mut()?.chunk().await else {
                self.response = None;
                return None;
            };
            self.parser.push(&chunk);
        }
    }
}

/// A WHATWG `text/event-stream` parser fed bytes as they come: events' data (each at most
/// `max` bytes; a longer event is skipped, and so is a line that grows past that with no end),
/// the last event id and the retry delay. Lines end with `\n`, `\r\n` or `\r`.
struct SseParser {
    max: usize,
    buffer: Vec<u8>,
    data: Vec<u8>,
    skipping: bool,
    after_cr: bool,
    last_event_id: Option<String>,
    retry: Duration,
}

impl SseParser {
    fn new(max: usize) -> Self {
        Self {
            max,
            buffer: Vec::new(),
            data: Vec::new(),
            skipping: false,
            after_cr: false,
            last_event_id: None,
            retry: Duration::from_secs(1),
        }
    }

    /// A new stream: what was half read is dropped, the event id and retry kept.
    fn restart(&mut self) {
        self.buffer.clear();
        self.data.clear();
        self.skipping = false;
        self.after_cr = false;
    }

    fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next complete event in what was pushed.
    fn next_event(&mut self) -> Option<Vec<u8>> {
        loop {
            // The `\n` of a `\r\n` that the last line ended with is no line of its own.
            if self.after_cr && !self.buffer.is_empty() {
                self.after_cr = false;
                if self.buffer.first() == Some(&b'\n') {
                    self.buffer.remove(0);
                }
            }
            let Some(end) = self.buffer.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if self.buffer.len() > self.max.saturating_add(1024) {
                    // A line with no end in sight: the event it belongs to is skipped.
                    self.buffer.clear();
                    self.data.clear();
                    self.skipping = true;
                }
                return None;
            };
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            self.after_cr = line.pop() == Some(b'\r');
            if let Some(event) = self.line(&line) {
                return Some(event);
            }
        }
    }

    /// One line of the stream; an event's data when the line ends it.
    fn line(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        if line.is_empty() {
            // A blank line dispatches the event; an event with no data is none.
            let skipped = std::mem::replace(&mut self.skipping, false);
            let data = std::mem::take(&mut self.data);
            return (!skipped && !data.is_empty()).then_some(data);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" if !self.skipping => {
                if self.data.len() + value.len() + 1 > self.max {
                    tracing::warn!(
                        limit = self.max,
                        "an SSE event from the server is over the client's message size limit; skipped"
                    );
                    self.data.clear();
                    self.skipping = true;
                } else {
                    if !self.data.is_empty() {
                        self.data.push(b'\n');
                    }
                    self.data.extend_from_slice(value);
                }
            }
            b"id" if !value.contains(&0) => {
                self.last_event_id = String::from_utf8(value.to_vec()).ok();
            }
            b"retry" => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                    self.retry = Duration::from_millis(ms).min(MAX_BACKOFF);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]], max: usize) -> (Vec<String>, SseParser) {
        let mut parser = SseParser::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk);
            while let Some(event) = parser.next_event() {
                out.push(String::from_utf8(event).unwrap());
            }
        }
        (out, parser)
    }

    #[test]
    fn events_end_at_blank_lines_whatever_the_line_endings() {
        let (out, parser) = events(
            &[
                b"id: 1\r\ndata: a\r",
                b"\ndata: b\r\n\r\n: comment\n\nretry: 250\rdata:c\r\r",
            ],
            100,
        );
        assert_eq!(out, ["a\nb", "c"]);
        assert_eq!(parser.last_event_id.as_deref(), Some("1"));
        assert_eq!(parser.retry, Duration::from_millis(250));
    }

    #[test]
    fn an_event_with_no_data_is_none_and_an_id_with_nul_is_ignored() {
        let (out, parser) = events(&[b"id: 7\n\nid: x\0y\nevent: ping\n\n"], 100);
        assert!(out.is_empty());
        assert_eq!(parser.last_event_id.as_deref(), Some("7"));
    }

    #[test]
    fn oversized_events_and_endless_lines_are_skipped() {
        let long = vec![b'x'; 64];
        let mut stream = b"data: ".to_vec();
        stream.extend_from_slice(&long);
        stream.extend_from_slice(b"\n\ndata: ok\n\n");
        let (out, _) = events(&[&stream], 16);
        assert_eq!(out, ["ok"]);
        // A line that never ends is dropped as it grows, not kept.
        let mut parser = SseParser::new(16);
        for _ in 0..100 {
            parser.push(&[b'y'; 100]);
            assert!(parser.next_event().is_none());
            assert!(parser.buffer.len() <= 16 + 1024 + 100);
        }
        parser.push(b"\n\ndata: after\n\n");
        assert_eq!(parser.next_event().as_deref(), Some(&b"after"[..]));
    }
}
