//! From a request to its response: the era and lifecycle gate, then one function per method.
//!
//! Handshake-era requests are served under what `initialize` settled on the session; stateless
//! requests (2026-07-28) under their own envelope. Both reach the same method functions through a
//! [`Scope`], and differ only in how the result is shaped and how a handler's questions to the
//! client travel (a request on the session, or an `input_required` result).

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use serde_json::{Map, Value, json};

use super::Core;
use super::Sink;
use super::catch::panic_message;
use super::exchange::{self, Answer, McpRequest, Origin, RequestParts, Transport};
use super::link::Link;
use super::observe::{Arrival, Observation};
use super::pagination;
use super::registry::Registry;
use super::stateless::request_state::Binding;
use super::stateless::{self, Envelope, Inputs, Interrupt, Listener, StatelessPeer};
use crate::completion::{CompletionContext, Completions};
use crate::context::{CancelFlag, ClientInfo, Context, Extensions, Meta, Peer, RequestInfo};
use crate::handle::{Broadcast, ServerHandle};
use crate::prompt::GetPromptResult;
use crate::protocol::ResourceContents;
use crate::protocol::{
    ErrorObject, LoggingLevel, Method, Object, Outgoing, Params, ProtocolVersion, Request,
    RequestId, echo, encode_raw_response, encode_response,
};
use crate::resource::ResourceError;
#[cfg(feature = "tasks")]
use crate::tool::ToolDef;
use crate::tool::{CallToolResult, TaskSupport, ToolFuture, ToolReply};

/// Who a request is served for: the revision, the client, and for stateless requests their own
/// log level and input bookkeeping.
pub(crate) struct Scope {
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) stateless: Option<StatelessScope>,
}

pub(crate) struct StatelessScope {
    log_level: Option<LoggingLevel>,
    pub(crate) inputs: Arc<Inputs>,
}

/// Where a request came from and where its replies go.
pub(crate) struct Call<'a> {
    pub(crate) core: &'a Arc<Core>,
    /// One snapshot of what is served, for the whole request: changes made meanwhile do not
    /// reach it.
    registry: Arc<Registry>,
    /// The connection, for handshake-era requests (and stateless ones on stdio).
    pub(crate) link: Option<&'a Arc<dyn Link>>,
    pub(crate) scope: Scope,
    pub(crate) sink: &'a Sink,
    cancel: Arc<CancelFlag>,
    /// What middleware put in the request's extensions, for the handler's context.
    extensions: Extensions,
}

/// Every other request. `None` means no response is sent (the request was cancelled).
///
/// The future owns the connection and the sink, so a session can box it as it is, without a
/// future around it that would hold them beside it (and be copied with it as it starts).
pub(crate) fn handle_request(
    link: Arc<dyn Link>,
    request: Request,
    sink: Sink,
    cancel: Arc<CancelFlag>,
) -> Handled<impl Future<Output = Option<Outgoing>> + Send> {
    if stateless::is_stateless(&request.method, &request.params) {
        let admitted = stateless::read_envelope(&request.params)
            .and_then(|envelope| envelope.version().map(|_| envelope));
        return match admitted {
            Ok(envelope) => Handled::Stateless {
                future: Box::pin(async move {
                    handle_stateless(link.core(), Some(&link), envelope, request, &sink, cancel)
                        .await
                }),
            },
            Err(error) => Handled::Ready {
                reply: Some(Some(Outgoing::error(Some(&request.id), &error))),
            },
        };
    }
    let core = link.core();
    let guard = Guard::new(core, &request, false);
    let registry = core.registry();
    let version = link.negotiated().map(|(version, _)| version);
    let transport = link.transport();
    let (span, observation) = observe(
        core,
        &Arrival {
            request: &request,
            version,
            session: link.trace_name(),
            transport,
            peer: sink.peer(),
            registry: &registry,
        },
    );
    let context = otel_context(observation.as_deref());
    // The handler runs in the request's span, and its `tracing` events can reach its client.
    let log_peer = crate::trace::client_log_peer(|| Arc::clone(&link).peer(sink.clone()));
    // Through the middleware, boxed; else the route's own future, held in place (its larger
    // branches box what they run, so it stays small).
    let routed = if core.middleware.is_some() || registry.layered {
        let origin = Origin {
            core: Arc::clone(core),
            link: Some(link),
            sink,
            cancel: Arc::clone(&cancel),
            registry,
            envelope: None,
            version,
            transport,
            item_stage: 0,
            route: route_layered,
        };
        let request = McpRequest::new(request, origin);
        Routed::Layered {
            future: Box::pin(exchange::serve(request)),
        }
    } else {
        Routed::Direct {
            future: route(
                link,
                request,
                sink,
                Arc::clone(&cancel),
                registry,
                Extensions::new(),
            ),
        }
    };
    let routed = crate::trace::in_client_log(log_peer, routed);
    Handled::Served {
        future: crate::trace::in_span(guard.run(cancel, routed, observation), span, context),
    }
}

pin_project_lite::pin_project! {
    /// A request's future as [`handle_request`] makes it. The request is read and routed
    /// before, so the future holds no copy of it: only what runs, as small as it can be (a
    /// session boxes it to run it, and a box past 1 KiB is a slower allocation).
    #[project = HandledProjection]
    pub(crate) enum Handled<F> {
        /// In the handshake era: in the request's span, under its guard.
        Served { #[pin] future: F },
        /// A stateless request: boxed, as its future is the larger.
        Stateless { future: Pin<Box<dyn Future<Output = Option<Outgoing>> + Send>> },
        /// Refused before anything ran.
        Ready { reply: Option<Option<Outgoing>> },
    }
}

impl<F: Future<Output = Option<Outgoing>>> Future for Handled<F> {
    type Output = Option<Outgoing>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<Outgoing>> {
        match self.project() {
            HandledProjection::Served { future } => future.poll(cx),
            HandledProjection::Stateless { future } => future.as_mut().poll(cx),
            HandledProjection::Ready { reply } => Poll::Ready(reply.take().flatten()),
        }
    }
}

/// The span a request runs in, and its observation when the server has telemetry.
fn observe(core: &Core, arrival: &Arrival<'_>) -> (tracing::Span, Option<Box<dyn Observation>>) {
    match &core.telemetry {
        Some(observer) => {
            let (span, observation) = Arc::clone(observer).start(arrival);
            (span, Some(observation))
        }
        None => (
            crate::trace::request_span(arrival.request, arrival.session),
            None,
        ),
    }
}

/// The OpenTelemetry context the request's handler runs in (feature `otel`).
#[cfg(feature = "otel")]
fn otel_context(observation: Option<&dyn Observation>) -> crate::trace::OtelContext {
    observation.and_then(Observation::context)
}

#[cfg(not(feature = "otel"))]
fn otel_context(_: Option<&dyn Observation>) -> crate::trace::OtelContext {
    crate::trace::NoContext
}

/// A request's way to its answer, boxed: the future a guard runs.
type BoxedAnswer<'a> = std::pin::Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

pin_project_lite::pin_project! {
    /// The future a guard runs in the handshake era: the route's own, or the middleware's.
    #[project = RoutedProjection]
    enum Routed<'a, F> {
        Direct { #[pin] future: F },
        Layered { future: BoxedAnswer<'a> },
    }
}

impl<F: Future<Output = Answer>> Future for Routed<'_, F> {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Answer> {
        match self.project() {
            RoutedProjection::Direct { future } => future.poll(cx),
            RoutedProjection::Layered { future } => future.as_mut().poll(cx),
        }
    }
}

/// A request that came through the middleware layers, to its method: the [`Route`](exchange::Route)
/// each request carries.
fn route_layered(request: McpRequest) -> crate::context::BoxFuture<Answer> {
    Box::pin(route_unboxed(request))
}

async fn route_unboxed(request: McpRequest) -> Answer {
    let RequestParts {
        request,
        extensions,
        origin,
        ..
    } = *request.inner;
    let Origin {
        core,
        link,
        sink,
        cancel,
        registry,
        envelope,
        ..
    } = origin;
    match (envelope, link) {
        (Some(envelope), link) => {
            route_stateless(
                &core,
                link.as_ref(),
                envelope,
                request,
                &sink,
                cancel,
                registry,
                extensions,
            )
            .await
        }
        (None, Some(link)) => route(link, request, sink, cancel, registry, extensions).await,
        // Handshake-era requests always have their connection.
        (None, None) => Answer::error(Some(&request.id), ErrorObject::internal("internal error")),
    }
}

/// A stateless (2026-07-28) request whose envelope was read and whose version is supported; on
/// HTTP the standard headers were checked too. (An `async` block: see [`route`].)
#[allow(clippy::manual_async_fn)]
pub(crate) fn handle_stateless<'a>(
    core: &'a Arc<Core>,
    link: Option<&'a Arc<dyn Link>>,
    envelope: Envelope,
    request: Request,
    sink: &'a Sink,
    cancel: Arc<CancelFlag>,
) -> impl Future<Output = Option<Outgoing>> + Send + 'a {
    async move {
        let guard = Guard::new(core, &request, true);
        // As in `handle_request`: the request's span, and `tracing` events to its client.
        let log_level = envelope.log_level;
        let peer = || -> Arc<dyn Peer> {
            Arc::new(StatelessPeer {
                sink: sink.clone(),
                log_level,
                inputs: Arc::default(),
            })
        };
        let registry = core.registry();
        let transport = link.map_or(Transport::StreamableHttp, |link| link.transport());
        let (span, observation) = observe(
            core,
            &Arrival {
                request: &request,
                version: envelope.version().ok(),
                session: link.and_then(|l| l.trace_name()),
                transport,
                peer: sink.peer(),
                registry: &registry,
            },
        );
        let routed: BoxedAnswer<'_> = if core.middleware.is_some() || registry.layered {
            let origin = Origin {
                core: Arc::clone(core),
                link: link.cloned(),
                sink: sink.clone(),
                cancel: Arc::clone(&cancel),
                registry,
                version: envelope.version().ok(),
                envelope: Some(envelope),
                transport,
                item_stage: 0,
                route: route_layered,
            };
            let request = McpRequest::new(request, origin);
            Box::pin(exchange::serve(request))
        } else {
            Box::pin(route_stateless(
                core,
                link,
                envelope,
                request,
                sink,
                Arc::clone(&cancel),
                registry,
                Extensions::new(),
            ))
        };
        let routed = crate::trace::with_client_log(peer, routed);
        let context = otel_context(observation.as_deref());
        crate::trace::in_span(guard.run(cancel, routed, observation), span, context).await
    }
}

/// What answering a request needs when its handler panics or runs past the handler timeout,
/// taken before the request moves into its handler.
struct Guard {
    id: RequestId,
    /// The limit, and the tool's name for a `tools/call`.
    timeout: Option<(std::time::Duration, Option<String>)>,
    /// For a stateless request under a handler timeout: the server, whose result stamps a
    /// timed-out tool's result carries.
    stamps: Option<Arc<Core>>,
}

impl Guard {
    fn new(core: &Arc<Core>, request: &Request, stateless: bool) -> Self {
        let timeout = core.options.handler_timeout.map(|limit| {
            let tool = match (request.method.as_ref(), request.params.get("name")) {
                ("tools/call", Some(Value::String(name))) => Some(name.clone()),
                _ => None,
            };
            (limit, tool)
        });
        let stamps = (stateless && timeout.is_some()).then(|| Arc::clone(core));
        Self {
            id: request.id.clone(),
            timeout,
            stamps,
        }
    }

    /// Runs the routed request under the guard (see [`Guarded`]).
    fn run<F: Future<Output = Answer>>(
        self,
        cancel: Arc<CancelFlag>,
        routed: F,
        observation: Option<Box<dyn Observation>>,
    ) -> Guarded<F> {
        Guarded {
            routed,
            started: None,
            deadline: None,
            guard: self,
            cancel,
            observation,
        }
    }

    /// The answer of a handler stopped at the handler timeout: a tool error (`tools/call`) or
    /// -32603.
    fn timed_out(&self, cancel: &CancelFlag, limit: std::time::Duration) -> Answer {
        let id = &self.id;
        // Dropping the future stops the handler (it is dropped as the answer goes out); work
        // it handed to other tasks sees the flag.
        cancel.cancel();
        tracing::warn!(request_id = %id, ?limit, "a request handler timed out");
        let message = format!("timed out after {limit:?}");
        match self.timeout.as_ref().and_then(|(_, tool)| tool.as_deref()) {
            Some(tool) => {
                let result = CallToolResult::error(format!("tool `{tool}` {message}"));
                match result_value(&result) {
                    Ok(mut value) => {
                        if let Some(core) = &self.stamps {
                            value = core.stamps().for_method("tools/call").apply(value);
                        }
                        Answer::tool(encode_response(id, &value), true)
                    }
                    Err(error) => Answer::error(Some(id), error),
                }
            }
            None => Answer::error(Some(id), ErrorObject::internal(message)),
        }
    }
}

pin_project_lite::pin_project! {
    /// A routed request under its [`Guard`]: a panic becomes -32603; past the handler timeout
    /// the handler is stopped and answers a tool error (`tools/call`) or -32603; the request's
    /// observation hears how it ended. (Written out rather than as `async fn`s: every request's
    /// future holds this one, and an `async fn` keeps its arguments and locals side by side,
    /// some 500 bytes more to allocate and copy for each request.)
    struct Guarded<F> {
        #[pin]
        routed: F,
        // Under a handler timeout: when the handler was first polled, and once it has had to
        // wait, the sleep to that instant plus the limit (boxed: most handlers never wait, and
        // a `Sleep` held in place would make every request's future 100 bytes larger).
        started: Option<tokio::time::Instant>,
        deadline: Option<Pin<Box<tokio::time::Sleep>>>,
        guard: Guard,
        cancel: Arc<CancelFlag>,
        observation: Option<Box<dyn Observation>>,
    }
}

impl<F: Future<Output = Answer>> Future for Guarded<F> {
    type Output = Option<Outgoing>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<Outgoing>> {
        let this = self.project();
        let limit = this.guard.timeout.as_ref().map(|(limit, _)| *limit);
        if limit.is_some() && this.started.is_none() {
            *this.started = Some(tokio::time::Instant::now());
        }
        let routed = this.routed;
        let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| routed.poll(cx))) {
            Ok(Poll::Ready(answer)) => answer,
            // As `tokio::time::timeout`: the handler first, then its deadline.
            Ok(Poll::Pending) => {
                let Some((limit, started)) = limit.zip(*this.started) else {
                    return Poll::Pending;
                };
                let deadline = this
                    .deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(started + limit)));
                if deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.guard.timed_out(this.cancel, limit)
            }
            Err(panic) => {
                let id = &this.guard.id;
                tracing::error!(request_id = %id, panic = panic_message(&*panic), "a request handler panicked");
                Answer::error(Some(id), ErrorObject::internal("internal error"))
            }
        };
        if let Some(observation) = this.observation.take() {
            observation.finish(&answer.status);
        }
        // Answered once (it is awaited once): the id is taken, not copied.
        let id = std::mem::replace(&mut this.guard.id, RequestId::Number(0));
        Poll::Ready(Some(Outgoing::refusal(id, answer.bytes, answer.refusal)))
    }
}

#[allow(clippy::too_many_arguments, clippy::manual_async_fn)]
fn route_stateless<'a>(
    core: &'a Arc<Core>,
    link: Option<&'a Arc<dyn Link>>,
    envelope: Envelope,
    request: Request,
    sink: &'a Sink,
    cancel: Arc<CancelFlag>,
    registry: Arc<Registry>,
    extensions: Extensions,
) -> impl Future<Output = Answer> + Send + 'a {
    async move {
        let id = request.id.clone();
        let method = request.method.clone();
        let Some(kind) = Method::parse(&method).filter(|m| m.in_stateless_era()) else {
            return Answer::error(Some(&id), ErrorObject::method_not_found(&method));
        };
        let Ok(version) = envelope.version() else {
            return Answer::error(
                Some(&id),
                stateless::unsupported_version(&envelope.requested),
            );
        };
        let call = Call {
            core,
            registry,
            extensions,
            link,
            scope: Scope {
                version,
                client: envelope.client,
                stateless: Some(StatelessScope {
                    log_level: envelope.log_level,
                    inputs: Arc::default(),
                }),
            },
            sink,
            cancel,
        };
        let outcome = match kind {
            Method::ServerDiscover => Ok(Reply::Value(stateless::discover(
                &core.capabilities,
                core.instructions.as_deref(),
            ))),
            Method::SubscriptionsListen => listen(&call, &request).await,
            #[cfg(feature = "tasks")]
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                call.core.tasks.method(&call, kind, &request).await
            }
            _ => serve(&call, kind, request).await,
        };
        let stamp = |method: &str| core.stamps().for_method(method);
        match outcome {
            Ok(Reply::Value(value)) => {
                Answer::ok(encode_response(&id, &stamp(&method).apply(value)))
            }
            Ok(Reply::Tool(result)) => {
                let result = result.into_result();
                match result_value(&result) {
                    Ok(value) => Answer::tool(
                        encode_response(&id, &stamp(&method).apply(value)),
                        result.is_error,
                    ),
                    Err(error) => Answer::error(Some(&id), error),
                }
            }
            Ok(Reply::Raw(raw)) => {
                Answer::ok(encode_raw_response(&id, &stamp(&method).apply_raw(&raw)))
            }
            // Never cached: no hints.
            Ok(Reply::InputRequired(value) | Reply::Task(value)) => {
                Answer::incomplete(encode_response(&id, &stamp("").apply(value)))
            }
            Err(error) => Answer::error(Some(&id), error),
        }
    }
}

/// `subscriptions/listen`: the acknowledgement, then the notifications asked for, until the
/// client ends it (cancellation, or closing the HTTP stream) or the server shuts down, which
/// ends it with a final result.
async fn listen(call: &Call<'_>, request: &Request) -> Result<Reply, ErrorObject> {
    let (listener, honored) = Listener::new(
        &request.id,
        &request.params,
        &call.core.capabilities,
        call.sink.clone(),
        (
            call.core.options.max_subscriptions,
            call.core.options.max_subscription_uri,
        ),
        call.core.subscription_bytes.account(call.sink.client()),
    )?;
    let listener = Arc::new(listener);
    #[cfg(feature = "tasks")]
    let (honored, task_ids) = {
        let mut honored = honored;
        let task_ids = call.core.tasks.listened(call, request)?;
        if let (Some(ids), Value::Object(honored)) = (&task_ids, &mut honored) {
            honored.insert("taskIds".into(), json!(ids));
        }
        (honored, task_ids)
    };
    call.core.listeners.add(&listener, honored);
    // An attachment (the gateway) hears of the URIs, and, however the listen ends, of their end.
    for uri in listener.uris() {
        call.core.subscription_changed(uri, true);
    }
    let _given_up = GiveUp(call.core, Arc::clone(&listener));
    // After the acknowledgement, which comes first.
    #[cfg(feature = "tasks")]
    let _watching = call
        .core
        .tasks
        .watch(call, request, task_ids.unwrap_or_default());
    call.core.closed(call.link.map(|l| l.closing())).await;
    Ok(Reply::Value(listener.teardown()))
}

/// Tells the attachment a listen's URIs are given up, when the listen ends however it ends.
struct GiveUp<'a>(&'a Core, Arc<Listener>);

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        for uri in self.1.uris() {
            self.0.subscription_changed(uri, false);
        }
    }
}

/// A handshake-era request in its session. (An `async` block, not an `async fn`: an
/// `async fn`'s future holds its arguments twice, as its own and as its body's, and every
/// request's future is moved as it starts.)
#[allow(clippy::manual_async_fn)]
fn route(
    link: Arc<dyn Link>,
    request: Request,
    sink: Sink,
    cancel: Arc<CancelFlag>,
    registry: Arc<Registry>,
    extensions: Extensions,
) -> impl Future<Output = Answer> {
    async move {
        let link = &link;
        let sink = &sink;
        let Some(method) = Method::parse(&request.method).filter(|m| m.in_handshake_era()) else {
            // Unknown in the handshake era, `subscriptions/listen` included.
            return Answer::error(
                Some(&request.id),
                ErrorObject::method_not_found(&request.method),
            );
        };
        if matches!(method, Method::Ping | Method::Initialize) {
            return Answer::ok(link.answer_handshake(&request));
        }
        let Some((version, client)) = link.negotiated() else {
            let error = ErrorObject::invalid_request(format!(
                "the session is not initialized: send `initialize` before `{}`",
                echo(&request.method)
            ));
            return Answer::error(Some(&request.id), error);
        };
        if !link.initialized() {
            // Lenient on purpose: on HTTP a request can overtake `notifications/initialized`.
            tracing::trace!(method = %echo(&request.method), "request before notifications/initialized");
        }
        let id = request.id.clone();
        let call = Call {
            core: link.core(),
            registry,
            extensions,
            link: Some(link),
            scope: Scope {
                version,
                client,
                stateless: None,
            },
            sink,
            cancel,
        };
        let outcome = match method {
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe
                if !call.registry.resources.is_empty() =>
            {
                link.set_subscription(&request).map(Reply::Value)
            }
            Method::LoggingSetLevel => link.set_log_level(&request).map(Reply::Value),
            #[cfg(feature = "tasks")]
            Method::TasksGet | Method::TasksResult | Method::TasksList | Method::TasksCancel
                if version == ProtocolVersion::V2025_11_25 =>
            {
                call.core.tasks.legacy_method(&call, method, &request).await
            }
            // Most requests are tool calls: polled without `serve`'s frame around them, which
            // keeps the deepest point of a request's stack a few KB shallower, and in place.
            // The rest are boxed, so that this future (which a session boxes to run) stays the
            // size of a tool call's.
            Method::ToolsCall if !call.registry.tools.is_empty() => call_tool(&call, request).await,
            _ => Box::pin(serve(&call, method, request)).await,
        };
        match outcome {
            Ok(Reply::Raw(raw)) => Answer::ok(encode_raw_response(&id, &raw)),
            Ok(Reply::Tool(result)) => Answer::tool(
                crate::tool::encode_tool_response(&id, &result),
                result.is_error(),
            ),
            Ok(Reply::Value(value)) => Answer::ok(encode_response(&id, &value)),
            Ok(Reply::InputRequired(value) | Reply::Task(value)) => {
                Answer::incomplete(encode_response(&id, &value))
            }
            Err(error) => Answer::error(Some(&id), error),
        }
    }
}

/// The methods both eras share. (An `async` block: see [`route`].)
#[allow(clippy::manual_async_fn)]
fn serve<'c>(
    call: &'c Call<'_>,
    method: Method,
    request: Request,
) -> impl Future<Output = Result<Reply, ErrorObject>> + 'c {
    async move {
        let core = call.core;
        let registry = &*call.registry;
        let version = call.scope.version;
        // Lists filtered by the caller's scopes (`OAuth::hide_unauthorized`): not cached.
        if let Some(keep) = hiding(call) {
            match method {
                Method::ToolsList if !registry.tools.is_empty() => {
                    return pagination::offset(&request.params)
                        .and_then(|o| registry.tools.list_where(version, o, &keep))
                        .map(Reply::Raw);
                }
                Method::PromptsList if !registry.prompts.is_empty() => {
                    return pagination::offset(&request.params)
                        .and_then(|o| registry.prompts.list_where(version, o, &keep))
                        .map(Reply::Raw);
                }
                Method::ResourcesList if !registry.resources.is_empty() => {
                    let offset = pagination::offset(&request.params)?;
                    return registry
                        .resources
                        .list_where(version, offset, &keep)
                        .await
                        .map(Reply::text);
                }
                Method::ResourcesTemplatesList if !registry.resources.is_empty() => {
                    return pagination::offset(&request.params)
                        .and_then(|o| registry.resources.list_templates_where(version, o, &keep))
                        .map(Reply::text);
                }
                _ => {}
            }
        }
        match method {
            Method::ToolsList if !registry.tools.is_empty() => pagination::offset(&request.params)
                .and_then(|o| registry.tools.list(version, o))
                .map(Reply::Raw),
            Method::ToolsCall if !registry.tools.is_empty() => call_tool(call, request).await,
            Method::ResourcesList if !registry.resources.is_empty() => {
                match pagination::offset(&request.params) {
                    Ok(offset) => registry
                        .resources
                        .list(version, offset)
                        .await
                        .map(Reply::text),
                    Err(error) => Err(error),
                }
            }
            Method::ResourcesTemplatesList if !registry.resources.is_empty() => {
                pagination::offset(&request.params)
                    .and_then(|o| registry.resources.list_templates(version, o))
                    .map(Reply::text)
            }
            Method::ResourcesRead if !registry.resources.is_empty() => {
                read_resource(call, request).await
            }
            Method::PromptsList if !registry.prompts.is_empty() => {
                pagination::offset(&request.params)
                    .and_then(|o| registry.prompts.list(version, o))
                    .map(Reply::Raw)
            }
            Method::PromptsGet if !registry.prompts.is_empty() => get_prompt(call, request).await,
            Method::CompletionComplete if core.capabilities.completions.is_some() => {
                complete(registry, &request).await.map(Reply::Value)
            }
            #[cfg(feature = "skills")]
            Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead
                if !core.skills.is_empty() =>
            {
                skill_request(core, method, &request)
            }
            _ => Err(ErrorObject::method_not_found(&request.method)),
        }
    }
}

/// `skills/list`, `skills/get` and `resources/directory/read` (SEP-2640).
#[cfg(feature = "skills")]
fn skill_request(core: &Core, method: Method, request: &Request) -> Result<Reply, ErrorObject> {
    let skills = &core.skills;
    let page_size = core.options.page_size;
    let uri = || match request.params.get("uri") {
        Some(Value::String(uri)) => Ok(uri.as_str()),
        Some(_) => Err(ErrorObject::invalid_params("`uri` must be a string")),
        None => Err(ErrorObject::invalid_params(format!(
            "`{}` needs `uri`",
            request.method
        ))),
    };
    match method {
        Method::SkillsList => pagination::offset(&request.params)
            .and_then(|o| pagination::page("skills", skills.entries(), o, page_size, 0))
            .map(Reply::text),
        Method::SkillsGet => {
            let uri = uri()?;
            match skills.get(uri) {
                Some(entry) => Ok(Reply::Value(json!({ "skill": entry }))),
                None => Err(ErrorObject::invalid_params(format!(
                    "no skill is served at `{}`",
                    echo(uri)
                ))
                .with_data(json!({ "uri": echo(uri) }))),
            }
        }
        _ => {
            let uri = uri()?;
            let Some(children) = skills.children(uri.trim_end_matches('/')) else {
                return Err(ErrorObject::invalid_params(format!(
                    "`{}` is not a directory this server serves",
                    echo(uri)
                ))
                .with_data(json!({ "uri": echo(uri) })));
            };
            pagination::offset(&request.params)
                .and_then(|o| pagination::page("resources", children, o, page_size, 0))
                .map(Reply::text)
        }
    }
}

/// A result: JSON to serialize, JSON text already serialized, or (stateless era only) the
/// questions a handler needs answered before it can finish.
pub(crate) enum Reply {
    Value(Value),
    Raw(Arc<str>),
    /// A tool's result, serialized straight into the response in the handshake era.
    Tool(ToolReply),
    InputRequired(Value),
    /// A `CreateTaskResult`: no cache hints.
    #[cfg_attr(not(feature = "tasks"), allow(dead_code))]
    Task(Value),
}

impl Reply {
    fn text(text: String) -> Self {
        Self::Raw(Arc::from(text))
    }

    fn value<T: serde::Serialize>(value: &T) -> Result<Self, ErrorObject> {
        result_value(value).map(Self::Value)
    }
}

/// A result as JSON, or, when it does not serialize, the internal error sent instead (logged):
/// never a `null` result.
fn result_value<T: serde::Serialize + ?Sized>(result: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|error| {
        tracing::error!(%error, "a result could not be serialized");
        ErrorObject::internal("the result could not be serialized")
    })
}

/// When lists hide what the caller may not use: the test an item's own scopes must pass.
fn hiding<'c>(
    call: &'c Call<'_>,
) -> Option<impl Fn(&[std::borrow::Cow<'static, str>]) -> bool + Sync + use<'c>> {
    let principal = call.sink.principal()?;
    #[cfg(feature = "oauth")]
    let hide = call
        .core
        .options
        .http
        .auth
        .as_ref()
        .is_some_and(|auth| auth.hide_unauthorized);
    #[cfg(not(feature = "oauth"))]
    let hide = false;
    if !hide {
        return None;
    }
    let server = &call.core.options.scopes;
    Some(move |item: &[std::borrow::Cow<'static, str>]| {
        server.iter().all(|s| principal.has_scope(s)) && item.iter().all(|s| principal.has_scope(s))
    })
}

/// Checks the caller's scopes (HTTP with OAuth) against the server's and the item's, before
/// its handler runs. Requests without a principal (stdio, HTTP without OAuth) pass.
fn authorize(call: &Call<'_>, item: &[std::borrow::Cow<'static, str>]) -> Result<(), ErrorObject> {
    let Some(principal) = call.sink.principal() else {
        return Ok(());
    };
    let mut scopes = call.core.options.scopes.clone();
    scopes.extend(item.iter().map(|s| s.to_string()));
    super::auth::check(principal, &scopes)
}

fn context(call: &Call<'_>, id: RequestId, meta: Meta) -> Context {
    context_with(call, id, meta, peer_of(call), Arc::clone(&call.cancel))
}

pub(crate) fn context_with(
    call: &Call<'_>,
    id: RequestId,
    meta: Meta,
    peer: Arc<dyn Peer>,
    cancelled: Arc<CancelFlag>,
) -> Context {
    let scope = &call.scope;
    Context::new(RequestInfo {
        id,
        meta,
        version: scope.version,
        client: Arc::clone(&scope.client),
        peer,
        server: ServerHandle::new(Arc::clone(call.core) as Arc<dyn Broadcast>),
        cancelled,
        principal: call.sink.principal().cloned(),
        address: call.sink.peer(),
        last_progress: AtomicU64::new(f64::NEG_INFINITY.to_bits()),
        extensions: call.extensions.clone(),
    })
}

/// The request's way back to its client.
pub(crate) fn peer_of(call: &Call<'_>) -> Arc<dyn Peer> {
    let scope = &call.scope;
    match (&scope.stateless, call.link) {
        (Some(stateless), _) => Arc::new(StatelessPeer {
            sink: call.sink.clone(),
            log_level: stateless.log_level,
            inputs: Arc::clone(&stateless.inputs),
        }),
        (None, Some(link)) => Arc::clone(link).peer(call.sink.clone()),
        // Handshake-era requests always have their connection.
        (None, None) => Arc::new(StatelessPeer {
            sink: call.sink.clone(),
            log_level: None,
            inputs: Arc::default(),
        }),
    }
}

fn take_meta(params: &mut Params) -> Meta {
    match params.remove("_meta") {
        Some(Value::Object(meta)) => Meta(meta),
        _ => Meta::default(),
    }
}

fn string_param(params: &mut Params, key: &str, method: &str) -> Result<String, ErrorObject> {
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
        format!("resource not found: `{}`", echo(uri)),
    )
    .with_data(json!({ "uri": echo(uri) }))
}

/// On a stateless retry, checks the echoed `requestState` and hands its answers and the new
/// `inputResponses` to the handler's input bookkeeping.
fn take_inputs(call: &Call<'_>, params: &mut Params, binding: &Binding) -> Result<(), ErrorObject> {
    let state = params.remove("requestState");
    let responses = params.remove("inputResponses");
    let Some(stateless) = &call.scope.stateless else {
        return Ok(());
    };
    match state {
        None | Some(Value::Null) => {}
        Some(Value::String(token)) => {
            let answers = call.core.request_state().open(&token, binding)?;
            stateless.inputs.answer(answers);
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "`requestState` must be a string",
            ));
        }
    }
    match responses {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(responses)) => {
            stateless.inputs.answer(responses);
            Ok(())
        }
        Some(_) => Err(ErrorObject::invalid_params(
            "`inputResponses` must be an object",
        )),
    }
}

/// What a handler that was stopped for input becomes: the input-required result with a sealed
/// state, or -32021.
pub(crate) fn interrupted(
    call: &Call<'_>,
    binding: &Binding,
    interrupt: Interrupt,
) -> Result<Reply, ErrorObject> {
    match interrupt {
        Interrupt::MissingCapability(required) => Err(stateless::missing_capability(required)),
        Interrupt::InputRequired(requests) => {
            let answers = call
                .scope
                .stateless
                .as_ref()
                .map(|s| s.inputs.answers())
                .unwrap_or_default();
            let state = call.core.request_state().seal(binding, answers);
            Ok(Reply::InputRequired(stateless::input_required(
                requests, state,
            )))
        }
    }
}

/// `resources/read`. Reading the request is [`prepare_read`]'s, outside this future (see
/// [`call_tool`]).
async fn read_resource(call: &Call<'_>, request: Request) -> Result<Reply, ErrorObject> {
    let (invocation, uri, binding) = prepare_read(call, request)?;
    let outcome = match run(&call.scope, invocation).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(interrupt)) => return interrupted(call, &binding, interrupt),
        Err(panic) => {
            tracing::error!(uri = %echo(&uri), panic = panic_message(&*panic), "a resource handler panicked");
            Err(ResourceError::Internal("internal error".to_owned()))
        }
    };
    match outcome {
        Ok(contents) => Ok(Reply::Value(json!({ "contents": contents }))),
        Err(ResourceError::NotFound) => Err(not_found(call.scope.version, &uri)),
        Err(ResourceError::InvalidParams(message)) => Err(ErrorObject::invalid_params(message)),
        Err(ResourceError::Internal(message)) => Err(ErrorObject::internal(message)),
    }
}

/// A `resources/read` read and checked: the handler's future, the URI and the binding.
type ResourceRead = (
    crate::context::BoxFuture<Result<Vec<ResourceContents>, ResourceError>>,
    String,
    Binding,
);

fn prepare_read(call: &Call<'_>, request: Request) -> Result<ResourceRead, ErrorObject> {
    let Request { id, mut params, .. } = request;
    let uri = string_param(&mut params, "uri", "resources/read")?;
    let binding = Binding::new("resources/read", &uri, &Map::new())
        .for_principal(call.sink.principal().map(|p| &**p));
    take_inputs(call, &mut params, &binding)?;
    let meta = take_meta(&mut params);
    let version = call.scope.version;
    let Some((def, bindings)) = call.registry.resources.resolve(&uri) else {
        return Err(not_found(version, &uri));
    };
    authorize(call, &def.metadata.metadata.scopes)?;
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
    let invocation = def.call(uri.clone(), bindings, context(call, id, meta));
    Ok((invocation, uri, binding))
}

/// `prompts/get`. Reading the request is [`prepare_prompt`]'s, outside this future (see
/// [`call_tool`]).
async fn get_prompt(call: &Call<'_>, request: Request) -> Result<Reply, ErrorObject> {
    let (invocation, name, binding) = prepare_prompt(call, request)?;
    match run(&call.scope, invocation).await {
        Ok(Ok(outcome)) => {
            outcome.and_then(|result| Reply::value(&result.for_version(call.scope.version)))
        }
        Ok(Err(interrupt)) => interrupted(call, &binding, interrupt),
        Err(panic) => {
            tracing::error!(prompt = %name, panic = panic_message(&*panic), "a prompt handler panicked");
            Err(ErrorObject::internal("internal error"))
        }
    }
}

/// A `prompts/get` read and checked: the handler's future, the prompt's name and the binding.
type PromptGet = (
    crate::context::BoxFuture<Result<GetPromptResult, ErrorObject>>,
    String,
    Binding,
);

fn prepare_prompt(call: &Call<'_>, request: Request) -> Result<PromptGet, ErrorObject> {
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
    let binding = Binding::new("prompts/get", &name, &arguments)
        .for_principal(call.sink.principal().map(|p| &**p));
    take_inputs(call, &mut params, &binding)?;
    let meta = take_meta(&mut params);
    let Some((prompt, prompt_name)) = call.registry.prompts.get(&name) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown prompt `{}`",
            echo(&name)
        )));
    };
    authorize(call, &prompt.metadata.scopes)?;
    let invocation = prompt.call(Arc::clone(prompt_name), arguments, context(call, id, meta));
    Ok((invocation, name, binding))
}

async fn complete(registry: &Registry, request: &Request) -> Result<Value, ErrorObject> {
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
    let forward = |forward: &crate::completion::ForwardCompleter| {
        let given = match params.get("context").and_then(|c| c.get("arguments")) {
            Some(Value::Object(given)) => given.clone(),
            _ => Map::new(),
        };
        forward(name.to_owned(), prefix.to_owned(), given)
    };
    let completer = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt = reference
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            // A proxied prompt completes at its upstream.
            if let Some(f) = registry
                .prompts
                .get(prompt)
                .and_then(|(p, _)| p.forward_completion.as_ref())
            {
                let completions = forward(f).await?;
                return Ok(json!({ "completion": completions.capped() }));
            }
            registry.prompts.completer(prompt, name)?
        }
        Some("ref/resource") => {
            let template = reference
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Some(f) = registry
                .resources
                .template(template)
                .and_then(|t| t.forward_completion.as_ref())
            {
                let completions = forward(f).await?;
                return Ok(json!({ "completion": completions.capped() }));
            }
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

/// A `tools/call` read and checked: the task that runs it, or the tool's own future with the
/// little [`call_tool`] keeps for the answer.
enum ToolRun<'c> {
    // (Only ever made with the `tasks` feature.)
    #[cfg_attr(not(feature = "tasks"), allow(dead_code))]
    Task(super::store::BoxFuture<'c, Result<Reply, ErrorObject>>),
    Now(RunNow),
}

struct RunNow {
    invocation: ToolFuture,
    name: String,
    binding: Option<Binding>,
}

/// `tools/call`. The request is read before the future is made (by [`prepare_tool_call`]):
/// neither it nor what is read from it is kept while the tool runs, so every request's future
/// stays small.
fn call_tool<'c>(call: &'c Call<'c>, request: Request) -> CallingTool<'c> {
    match prepare_tool_call(call, request) {
        Ok(ToolRun::Now(now)) => CallingTool::Now {
            call,
            inputs: call.scope.stateless.as_ref().map(|s| Arc::clone(&s.inputs)),
            now,
        },
        Ok(ToolRun::Task(task)) => CallingTool::Task(task),
        Err(error) => CallingTool::Refused(Some(error)),
    }
}

/// A tool call's future: the tool's own, or the task that runs it, or the refusal. Written out
/// rather than as `async fn`s: a tool call is most requests, and each `async` layer kept its
/// arguments beside its locals: as `async` blocks, its future took 424 bytes; this one takes 128.
enum CallingTool<'c> {
    /// The tool runs in the request: a panic becomes a tool error, and in 2026-07-28 a wait
    /// for input the client must give ends the call with the request for it.
    Now {
        call: &'c Call<'c>,
        now: RunNow,
        /// The request's inputs (2026-07-28), watched while the tool waits.
        inputs: Option<Arc<Inputs>>,
    },
    Task(super::store::BoxFuture<'c, Result<Reply, ErrorObject>>),
    Refused(Option<ErrorObject>),
}

impl Future for CallingTool<'_> {
    type Output = Result<Reply, ErrorObject>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let (call, now, inputs) = match self.get_mut() {
            CallingTool::Now { call, now, inputs } => (*call, now, inputs),
            CallingTool::Task(task) => return task.as_mut().poll(cx),
            CallingTool::Refused(error) => {
                // Polled once (it is awaited once).
                return Poll::Ready(Err(error
                    .take()
                    .unwrap_or_else(|| ErrorObject::internal("internal error"))));
            }
        };
        if let Some(inputs) = inputs {
            inputs.watch(cx.waker());
        }
        let invocation = &mut now.invocation;
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(invocation).poll(cx)));
        let result = match polled {
            Ok(Poll::Ready(Ok(result))) => result,
            // A relayed tool's upstream answered with an error: so does this server.
            Ok(Poll::Ready(Err(error))) => return Poll::Ready(Err(error)),
            Ok(Poll::Pending) => {
                let Some(interrupt) = inputs.as_ref().and_then(|i| i.interrupt()) else {
                    return Poll::Pending;
                };
                let binding = now.binding.take().unwrap_or_else(|| {
                    Binding::new("tools/call", &now.name, &Map::new())
                        .for_principal(call.sink.principal().map(|p| &**p))
                });
                return Poll::Ready(interrupted(call, &binding, interrupt));
            }
            Err(panic) => {
                let name = &now.name;
                tracing::error!(tool = %name, panic = panic_message(&*panic), "a tool panicked");
                ToolReply::Result(CallToolResult::error(format!(
                    "tool `{name}` failed unexpectedly"
                )))
            }
        };
        Poll::Ready(Ok(Reply::Tool(result.for_version(call.scope.version))))
    }
}

fn prepare_tool_call<'c>(call: &'c Call<'c>, request: Request) -> Result<ToolRun<'c>, ErrorObject> {
    let Request { id, mut params, .. } = request;
    // The members it reads, each taken by comparing the few names there are; what is left is
    // for `take_inputs`.
    let name = params.remove("name");
    let arguments = params.take_arguments();
    let task = params.remove("task");
    let meta = params.remove("_meta");
    let name = match name {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ErrorObject::invalid_params("`name` must be a string")),
        None => {
            return Err(ErrorObject::invalid_params(
                "`tools/call` needs the tool's `name`",
            ));
        }
    };
    let arguments = match arguments {
        None | Some(Err(Value::Null)) => Object::default(),
        Some(Ok(arguments)) => arguments,
        Some(Err(_)) => return Err(ErrorObject::invalid_params("`arguments` must be an object")),
    };
    // 2025-11-25's `task`, with the TTL it may ask for (ignored in 2026-07-28, where the
    // server decides).
    let wanted_task = match task {
        Some(Value::Object(task)) => Some(task.get("ttl").and_then(Value::as_u64)),
        _ => None,
    };
    #[cfg(not(feature = "tasks"))]
    let _ = wanted_task;
    let binding = call.scope.stateless.is_some().then(|| {
        Binding::new("tools/call", &name, arguments.iter())
            .for_principal(call.sink.principal().map(|p| &**p))
    });
    if let Some(binding) = &binding {
        take_inputs(call, &mut params, binding)?;
    }
    let meta = match meta {
        Some(Value::Object(meta)) => Meta(meta),
        _ => Meta::default(),
    };
    let Some((tool, tool_name)) = call.registry.tools.get(&name) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown tool `{}`",
            echo(&name)
        )));
    };
    authorize(call, &tool.metadata.scopes)?;
    #[cfg(not(feature = "tasks"))]
    if tool.task_support == TaskSupport::Required {
        // Refused when the server was built (`Server::build`); a tool added while serving
        // gets this.
        return Err(ErrorObject::internal(format!(
            "the tool `{name}` runs only as a task, and this server is built without the `tasks` feature"
        )));
    }
    #[cfg(feature = "tasks")]
    if tool.task_support != TaskSupport::Forbidden {
        // 2026-07-28: a task for a request that declared the extension; 2025-11-25: for a call
        // that asked with `task`. Older revisions have no tasks: an ordinary call.
        let stateless = call.scope.stateless.is_some();
        let experimental = !stateless && call.scope.version == ProtocolVersion::V2025_11_25;
        let as_task = if stateless {
            call.core.tasks.declared(&call.scope.client)
        } else {
            experimental && wanted_task.is_some()
        };
        if as_task {
            let binding = binding.unwrap_or_else(|| Binding::new("tools/call", &name, &Map::new()));
            let invocation = TaskInvocation {
                id,
                meta,
                tool_name: Arc::clone(tool_name),
                arguments: arguments.into_map(),
                binding,
                ttl: wanted_task.flatten(),
            };
            return Ok(ToolRun::Task(
                call.core.tasks.call_tool(call, tool, invocation),
            ));
        }
        if tool.task_support == TaskSupport::Required {
            if stateless {
                return Err(call.core.tasks.required(&format!("the tool `{name}`")));
            }
            if experimental {
                // -32601, as 2025-11-25 says for this case; the message says what to do.
                return Err(ErrorObject::new(
                    crate::protocol::error_codes::METHOD_NOT_FOUND,
                    format!(
                        "the tool `{name}` runs only as a task: call it with `task` in the \
                         `tools/call` params (for example `\"task\": {{}}`)"
                    ),
                ));
            }
        }
    }
    // A handshake-era response is written straight from the result; a stateless one is
    // stamped as a value first.
    let direct = call.scope.stateless.is_none();
    let context = tool.reads_context.then(|| context(call, id, meta));
    let invocation = tool.invoke(Arc::clone(tool_name), arguments, context, direct);
    Ok(ToolRun::Now(RunNow {
        invocation,
        name,
        binding,
    }))
}

#[cfg(feature = "tasks")]
/// A task-capable `tools/call` as it arrived.
pub(crate) struct TaskInvocation {
    pub(crate) id: RequestId,
    pub(crate) meta: Meta,
    pub(crate) tool_name: Arc<str>,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) binding: Binding,
    /// The TTL the client asked for (2025-11-25's `task.ttl`, in ms).
    pub(crate) ttl: Option<u64>,
}

#[cfg(feature = "tasks")]
/// What the dispatch asks of tasks (the `io.modelcontextprotocol/tasks` extension and
/// 2025-11-25's experimental tasks). The `tasks` module implements it and `Server::build` puts
/// it in the core; the dispatch and the sessions call through it and never name that module.
pub(crate) trait Tasking: Send + Sync + 'static {
    /// Whether the client declared the extension.
    fn declared(&self, client: &ClientInfo) -> bool;
    /// The error for `what` (a task-only tool, a `tasks/*` method) without the extension.
    fn required(&self, what: &str) -> ErrorObject;
    /// `notifications.taskIds` of a `subscriptions/listen`, honoured only for a request that
    /// declared the extension.
    fn listened(
        &self,
        call: &Call<'_>,
        request: &Request,
    ) -> Result<Option<Vec<String>>, ErrorObject>;
    /// `notifications/tasks` for each task in `ids` the caller may see, until the guard it
    /// returns is dropped.
    fn watch(&self, call: &Call<'_>, request: &Request, ids: Vec<String>) -> Box<dyn Send>;
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28).
    fn method<'a>(
        &'a self,
        call: &'a Call<'a>,
        method: Method,
        request: &'a Request,
    ) -> super::store::BoxFuture<'a, Result<Reply, ErrorObject>>;
    /// 2025-11-25's `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.
    fn legacy_method<'a>(
        &'a self,
        call: &'a Call<'a>,
        method: Method,
        request: &'a Request,
    ) -> super::store::BoxFuture<'a, Result<Reply, ErrorObject>>;
    /// A task-capable `tools/call` run as a task.
    fn call_tool<'a>(
        &'a self,
        call: &'a Call<'a>,
        tool: &'a ToolDef,
        invocation: TaskInvocation,
    ) -> super::store::BoxFuture<'a, Result<Reply, ErrorObject>>;
    /// The ids of the tasks of the session named `session` still running.
    fn running<'a>(&'a self, session: &'a str) -> super::store::BoxFuture<'a, Vec<String>>;
    /// Forgets the tasks of the session named `session`, stopping those still running: how
    /// many there were.
    fn release<'a>(&'a self, session: &'a str) -> super::store::BoxFuture<'a, usize>;
    /// The server connected its Redis store (the `shared` module's, passed as `Any` so that
    /// neither names the other): a Redis task store binds to it.
    #[cfg(feature = "redis")]
    fn connect_redis(&self, store: Arc<dyn Any + Send + Sync>);
}

/// Runs a handler, turning a panic inside it into an `Err` instead of a dead task. A stateless
/// handler that asks the client for something it has no answer to yet is stopped there, with
/// what it asked.
async fn run<F: Future + Unpin>(
    scope: &Scope,
    mut future: F,
) -> Result<Result<F::Output, Interrupt>, Box<dyn Any + Send>> {
    let inputs = scope.stateless.as_ref().map(|s| Arc::clone(&s.inputs));
    std::future::poll_fn(move |cx| {
        if let Some(inputs) = &inputs {
            inputs.watch(cx.waker());
        }
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut future).poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(Ok(value))),
            Ok(Poll::Pending) => match inputs.as_ref().and_then(|i| i.interrupt()) {
                Some(interrupt) => Poll::Ready(Ok(Err(interrupt))),
                None => Poll::Pending,
            },
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await
}
