//! The dev page at `/`: one HTML file embedded in the binary (no Node toolchain to use it),
//! which speaks MCP to `/mcp` of the same process as any client would, with a session of its
//! own; and `/sandbox`, the MCP Apps sandbox proxy the page loads an App's HTML through, from
//! the other of `127.0.0.1` and `localhost` so that the App runs on another origin than the
//! page (as the Apps specification requires of a web host).

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

/// The page: markup, style and script in one file.
const PAGE: &str = include_str!("page.html");

/// The sandbox proxy.
const SANDBOX: &str = include_str!("sandbox.html");

/// What the page is told about the server.
pub(crate) struct PageInfo {
    /// The package's name, for the title.
    pub(crate) name: String,
}

/// `GET /` and `GET /sandbox`.
pub(crate) fn router(info: Arc<PageInfo>) -> Router {
    Router::new()
        .route(
            "/sandbox",
            get(|| async {
                (
                    [
                        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                        (header::CACHE_CONTROL, "no-store"),
                    ],
                    SANDBOX,
                )
            }),
        )
        .route(
            "/",
            get(move || {
                let page = PAGE.replace("{{NAME}}", &escape(&info.name));
                async move {
                    (
                        [
                            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                            (header::CACHE_CONTROL, "no-store"),
                        ],
                        page,
                    )
                        .into_response()
                }
            }),
        )
}

/// Text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
