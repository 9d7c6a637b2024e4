//! An OAuth 2.1 resource server: every request needs a bearer token issued by `--issuer` for
//! `--resource` (this server's canonical URI), and each tool declares the scopes it needs.
//!
//! Run with:
//!
//! ```text
//! cargo run -p mcp-examples --example auth -- --port 8000 \
//!     --issuer https://auth.example.com --resource http://127.0.0.1:8000/mcp
//! ```
//!
//! A client without a token gets 401 with `WWW-Authenticate: Bearer resource_metadata=...`; the
//! metadata (`/.well-known/oauth-protected-resource/mcp`) names the issuer; the client gets a
//! token for the resource there and calls again. Calling `add_note` with a token that only has
//! `notes:read` gets 403 `insufficient_scope` with `scope="notes:write"`: the client steps up.
//! Optional: `--introspect CLIENT_ID:SECRET` checks tokens by introspection instead of JWKS.

use std::sync::Mutex;

use mcp_runtime::prelude::*;
use mcp_runtime::{OAuth, ServerCard};

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Who the token says you are.
#[tool(read_only)]
async fn whoami(caller: Principal) -> String {
    format!(
        "subject {} (client {}), scopes: {}",
        caller.subject().unwrap_or("-"),
        caller.client_id().unwrap_or("-"),
        caller.scopes().join(" ")
    )
}

/// List the notes.
#[tool(read_only, scopes = ["notes:read"])]
async fn list_notes() -> Vec<String> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Add a note.
#[tool(scopes = ["notes:write"])]
async fn add_note(text: String, caller: Principal) -> String {
    let mut notes = NOTES.lock().unwrap_or_else(|e| e.into_inner());
    notes.push(format!("{}: {text}", caller.subject().unwrap_or("-")));
    format!("{} notes", notes.len())
}

/// Delete every note.
#[tool(destructive, scopes = ["notes:write", "admin"])]
async fn clear_notes() -> String {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    "cleared".to_owned()
}

fn usage() -> std::io::Error {
    std::io::Error::other(USAGE.lines().next().unwrap_or(USAGE))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: auth --port PORT --issuer ISSUER_URL --resource RESOURCE_URL [--introspect ID:SECRET]

An OAuth 2.1 resource server over Streamable HTTP on http://127.0.0.1:PORT/mcp: every
request needs a bearer token the issuer made for the resource.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    let (mut port, mut issuer, mut resource, mut introspect) = (8000u16, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(usage)?;
        match flag.as_str() {
            "--port" => port = value.parse().map_err(|_| usage())?,
            "--issuer" => issuer = Some(value),
            "--resource" => resource = Some(value),
            "--introspect" => introspect = Some(value),
            _ => return Err(usage().into()),
        }
    }
    let (Some(issuer), Some(resource)) = (issuer, resource) else {
        return Err(usage().into());
    };
    let mut oauth = OAuth::new(resource.clone())
        .authorization_server(issuer)
        .scopes_supported(["notes:read", "notes:write", "admin"])
        // A client without a token asks for reading first; writing is a step-up (403).
        .challenge_scopes(["notes:read"])
        .resource_name("auth example");
    if let Some((id, secret)) = introspect.as_deref().and_then(|v| v.split_once(':')) {
        oauth = oauth.introspection(id, secret);
    }
    let service = Server::new("auth-example", env!("CARGO_PKG_VERSION"))
        .description("Notes behind OAuth: reading, writing and admin scopes.")
        .oauth(oauth)
        // Public like the OAuth metadata: no token needed to read the card.
        .server_card(ServerCard::new("com.example/auth-example").remote(resource.clone()))
        .build()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!(
        "serving MCP on http://{}/mcp as the resource {resource}",
        listener.local_addr()?
    );
    service
        .serve_http_on(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
