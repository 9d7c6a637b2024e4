//! The events a handler emits in its request's `tracing` span, as events of the request's
//! OpenTelemetry span when that span is made on a tracer ([`Telemetry::tracer`]).
//!
//! [`Telemetry::tracer`]: super::Telemetry::tracer

use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::{Key, KeyValue, Value};
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Filtered;
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::exported_directly;

/// A `tracing` layer that records the events a handler emits outside any span of its own (its
/// `tracing::info!`) as events of its request's OpenTelemetry span, when
/// [`Telemetry::tracer`](super::Telemetry::tracer) makes that span (current while the handler
/// runs) and the `mcp.request` span is left out of `tracing-opentelemetry`
/// ([`exported_directly`]): the events `tracing-opentelemetry` would have put on the request's
/// span. An event's name is its message, its fields are its attributes, with `level` and
/// `target` as `tracing-opentelemetry` writes them; an event inside one of the handler's spans
/// is left to `tracing-opentelemetry`, which puts it on that span. It takes no span itself, so
/// a subscriber with no other layer that takes `mcp.request` (`fmt`, say) makes none. Install
/// it beside that layer; see [`request_events`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestEvents;

/// What [`RequestEvents`] takes: everything but the `mcp.request` span.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotRequestSpan;

impl<S> Filter<S> for NotRequestSpan {
    fn enabled(&self, metadata: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        !exported_directly(metadata)
    }

    fn callsite_enabled(&self, metadata: &'static Metadata<'static>) -> Interest {
        match exported_directly(metadata) {
            true => Interest::never(),
            false => Interest::always(),
        }
    }
}

/// The [`RequestEvents`] layer, which takes no `mcp.request` span ([`NotRequestSpan`]).
///
/// ```
/// use mcp_runtime::telemetry::{exported_directly, request_events};
/// use tracing_subscriber::filter::filter_fn;
/// use tracing_subscriber::prelude::*;
///
/// # fn install<L>(otel_layer: L)
/// # where L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync {
/// tracing_subscriber::registry()
///     // `otel_layer`: your `tracing_opentelemetry::layer().with_tracer(..)`.
///     .with(otel_layer.with_filter(filter_fn(|metadata| !exported_directly(metadata))))
///     .with(request_events())
///     .init();
/// # }
/// ```
pub fn request_events<S>() -> Filtered<RequestEvents, NotRequestSpan, S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    RequestEvents.with_filter(NotRequestSpan)
}

impl<S> Layer<S> for RequestEvents
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        // An event in a span this layer takes (a handler's own) is `tracing-opentelemetry`'s.
        if ctx.event_span(event).is_some() {
            return;
        }
        // The request's span is current while its handler runs (the server attaches it).
        let context = opentelemetry::Context::current();
        let otel = context.span();
        if !otel.is_recording() {
            return;
        }
        let metadata = event.metadata();
        let mut fields = Fields {
            message: None,
            attributes: vec![
                KeyValue::new("level", metadata.level().as_str()),
                KeyValue::new("target", metadata.target()),
            ],
        };
        event.record(&mut fields);
        let name = match fields.message {
            Some(message) => std::borrow::Cow::Owned(message),
            None => std::borrow::Cow::Borrowed(metadata.name()),
        };
        otel.add_event(name, fields.attributes);
    }
}

/// An event's message and fields.
struct Fields {
    message: Option<String>,
    attributes: Vec<KeyValue>,
}

impl Fields {
    fn push(&mut self, field: &Field, value: Value) {
        self.attributes
            .push(KeyValue::new(Key::from_static_str(field.name()), value));
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = Some(value.to_owned()),
            _ => self.push(field, Value::from(value.to_owned())),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = Some(format!("{value:?}")),
            _ => self.push(field, Value::from(format!("{value:?}"))),
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(value) => self.push(field, Value::from(value)),
            Err(_) => self.push(field, Value::from(value.to_string())),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::from(value));
    }
}
