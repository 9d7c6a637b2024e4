//! Telemetry to an OpenTelemetry collector over OTLP (HTTP): request spans by the conventions for
//! MCP, continuing the traces clients send in `params._meta`, and the conventions' metrics.
//!
//! Run with a collector listening on 127.0.0.1:4318 (OTLP/HTTP, the default endpoint):
//! `cargo run -p mcp-examples --example otlp --features otel` (serves stdio), or `-- --port 3000`
//! for Streamable HTTP. `OTEL_EXPORTER_OTLP_ENDPOINT` points the exporters elsewhere.

// ANCHOR: otlp
use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::{Telemetry, exported_directly, request_events};
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(a: i64, b: i64) -> i64 {
    tracing::info!(a, b, "adding");
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: otlp [--port PORT] [--help]\n\nSpans and metrics to the OpenTelemetry \
             collector at OTEL_EXPORTER_OTLP_ENDPOINT (http://127.0.0.1:4318 by default) over \
             OTLP/HTTP. Serves stdio, or Streamable HTTP on http://127.0.0.1:PORT/mcp with --port."
        );
        return Ok(());
    }
    let resource = Resource::builder().with_service_name("adder").build();
    // Spans, batched and sent to the collector off the request path.
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .build()?,
        )
        .with_resource(resource.clone())
        .build();
    // Metrics, pushed every 60 s.
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(
            opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .build()?,
        )
        .with_resource(resource)
        .build();
    // W3C Trace Context and Baggage: how `traceparent`/`tracestate` and `baggage` in
    // `params._meta` are read and written.
    opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));
    // Before the server is built: its instruments are made on the provider set then.
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::INFO)
        // Logs on stderr (stdout carries the protocol on stdio).
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        // The spans handlers make (and the events inside them) to OpenTelemetry; not the
        // request's own span, which the server makes on the tracer itself.
        .with(
            tracing_opentelemetry::layer()
                // Not the conventions' attributes, and a few µs a span: source location,
                // thread, the `tracing` target, busy and idle time.
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_tracked_inactivity(false)
                .with_tracer(tracer_provider.tracer("adder"))
                .with_filter(filter_fn(|metadata| !exported_directly(metadata))),
        )
        // The events a handler emits outside spans of its own, on its request's span.
        .with(request_events())
        .init();

    // Request spans made on the tracer directly, by the conventions.
    let telemetry = Telemetry::new().tracer(tracer_provider.tracer("adder"));
    let server = Server::builder().tool(add).telemetry(telemetry);
    let port = std::env::args()
        .skip_while(|a| a != "--port")
        .nth(1)
        .and_then(|p| p.parse::<u16>().ok());
    let served = match port {
        Some(port) => server.serve_http(("127.0.0.1", port)).await,
        None => server.serve_stdio().await,
    };
    // Whatever was still batched goes out before the process ends.
    tracer_provider.shutdown()?;
    meter_provider.shutdown()?;
    Ok(served?)
}
// ANCHOR_END: otlp
