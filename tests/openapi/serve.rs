//! What the published-description servers share: `--base-url URL`, a bearer token from
//! `OPENAPI_TOKEN` when it is set (Prism checks that a request carries the credentials its
//! description asks for), then every tool of the binary over stdio.

use mcp_runtime::openapi::{Api, Upstream};

/// Configures `api` from `--base-url URL` and serves every tool in the binary over stdio.
pub(crate) async fn serve(name: &str, api: &'static Api) -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(flag), Some(url)) = (args.next(), args.next()) else {
        return Err("usage: --base-url URL".into());
    };
    if flag != "--base-url" {
        return Err("usage: --base-url URL".into());
    }
    let mut upstream = Upstream::new(url)?;
    if std::env::var_os("OPENAPI_TOKEN").is_some() {
        upstream = upstream.bearer_from_env("OPENAPI_TOKEN")?;
    }
    api.configure(upstream)?;
    mcp_runtime::Server::new(name, "0.1.0")
        .serve_stdio()
        .await?;
    Ok(())
}
