//! Deployment: one process, replicas on Redis, limits.

use std::time::Duration;

use mcp_runtime::Limits;
use mcp_runtime::prelude::*;

// ANCHOR: probes
async fn probed(port: u16) -> mcp_runtime::Result<()> {
    Server::new("notes", env!("CARGO_PKG_VERSION"))
        // /healthz and /readyz are served by default; these move them.
        .health_paths("/livez", "/readyz")
        // On SIGTERM, go on accepting for 10 s with /readyz at 503, then drain.
        .drain_delay(Duration::from_secs(10))
        .serve_http(("0.0.0.0", port))
        .await
}
// ANCHOR_END: probes

// ANCHOR: replicas
async fn replica(port: u16) -> mcp_runtime::Result<()> {
    Server::new("notes", env!("CARGO_PKG_VERSION"))
        // Sessions, event logs, answers, notifications, tasks and the requestState key in Redis.
        .redis("redis://127.0.0.1:6379/0")
        .redis_prefix("notes")
        // The balancer names the client in `X-Forwarded-For`: believe it from there only.
        .trusted_proxies(["127.0.0.1"])
        .serve_http(("127.0.0.1", port))
        .await
}
// ANCHOR_END: replicas

// ANCHOR: limits
/// Smaller requests, a smaller share per client, shorter sessions and a deadline on handlers.
fn tighter(server: Server) -> Server {
    server
        .limits(
            Limits::default()
                .max_message_size(1024 * 1024)
                .request_bytes_total(64 * 1024 * 1024)
                .client_share(10),
        )
        .session_idle_timeout(Duration::from_secs(10 * 60))
        .handler_timeout(Duration::from_secs(30))
}

// tighter(Server::new("notes", env!("CARGO_PKG_VERSION"))).serve_http("0.0.0.0:8000").await
// ANCHOR_END: limits

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn a_message_past_the_limit_is_refused() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(tighter(Server::builder())).await?;
        assert!(client.request("ping", json!({})).await.is_ok());
        let big = json!({"padding": "x".repeat(2 * 1024 * 1024)});
        let refused = client.request("tools/list", big).await.unwrap_err();
        assert_eq!(refused.rpc().map(|e| e.code), Some(-32600));
        assert!(
            client.request("ping", json!({})).await.is_ok(),
            "the server keeps serving"
        );
        Ok(())
    }
}
