//! The Server Card on the wire (`Server::server_card`): `GET <path>/server-card` and
//! `GET /.well-known/ai-catalog.json`, as the extension's `docs/discovery.md` describes.
//!
//! Public metadata, served like the OAuth protected-resource metadata: no token (the routes sit
//! outside the OAuth layer), no `Host`/`Origin` check (a rebinding page learns nothing that is
//! not public), and the CORS headers the discovery document asks for, so browser clients can
//! read them. Both documents are rendered once, when the router is built, with an `ETag`
//! (the first 16 bytes of their SHA-256); a request whose `If-None-Match` names it gets 304.
//! `Cache-Control: public, max-age=3600`. `OPTIONS` answers a CORS preflight.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use crate::protocol::ProtocolVersion;
use crate::server::{AI_CATALOG_MEDIA_TYPE, Core, SERVER_CARD_MEDIA_TYPE, ServerCard};

/// The AI Catalog's well-known path.
pub(crate) const AI_CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// One rendered document and its validator.
struct Document {
    body: Vec<u8>,
    etag: HeaderValue,
    media_type: &'static str,
}

impl Document {
    fn new(value: &serde_json::Value, media_type: &'static str) -> Self {
        let body = serde_json::to_vec_pretty(value).unwrap_or_default();
        let digest = Sha256::digest(&body);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        let etag = HeaderValue::from_str(&format!("\"{hex}\""))
            .unwrap_or_else(|_| HeaderValue::from_static("\"\""));
        Self {
            body,
            etag,
            media_type,
        }
    }

    fn respond(&self, request: &HeaderMap) -> Response {
        let fresh = request
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .any(|tag| tag == "*" || tag.trim_start_matches("W/") == self.etag);
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut response = Response::new(Body::from(self.body.clone()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(self.media_type),
            );
            response
        };
        let headers = response.headers_mut();
        headers.insert(header::ETAG, self.etag.clone());
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        );
        cors(headers);
        response
    }
}

/// The CORS headers of `docs/discovery.md`.
fn cors(headers: &mut HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, If-None-Match"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("ETag"),
    );
}

/// A CORS preflight's answer.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    cors(response.headers_mut());
    response
}

/// The two routes, when the server has a card (it was checked by `Server::build`).
pub(crate) fn routes(core: &Core, card: &ServerCard, mcp_path: &str) -> Option<Router> {
    let versions: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
    let json = card.to_json(&core.info, &versions).ok()?;
    let catalog = Arc::new(Document::new(&card.catalog(&json), AI_CATALOG_MEDIA_TYPE));
    let card = Arc::new(Document::new(&json, SERVER_CARD_MEDIA_TYPE));
    let card_path = format!("{}/server-card", mcp_path.trim_end_matches('/'));
    Some(
        Router::new()
            .route(
                &card_path,
                get(move |headers: HeaderMap| std::future::ready(card.respond(&headers)))
                    .options(preflight),
            )
            .route(
                AI_CATALOG_PATH,
                get(move |headers: HeaderMap| std::future::ready(catalog.respond(&headers)))
                    .options(preflight),
            ),
    )
}
