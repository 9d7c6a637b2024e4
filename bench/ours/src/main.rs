//! The benchmark server written with this framework: `add`, `add_sync` and 20 trivial tools.
//!
//! `bench-ours stdio` serves stdio; `bench-ours http 127.0.0.1:PORT` serves Streamable HTTP;
//! `bench-ours http-redis 127.0.0.1:PORT redis://... [CACHE]` (feature `redis`) the same with
//! its sessions shared through Redis.

use mcp_runtime::prelude::*;
use mcp_runtime::tasks::TaskSupport;
use mcp_runtime::tool::ToolBuilder;

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

/// Trivial tool 1: adds 1.
#[tool]
async fn t01(
    /// A number.
    x: i64,
) -> i64 {
    x + 1
}

/// Trivial tool 2: adds 2.
#[tool]
async fn t02(
    /// A number.
    x: i64,
) -> i64 {
    x + 2
}

/// Trivial tool 3: adds 3.
#[tool]
async fn t03(
    /// A number.
    x: i64,
) -> i64 {
    x + 3
}

/// Trivial tool 4: adds 4.
#[tool]
async fn t04(
    /// A number.
    x: i64,
) -> i64 {
    x + 4
}

/// Trivial tool 5: adds 5.
#[tool]
async fn t05(
    /// A number.
    x: i64,
) -> i64 {
    x + 5
}

/// Trivial tool 6: adds 6.
#[tool]
async fn t06(
    /// A number.
    x: i64,
) -> i64 {
    x + 6
}

/// Trivial tool 7: adds 7.
#[tool]
async fn t07(
    /// A number.
    x: i64,
) -> i64 {
    x + 7
}

/// Trivial tool 8: adds 8.
#[tool]
async fn t08(
    /// A number.
    x: i64,
) -> i64 {
    x + 8
}

/// Trivial tool 9: adds 9.
#[tool]
async fn t09(
    /// A number.
    x: i64,
) -> i64 {
    x + 9
}

/// Trivial tool 10: adds 10.
#[tool]
async fn t10(
    /// A number.
    x: i64,
) -> i64 {
    x + 10
}

/// Trivial tool 11: adds 11.
#[tool]
async fn t11(
    /// A number.
    x: i64,
) -> i64 {
    x + 11
}

/// Trivial tool 12: adds 12.
#[tool]
async fn t12(
    /// A number.
    x: i64,
) -> i64 {
    x + 12
}

/// Trivial tool 13: adds 13.
#[tool]
async fn t13(
    /// A number.
    x: i64,
) -> i64 {
    x + 13
}

/// Trivial tool 14: adds 14.
#[tool]
async fn t14(
    /// A number.
    x: i64,
) -> i64 {
    x + 14
}

/// Trivial tool 15: adds 15.
#[tool]
async fn t15(
    /// A number.
    x: i64,
) -> i64 {
    x + 15
}

/// Trivial tool 16: adds 16.
#[tool]
async fn t16(
    /// A number.
    x: i64,
) -> i64 {
    x + 16
}

/// Trivial tool 17: adds 17.
#[tool]
async fn t17(
    /// A number.
    x: i64,
) -> i64 {
    x + 17
}

/// Trivial tool 18: adds 18.
#[tool]
async fn t18(
    /// A number.
    x: i64,
) -> i64 {
    x + 18
}

/// Trivial tool 19: adds 19.
#[tool]
async fn t19(
    /// A number.
    x: i64,
) -> i64 {
    x + 19
}

/// Trivial tool 20: adds 20.
#[tool]
async fn t20(
    /// A number.
    x: i64,
) -> i64 {
    x + 20
}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    let mut args = std::env::args().skip(1);
    let service = Server::new("bench", "0.0.0").build()?;
    match args.next().as_deref() {
        // The same server as an OAuth resource server: every request's JWT is validated
        // against ISSUER's JWKS (fetched once, then cached) for the resource RESOURCE.
        // `http-auth-every`: the signature checked on every request (no verified-token cache).
        // `http-auth-dpop`: DPoP taken, so each request's proof is checked (the token's check
        // is cached as by default).
        #[cfg(feature = "oauth")]
        Some(mode @ ("http-auth" | "http-auth-every" | "http-auth-dpop")) => {
            let every = mode == "http-auth-every";
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            let issuer = args.next().expect("http-auth ADDR ISSUER RESOURCE");
            let resource = args.next().expect("http-auth ADDR ISSUER RESOURCE");
            let mut oauth = mcp_runtime::OAuth::new(resource).authorization_server(issuer);
            if every {
                oauth = oauth.verified_token_cache(std::time::Duration::ZERO);
            }
            if mode == "http-auth-dpop" {
                oauth = oauth.accept_dpop();
            }
            Server::new("bench", "0.0.0")
                .oauth(oauth)
                .build()?
                .serve_http(addr)
                .await
        }
        // The same server with one more tool, `add_task`, which may run as a task (issue 17's
        // rows: a task's round trip, and the memory of a live task). A separate mode, so the
        // other rows' `tools/list` stays the 21 tools the three servers share.
        Some("stdio-tasks") => {
            let mut task = ToolBuilder::new("add_task", |_call| {
                Box::pin(async { CallToolResult::success(["3"]) })
            });
            task.description("Add two integers, as a task when asked.")
                .task_support(TaskSupport::Optional);
            // The row's one client leaves 15,200 tasks alive (10,200 round trips and 5,000
            // left): past the default 10,000, and past one owner's share (a tenth of that,
            // issue 26), which a stdio server's one client would otherwise hit at 1,000.
            Server::new("bench", "0.0.0")
                .tool_def(task.build())
                .max_live_tasks(20_000)
                .max_live_tasks_per_owner(20_000)
                .task_results_total(64 * 1024 * 1024, Some(64 * 1024 * 1024))
                .build()?
                .serve_stdio()
                .await
        }
        // The same server with its handshake-era sessions shared through the Redis at URL
        // (issue 31's rows: Redis-backed against in-memory, replicas behind HAProxy).
        // `CACHE` (default 10,000) is `Server::redis_session_cache`: 0 reads every request's
        // session record from Redis.
        #[cfg(feature = "redis")]
        Some("http-redis") => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            let url = args.next().expect("http-redis ADDR REDIS_URL [CACHE]");
            let cache = args
                .next()
                .map_or(10_000, |n| n.parse().expect("CACHE: a number"));
            Server::new("bench", "0.0.0")
                .redis(url)
                .redis_session_cache(cache)
                .build()?
                .serve_http(addr)
                .await
        }
        Some("http") => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            service.serve_http(addr).await
        }
        _ => service.serve_stdio().await,
    }
}
