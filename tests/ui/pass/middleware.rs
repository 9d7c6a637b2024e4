//! `layer = ..` on every kind of item, and a middleware extension taken apart as a parameter.

use std::time::Duration;

use mcp_runtime::middleware::{self, Extension, McpRequest, McpResponse, Next};
use mcp_runtime::prelude::*;
use tower::ServiceBuilder;
use tower::limit::ConcurrencyLimitLayer;
use tower::timeout::TimeoutLayer;

#[derive(Clone)]
struct Tenant(String);

async fn pass(request: McpRequest, next: Next) -> McpResponse {
    next.run(request).await
}

#[tool(layer = TimeoutLayer::new(Duration::from_secs(1)))]
async fn timed() -> String {
    String::new()
}

#[tool(layer = ServiceBuilder::new().layer(ConcurrencyLimitLayer::new(2)).layer(middleware::from_fn(pass)))]
async fn stacked(Extension(tenant): Extension<Tenant>) -> String {
    tenant.0
}

#[resource("notes://{id}", layer = ConcurrencyLimitLayer::new(4))]
async fn note(id: u32) -> String {
    id.to_string()
}

#[prompt(layer = TimeoutLayer::new(Duration::from_secs(1)))]
fn greet(Extension(tenant): Extension<Tenant>, name: String) -> String {
    format!("{} {name}", tenant.0)
}

#[derive(Default)]
struct Counter;

#[server]
impl Counter {
    #[tool(layer = ConcurrencyLimitLayer::new(1))]
    async fn count(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = Server::builder()
        .tool(timed)
        .tool(stacked)
        .resource(note)
        .prompt(greet)
        .with(Counter)
        .layer(ConcurrencyLimitLayer::new(64))
        .build()
        .unwrap();
}
