//! `cargo mcp dev`: the crate's server at a stable address, rebuilt on every save and swapped in
//! behind the clients' sessions.
//!
//! The dev process is itself an MCP server, `mcp_runtime::Server`, serving Streamable HTTP on
//! `127.0.0.1:PORT/mcp` (both eras; the dev page at `/`) or, with `--stdio`, its own stdin and
//! stdout. Everything it serves comes from the crate's current build through the runtime's
//! gateway (`Server::proxy` with the empty namespace, so names are the server's own): calls,
//! reads, prompts, completions, progress, logs, sampling, elicitation, subscriptions and tasks
//! are relayed as the gateway relays them.
//!
//! The gateway's upstream is `cargo mcp dev-child` ([`child`]), which runs the build that
//! `target/mcp-dev/<package>/current.json` names and exits when the file names another. On a
//! save ([`watch`]), once the burst of saves is over, the crate is rebuilt ([`build`]: one build
//! at a time; saves during a build make one more); a build that compiles is copied to a file of
//! its own, started once and listed, and only then named in `current.json`. The child exits,
//! the gateway starts it again on the new build, lists what it serves and sends
//! `notifications/{tools,prompts,resources}/list_changed` for what changed. A call in flight on
//! the old build when it is replaced gets a tool error saying the server went away (the
//! gateway's own), never silence.
//!
//! A build that fails leaves the last good one serving: the compiler's diagnostics go to the
//! terminal, and to every connected session as `notifications/message` at `error` (logger
//! `cargo build`). A new build that compiles but does not start (a panic in `main`, a
//! definition `Server::build` refuses) is reported the same way and not swapped in.

mod build;
pub(crate) mod child;
mod page;
mod watch;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use mcp_runtime::Server;
use mcp_runtime::client::{Stderr, StdioCommand};
use mcp_runtime::gateway::Upstream;
use mcp_runtime::protocol::LoggingLevel;
use serde_json::json;

use self::build::{Builder, Failure, Staged};
use self::watch::Saves;
use crate::cli::DevArgs;
use crate::project::Project;

/// The logger name of the messages about builds sent to clients.
const LOGGER: &str = "cargo-mcp-dev";

pub(crate) fn run(args: &DevArgs) -> anyhow::Result<ExitCode> {
    let project = Project::find(&args.target)?;
    let mut builder = Builder::new(project.clone(), args.target.clone())?;
    let saves = Saves::watch(
        &project.package_dir,
        &project.workspace_root,
        &project.target_directory,
        Duration::from_millis(args.debounce),
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        eprintln!(
            "cargo mcp dev: building `{}` (dev profile)",
            project.target.name()
        );
        let first = builder.build().await;
        let staged = match &first {
            Ok(staged) => {
                builder.publish(staged)?;
                eprintln!("cargo mcp dev: {}", summary(staged));
                Some(staged.clone())
            }
            Err(failure) => {
                eprintln!(
                    "cargo mcp dev: the build failed; serving nothing until a save fixes it\n{}",
                    failure.message
                );
                None
            }
        };
        let service = server(&project, &builder, staged.as_ref())?;
        let handle = service.handle();
        // The rebuild loop: its own thread waits for saves, and builds on the runtime.
        let rebuilds = tokio::runtime::Handle::current();
        std::thread::Builder::new()
            .name("cargo-mcp-dev-watch".into())
            .spawn(move || {
                while let Some(changed) = saves.next() {
                    let saved = Instant::now();
                    let names: Vec<String> = changed
                        .iter()
                        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .collect();
                    eprintln!("cargo mcp dev: {} changed; rebuilding", names.join(", "));
                    match rebuilds.block_on(builder.build()) {
                        Ok(staged) => {
                            if let Err(error) = builder.publish(&staged) {
                                report(&handle, &format!("swapping in the new build: {error}"));
                                continue;
                            }
                            let line = format!(
                                "{} (save to swap: {:.2} s)",
                                summary(&staged),
                                saved.elapsed().as_secs_f64()
                            );
                            eprintln!("cargo mcp dev: {line}");
                            handle.log(LoggingLevel::Info, Some(LOGGER), json!(line));
                        }
                        Err(Failure { message }) => {
                            eprintln!("cargo mcp dev: the last good build keeps serving");
                            report(&handle, &message);
                        }
                    }
                }
            })
            .context("starting the watcher")?;
        if args.stdio {
            service.serve_stdio().await?;
            return Ok(ExitCode::SUCCESS);
        }
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{}", args.port))?;
        let local = listener.local_addr()?;
        service.ready().await;
        let app = page::router(Arc::new(page::PageInfo {
            name: project.package.clone(),
        }))
        .merge(service.into_router());
        // The line scripts wait for: where to point a client.
        eprintln!("cargo mcp dev: serving http://{local}/mcp (the dev page: http://{local}/)");
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The dev server: the crate's identity (from its first good build, else its manifest), every
/// kind of item advertised (a later build may add the first prompt), and the current build
/// proxied under its own names.
fn server(
    project: &Project,
    builder: &Builder,
    staged: Option<&Staged>,
) -> anyhow::Result<mcp_runtime::McpService> {
    let implementation = staged.and_then(|s| s.implementation.clone());
    let (name, version) = match &implementation {
        Some(info) => (info.name.clone(), info.version.clone()),
        None => (project.package.clone(), project.version.clone()),
    };
    let mut server = Server::new(name, version)
        .dynamic_tools()
        .dynamic_resources()
        .dynamic_prompts();
    if let Some(info) = &implementation {
        if let Some(title) = &info.title {
            server = server.title(title);
        }
        if let Some(description) = &info.description {
            server = server.description(description);
        }
    }
    if let Some(instructions) = staged.and_then(|s| s.instructions.as_deref()) {
        server = server.instructions(instructions);
    }
    // A copy of this executable runs the child, so that reinstalling or rebuilding `cargo-mcp`
    // while `dev` runs cannot take it away between two swaps.
    let exe = own_executable()?;
    let runner = builder.state.join(format!(
        "cargo-mcp-dev-child{}",
        std::env::consts::EXE_SUFFIX
    ));
    std::fs::copy(&exe, &runner)
        .with_context(|| format!("copying {} to {}", exe.display(), runner.display()))?;
    let child = StdioCommand::new(runner)
        .args(["mcp", "dev-child", "--current"])
        .arg(builder.current())
        .stderr(Stderr::Inherit);
    let upstream = Upstream::command(child)
        // A swap is the child exiting on purpose: it comes back at once.
        .backoff(Duration::from_millis(10), Duration::from_millis(500))
        .connect_timeout(Duration::from_secs(60));
    Ok(server.proxy("", upstream).build()?)
}

/// A path that opens this process's own executable. On Linux that is `/proc/self/exe`, which
/// still opens the running image after a rebuild or reinstall of `cargo-mcp` replaced (or
/// deleted) the file it was started from; elsewhere, the file it was started from.
fn own_executable() -> anyhow::Result<std::path::PathBuf> {
    let proc_self = std::path::Path::new("/proc/self/exe");
    if cfg!(target_os = "linux") && proc_self.exists() {
        return Ok(proc_self.to_path_buf());
    }
    std::env::current_exe().context("finding this executable")
}

/// One line on what a build serves.
fn summary(staged: &Staged) -> String {
    format!(
        "serving {} tools [{}], {} prompts [{}], {} resources and templates (compiled in {:.2} s)",
        staged.tools.len(),
        staged.tools.join(", "),
        staged.prompts.len(),
        staged.prompts.join(", "),
        staged.resources,
        staged.compile.as_secs_f64()
    )
}

/// A failed build, to every connected session.
fn report(handle: &mcp_runtime::ServerHandle, message: &str) {
    handle.log(
        LoggingLevel::Error,
        Some("cargo build"),
        json!(format!(
            "the last build failed; the one before keeps serving:\n{message}"
        )),
    );
}
