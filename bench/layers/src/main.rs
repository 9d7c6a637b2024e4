//! bench-ours' server (`add` and 20 trivial tools) with one of issue 28's variants of the
//! request path, named by the mode: `stdio-none`, `stdio-empty`, `stdio-rate`,
//! `stdio-telemetry`, and `http-<variant> 127.0.0.1:PORT`.
//!
//! - `none`: no layer (the direct path; the same binary, so the comparison is like for like);
//! - `empty`: one layer that passes every request on (`middleware::from_fn`);
//! - `rate`: `RateLimitLayer` per caller, at a rate no run reaches (the limiter's cost);
//! - `metrics`: `Server::telemetry` with no `tracing` subscriber, so metrics only;
//! - `sampled`: as `telemetry`, with head sampling at 0 (`Telemetry::sample_ratio(0.0)`), so
//!   every request is sampled out: what a request costs that gets no span;
//! - `telemetry`: `Server::telemetry` with request spans made on an SDK tracer
//!   (`Telemetry::tracer`; batch processor, an exporter that drops them) and a
//!   `tracing-opentelemetry` layer that leaves them out (`exported_directly`), with
//!   `request_events`, set up as the guide's OTLP example is, and the metrics kept by the server and recorded on an SDK meter
//!   provider;
//! - `layered` (for `bench/callgrind.sh --layers`): the same with the request span made by
//!   `tracing-opentelemetry` from the `tracing` span instead;
//! - `otel-floor N` (not a server): see [`otel_floor`].

use mcp_runtime::middleware::{self, McpRequest, McpResponse, Next, RateLimitLayer};
use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::Telemetry;
use opentelemetry::trace::TracerProvider as _;
use tracing_subscriber::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Add two integers, in a sync tool: it runs on tokio's blocking pool.
#[tool(read_only, idempotent)]
fn add_sync(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

macro_rules! trivial {
    ($($name:ident = $n:literal),* $(,)?) => {$(
        #[doc = concat!("Trivial tool ", $n, ": adds ", $n, ".")]
        #[tool]
        async fn $name(#[doc = "A number."] x: i64) -> i64 {
            x + $n
        }
    )*};
}

trivial!(
    t01 = 1,
    t02 = 2,
    t03 = 3,
    t04 = 4,
    t05 = 5,
    t06 = 6,
    t07 = 7,
    t08 = 8,
    t09 = 9,
    t10 = 10,
    t11 = 11,
    t12 = 12,
    t13 = 13,
    t14 = 14,
    t15 = 15,
    t16 = 16,
    t17 = 17,
    t18 = 18,
    t19 = 19,
    t20 = 20,
);

async fn pass(request: McpRequest, next: Next) -> McpResponse {
    next.run(request).await
}

/// `otel-floor N`: N spans made directly with the OpenTelemetry API on the same SDK pipeline
/// (batch processor, an exporter that drops them), each with what a `tools/call` span carries
/// on stdio, and as many records of a histogram with its attributes: what the SDK itself costs
/// a request's span and metric, under `bench/callgrind.sh`'s method (the
/// difference between two counts over the difference in spans), beside what the `telemetry`
/// variant costs a request.
fn otel_floor(spans: u64) {
    use opentelemetry::KeyValue;
    use opentelemetry::trace::{Span as _, SpanKind, Tracer as _};
    use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor};
    // A queue that holds every span: the loop outruns the export thread, and a span the full
    // queue drops would cost less than one exported.
    let queue = usize::try_from(spans).unwrap_or(usize::MAX);
    let processor =
        BatchSpanProcessor::builder(opentelemetry_sdk::testing::trace::NoopSpanExporter::new())
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(queue)
                    .build(),
            )
            .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(processor)
        .build();
    let tracer = provider.tracer("bench");
    // One histogram record a request, with its attributes, on an SDK meter provider.
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_periodic_exporter(opentelemetry_sdk::metrics::InMemoryMetricExporter::default())
        .build();
    let histogram = opentelemetry::metrics::MeterProvider::meter(&meters, "bench")
        .f64_histogram("mcp.server.operation.duration")
        .build();
    for id in 0..spans {
        let mut span = tracer
            .span_builder(String::from("tools/call add"))
            .with_kind(SpanKind::Server)
            .with_attributes([
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("mcp.session.id", String::from("stdio-1")),
                KeyValue::new("mcp.protocol.version", "2025-11-25"),
                KeyValue::new("jsonrpc.request.id", id.to_string()),
                KeyValue::new("gen_ai.tool.name", String::from("add")),
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("network.transport", "pipe"),
            ])
            .start(&tracer);
        span.end();
        histogram.record(
            0.001,
            &[
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("gen_ai.tool.name", "add"),
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("mcp.protocol.version", "2025-11-25"),
                KeyValue::new("network.transport", "pipe"),
            ],
        );
    }
    let _ = provider.shutdown();
    let _ = meters.shutdown();
}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "stdio-none".to_owned());
    if mode == "otel-floor" {
        otel_floor(args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000));
        return Ok(());
    }
    let (transport, variant) = mode.split_once('-').unwrap_or((&mode, "none"));
    let server = Server::new("bench", "0.0.0");
    let server = match variant {
        "empty" => server.layer(middleware::from_fn(pass)),
        "rate" => server.layer(RateLimitLayer::per_second(1_000_000_000)),
        // Metrics alone (no subscriber, so no spans): what the histograms cost.
        "metrics" => {
            let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
                .with_periodic_exporter(
                    opentelemetry_sdk::metrics::InMemoryMetricExporter::default(),
                )
                .build();
            opentelemetry::global::set_meter_provider(meters);
            server.telemetry(Telemetry::new())
        }
        "telemetry" | "sampled" | "layered" => {
            let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder()
                .with_batch_exporter(opentelemetry_sdk::testing::trace::NoopSpanExporter::new())
                .build();
            // `layered` leaves the request span to `tracing-opentelemetry`; the others make it on
            // the tracer and leave it out of the layer, as the guide sets it up.
            let direct = variant != "layered";
            tracing_subscriber::registry()
                .with(
                    tracing_opentelemetry::layer()
                        .with_location(false)
                        .with_threads(false)
                        .with_target(false)
                        .with_tracked_inactivity(false)
                        .with_tracer(tracer.tracer("bench"))
                        .with_filter(tracing_subscriber::filter::filter_fn(move |metadata| {
                            !(direct && mcp_runtime::telemetry::exported_directly(metadata))
                        })),
                )
                .with(direct.then(mcp_runtime::telemetry::request_events))
                .init();
            let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
                .with_periodic_exporter(
                    opentelemetry_sdk::metrics::InMemoryMetricExporter::default(),
                )
                .build();
            opentelemetry::global::set_meter_provider(meters);
            let ratio = if variant == "sampled" { 0.0 } else { 1.0 };
            let telemetry = Telemetry::new().sample_ratio(ratio);
            server.telemetry(match variant {
                "layered" => telemetry,
                _ => telemetry.tracer(tracer.tracer("mcp")),
            })
        }
        _ => server,
    };
    let service = server.build()?;
    match transport {
        "http" => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            service.serve_http(addr).await
        }
        _ => service.serve_stdio().await,
    }
}
