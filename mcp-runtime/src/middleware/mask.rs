//! Error masking: internal error details stay in the server's log, and the client gets a fixed
//! message with a correlation id that finds them there.

use std::task::{Context as TaskContext, Poll};

use serde_json::json;
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};
use crate::context::BoxFuture;
use crate::protocol::{ErrorObject, error_codes};
use crate::tool::CallToolResult;

/// Replaces the message and data of internal errors (-32603, whatever produced them: a
/// resource's `ResourceError::Internal`, a task store's failure, a layer's) with "internal
/// error (reference `id`)" and `data: {"correlationId": id}`, and logs the original at `ERROR`
/// with the same `correlation_id`, so an operator finds what a client reports. Other errors
/// (-32602 and the like) tell the client what to fix and pass unchanged; add codes with
/// [`code`](Self::code). Tool errors (`isError: true`) are the tool's own words for the model
/// and pass too, unless [`tool_errors`](Self::tool_errors) masks them as well (the argument
/// errors the runtime writes for a model to correct itself included).
///
/// Put it outermost, so it sees what every other layer answers:
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::middleware::ErrorMaskingLayer;
///
/// let server = Server::new("demo", "1.0.0").layer(ErrorMaskingLayer::new());
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct ErrorMaskingLayer {
    codes: Vec<i64>,
    tool_errors: bool,
}

impl Default for ErrorMaskingLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorMaskingLayer {
    /// Masks internal errors (-32603).
    pub fn new() -> Self {
        Self {
            codes: vec![error_codes::INTERNAL_ERROR],
            tool_errors: false,
        }
    }

    /// Masks errors with `code` too.
    pub fn code(mut self, code: i64) -> Self {
        if !self.codes.contains(&code) {
            self.codes.push(code);
        }
        self
    }

    /// Masks tool errors (`isError: true` results) too: their text becomes "the tool failed
    /// (reference `id`)".
    pub fn tool_errors(mut self) -> Self {
        self.tool_errors = true;
        self
    }
}

impl<S> Layer<S> for ErrorMaskingLayer {
    type Service = ErrorMasking<S>;

    fn layer(&self, inner: S) -> ErrorMasking<S> {
        ErrorMasking {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of an [`ErrorMaskingLayer`].
#[derive(Debug, Clone)]
pub struct ErrorMasking<S> {
    inner: S,
    layer: ErrorMaskingLayer,
}

impl<S> Service<McpRequest> for ErrorMasking<S>
where
    S: Service<McpRequest, Response = McpResponse> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let method = request.method().to_owned();
        let future = self.inner.call(request);
        let layer = self.layer.clone();
        Box::pin(async move {
            let mut response = future.await?;
            layer.mask(&mut response, &method);
            Ok(response)
        })
    }
}

impl ErrorMaskingLayer {
    fn mask(&self, response: &mut McpResponse, method: &str) {
        if let Some(error) = response.as_error()
            && self.codes.contains(&error.code)
        {
            let reference = correlation_id();
            tracing::error!(
                correlation_id = %reference,
                code = error.code,
                message = %error.message,
                data = ?error.data,
                request_id = %response.id(),
                %method,
                "an error was masked for the client",
            );
            let masked = ErrorObject::new(
                error.code,
                format!("internal error (reference {reference})"),
            )
            .with_data(json!({ "correlationId": reference }));
            response.set_error(masked);
            return;
        }
        if self.tool_errors && response.is_tool_error() {
            let reference = correlation_id();
            let original = response.to_result();
            tracing::error!(
                correlation_id = %reference,
                result = ?original,
                request_id = %response.id(),
                %method,
                "a tool error was masked for the client",
            );
            let id = response.id().clone();
            let extensions = std::mem::take(response.extensions_mut());
            *response = McpResponse::tool_result(
                id,
                &CallToolResult::error(format!("the tool failed (reference {reference})")),
            );
            *response.extensions_mut() = extensions;
        }
    }
}

/// 16 random hex digits.
fn correlation_id() -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
