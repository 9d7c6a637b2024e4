//! `cargo mcp dev-child --current FILE`: the upstream that `cargo mcp dev` proxies. It runs the
//! build `FILE` names, on the stdin, stdout and stderr it was given (the server talks to the dev
//! process directly, nothing is copied through here), and exits as soon as `FILE` names
//! another build, killing the one it ran. The dev process's gateway then starts it again, and
//! it runs the new build: the clients' sessions, held by the dev process, never see a
//! disconnection, only `list_changed`.
//!
//! Before the first good build `FILE` names none, and it serves an empty server itself, so the
//! dev process can answer its clients while the crate does not compile yet.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use crate::cli::DevChildArgs;

/// How often the file is read.
const POLL: Duration = Duration::from_millis(20);

/// A build to run: its program and arguments.
type Build = (String, Vec<String>);

/// The build `current` names, and what it was when read.
fn read(current: &Path) -> (Option<Vec<u8>>, Option<Build>) {
    let bytes = std::fs::read(current).ok();
    let build = bytes
        .as_deref()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| {
            let program = v["program"].as_str()?.to_owned();
            let args = v["args"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Some((program, args))
        });
    (bytes, build)
}

pub(crate) fn run(args: &DevChildArgs) -> anyhow::Result<ExitCode> {
    let (seen, build) = read(&args.current);
    let Some((program, server_args)) = build else {
        return placeholder(&args.current, seen);
    };
    let mut child = Command::new(&program)
        .args(&server_args)
        .env("MCP_RUNTIME_TRANSPORT", "stdio")
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(match status.code() {
                Some(0) => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            });
        }
        if read(&args.current).0 != seen {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(POLL);
    }
}

/// Serves no items on stdin and stdout until a build is named.
fn placeholder(current: &Path, seen: Option<Vec<u8>>) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let service = mcp_runtime::Server::new("cargo-mcp-dev", env!("CARGO_PKG_VERSION"))
            .dynamic_tools()
            .dynamic_resources()
            .dynamic_prompts()
            .build()?;
        let serving = service.serve_stdio();
        let replaced = async {
            while read(current).0 == seen {
                tokio::time::sleep(POLL).await;
            }
        };
        tokio::select! {
            _ = serving => {}
            () = replaced => {}
        }
        anyhow::Ok(ExitCode::SUCCESS)
    })
}
