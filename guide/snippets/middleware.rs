//! Middleware, telemetry, metrics and rate limits.

use std::time::Duration;

use mcp_runtime::middleware::{CacheLayer, ErrorMaskingLayer, RateKey, RateLimitLayer};
use mcp_runtime::prelude::*;

// ANCHOR: from_fn
use mcp_runtime::middleware::{self, Extension, McpRequest, McpResponse, Next};
use mcp_runtime::protocol::ErrorObject;

#[derive(Clone)]
struct Tenant(String);

/// Who is calling?
#[tool]
async fn whoami(Extension(tenant): Extension<Tenant>) -> String {
    tenant.0
}

async fn tenant(mut request: McpRequest, next: Next) -> McpResponse {
    let Some(tenant) = request
        .meta()
        .and_then(|m| m.get("tenant")?.as_str())
        .map(str::to_owned)
    else {
        let error = ErrorObject::invalid_params("`_meta.tenant` is required");
        return McpResponse::error(request.id().clone(), error);
    };
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

fn tenanted() -> Server {
    Server::builder()
        .tool(whoami)
        .layer(middleware::from_fn(tenant))
}
// ANCHOR_END: from_fn

// ANCHOR: built_in
/// Today's exchange rate: the same answer for a minute, so it may be cached.
#[tool(read_only, idempotent)]
async fn rate(currency: String) -> String {
    format!("1 EUR = 1.08 {currency}")
}

fn production() -> Server {
    // Each layer wraps the ones added before it: the last one added sees a request first.
    Server::builder()
        .tool(rate)
        // Repeated calls of `read_only` + `idempotent` tools answered from a cache.
        .layer(CacheLayer::new())
        // 10 `tools/call` a second per caller (its principal, else its session, else its
        // address), in bursts of 20; and 1,000 requests a minute per client address.
        .layer(
            RateLimitLayer::per_second(10)
                .burst(20)
                .methods(["tools/call"]),
        )
        .layer(RateLimitLayer::new(1_000, Duration::from_secs(60)).key(RateKey::peer()))
        // Internal errors reach the client as "internal error (reference ...)", logged in full.
        .layer(ErrorMaskingLayer::new())
}
// ANCHOR_END: built_in

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn a_layer_feeds_the_handler() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(tenanted()).await?;
        let call = json!({"name": "whoami", "arguments": {}, "_meta": {"tenant": "acme"}});
        assert_eq!(
            client.request("tools/call", call).await?["content"][0]["text"],
            "acme"
        );
        let refused = client
            .request("tools/call", json!({"name": "whoami", "arguments": {}}))
            .await;
        assert_eq!(refused.unwrap_err().rpc().map(|e| e.code), Some(-32602));
        Ok(())
    }

    #[tokio::test]
    async fn rate_limited_past_the_burst() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(production()).await?;
        let mut limited = None;
        for _ in 0..40 {
            if let Err(error) = client
                .request(
                    "tools/call",
                    json!({"name": "rate", "arguments": {"currency": "USD"}}),
                )
                .await
            {
                limited = error.rpc().cloned();
                break;
            }
        }
        let limited = limited.ok_or("40 calls at once were never rate limited")?;
        assert_eq!(limited.code, -32023, "{limited:?}");
        assert!(
            limited
                .data
                .as_ref()
                .is_some_and(|d| d["retryAfterMs"].is_u64()),
            "{limited:?}"
        );
        Ok(())
    }
}
