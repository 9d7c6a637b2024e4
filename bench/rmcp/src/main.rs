//! The benchmark server written with rmcp 3.11, the official Rust SDK: `add`, `add_sync` and 20 trivial tools.
//!
//! `bench-rmcp stdio` serves stdio; `bench-rmcp http 127.0.0.1:PORT` serves Streamable HTTP on
//! `/mcp` with rmcp's defaults (sessions, SSE replies).
//!
//! Written the way rmcp's docs advise for speed: the `ToolRouter` is built once and stored
//! (`#[tool_handler(router = self.tool_router)]`), not rebuilt per request; and TCP_NODELAY is
//! set on accepted sockets, so rmcp's SSE replies do not wait on delayed ACKs.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{Json, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

#[derive(Clone)]
struct Bench {
    tool_router: ToolRouter<Self>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct XArgs {
    /// A number.
    x: i64,
}

/// The same `{"result": n}` structured output our framework sends for an `i64`.
#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    result: i64,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Add two integers.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum { result: a + b })
    }

    /// Add two integers, in a sync tool.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn add_sync(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum { result: a + b })
    }

    /// Trivial tool 1: adds 1.
    #[tool]
    async fn t01(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 1 })
    }

    /// Trivial tool 2: adds 2.
    #[tool]
    async fn t02(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 2 })
    }

    /// Trivial tool 3: adds 3.
    #[tool]
    async fn t03(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 3 })
    }

    /// Trivial tool 4: adds 4.
    #[tool]
    async fn t04(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 4 })
    }

    /// Trivial tool 5: adds 5.
    #[tool]
    async fn t05(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 5 })
    }

    /// Trivial tool 6: adds 6.
    #[tool]
    async fn t06(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 6 })
    }

    /// Trivial tool 7: adds 7.
    #[tool]
    async fn t07(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 7 })
    }

    /// Trivial tool 8: adds 8.
    #[tool]
    async fn t08(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 8 })
    }

    /// Trivial tool 9: adds 9.
    #[tool]
    async fn t09(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 9 })
    }

    /// Trivial tool 10: adds 10.
    #[tool]
    async fn t10(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 10 })
    }

    /// Trivial tool 11: adds 11.
    #[tool]
    async fn t11(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 11 })
    }

    /// Trivial tool 12: adds 12.
    #[tool]
    async fn t12(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 12 })
    }

    /// Trivial tool 13: adds 13.
    #[tool]
    async fn t13(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 13 })
    }

    /// Trivial tool 14: adds 14.
    #[tool]
    async fn t14(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 14 })
    }

    /// Trivial tool 15: adds 15.
    #[tool]
    async fn t15(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 15 })
    }

    /// Trivial tool 16: adds 16.
    #[tool]
    async fn t16(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 16 })
    }

    /// Trivial tool 17: adds 17.
    #[tool]
    async fn t17(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 17 })
    }

    /// Trivial tool 18: adds 18.
    #[tool]
    async fn t18(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 18 })
    }

    /// Trivial tool 19: adds 19.
    #[tool]
    async fn t19(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 19 })
    }

    /// Trivial tool 20: adds 20.
    #[tool]
    async fn t20(&self, Parameters(XArgs { x }): Parameters<XArgs>) -> Json<Sum> {
        Json(Sum { result: x + 20 })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench", "0.0.0"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("http") => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:8000".to_owned());
            let service = StreamableHttpService::new(
                || Ok(Bench::new()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
        _ => {
            let running = Bench::new().serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
    }
    Ok(())
}
