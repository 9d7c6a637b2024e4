//! One rebuild of `cargo mcp dev`: `cargo build` (dev profile) with its diagnostics kept, the
//! executable copied to a generation of its own, and that copy started once and asked what it
//! serves before it may replace the running one.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_runtime::client::{Client, StdioCommand};
use mcp_runtime::protocol::Implementation;
use serde_json::Value;

use crate::cli::TargetArgs;
use crate::project::Project;

/// The most diagnostic text kept from one build for the clients (the terminal gets it all).
const MAX_DIAGNOSTICS: usize = 64 * 1024;

/// The copies of earlier builds kept beside the current one (a call may still be running on
/// the one before).
const KEEP: u64 = 2;

/// A build that is ready to serve.
#[derive(Debug, Clone)]
pub(crate) struct Staged {
    /// The copy the child runs.
    pub(crate) executable: PathBuf,
    /// Who it says it is, and its instructions.
    pub(crate) implementation: Option<Implementation>,
    pub(crate) instructions: Option<String>,
    /// The names it serves: tools, then prompts, then resources and templates.
    pub(crate) tools: Vec<String>,
    pub(crate) prompts: Vec<String>,
    pub(crate) resources: usize,
    /// How long `cargo build` took.
    pub(crate) compile: Duration,
}

/// Why a build cannot serve: the compiler's errors, or the new server's failure to start.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// What to tell the clients: the rendered diagnostics, or the start-up error.
    pub(crate) message: String,
}

/// Builds and stages the server of one crate, one build at a time.
pub(crate) struct Builder {
    pub(crate) project: Project,
    pub(crate) target: TargetArgs,
    /// `target/mcp-dev/<package>`: the copies and the `current` file.
    pub(crate) state: PathBuf,
    generation: u64,
}

impl Builder {
    pub(crate) fn new(project: Project, target: TargetArgs) -> anyhow::Result<Self> {
        let state = project
            .target_directory
            .join("mcp-dev")
            .join(&project.package);
        std::fs::create_dir_all(&state)?;
        // What an earlier run left.
        if let Ok(entries) = std::fs::read_dir(&state) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(Self {
            project,
            target,
            state,
            generation: 0,
        })
    }

    /// The file that names the build the child runs.
    pub(crate) fn current(&self) -> PathBuf {
        self.state.join("current.json")
    }

    /// Builds, copies and checks the new server. Cargo's progress goes to the terminal, and so
    /// do the diagnostics (rendered by rustc), which the failure carries too.
    pub(crate) async fn build(&mut self) -> Result<Staged, Failure> {
        let started = Instant::now();
        let (built, diagnostics) = self.compile()?;
        let compile = started.elapsed();
        self.generation += 1;
        let file_name = format!(
            "{}-{}{}",
            self.project.target.name(),
            self.generation,
            std::env::consts::EXE_SUFFIX
        );
        let executable = self.state.join(file_name);
        // A copy, not the build itself: the next build rewrites that file (and on Windows could
        // not while it runs), and a call may still be running on this one then.
        std::fs::copy(&built, &executable).map_err(|error| Failure {
            message: format!(
                "copying {} to {}: {error}",
                built.display(),
                executable.display()
            ),
        })?;
        let staged = self.check(executable, compile).await.map_err(|message| {
            let message = if diagnostics.is_empty() {
                message
            } else {
                format!("{message}\n{diagnostics}")
            };
            Failure { message }
        })?;
        Ok(staged)
    }

    /// Makes `staged` the one the child runs: the `current` file rewritten whole (a new file
    /// renamed over it), and the copies older than the last `KEEP` removed.
    pub(crate) fn publish(&self, staged: &Staged) -> std::io::Result<()> {
        let current = serde_json::json!({
            "program": staged.executable,
            "args": self.target.server_args,
            "generation": self.generation,
        });
        let temporary = self.state.join(format!("current.{}.tmp", self.generation));
        std::fs::write(&temporary, current.to_string())?;
        std::fs::rename(&temporary, self.current())?;
        if let Ok(entries) = std::fs::read_dir(&self.state) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let generation = name
                    .strip_prefix(&format!("{}-", self.project.target.name()))
                    .map(|rest| rest.trim_end_matches(std::env::consts::EXE_SUFFIX))
                    .and_then(|n| n.parse::<u64>().ok());
                if generation.is_some_and(|g| g + KEEP <= self.generation) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// `cargo build` in the dev profile: the executable and the warnings' text, or the errors.
    fn compile(&self) -> Result<(PathBuf, String), Failure> {
        let mut command = self.project.build_command(&self.target, "dev", "json");
        let spawned = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => {
                return Err(Failure {
                    message: format!("running `cargo build`: {error}"),
                });
            }
        };
        let mut built = None;
        let mut errors = String::new();
        let mut warnings = String::new();
        if let Some(stdout) = child.stdout.take() {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(artifact) = self.project.artifact(&message) {
                    built = Some(artifact.executable);
                }
                if message["reason"] != "compiler-message" {
                    continue;
                }
                let Some(rendered) = message["message"]["rendered"].as_str() else {
                    continue;
                };
                // The terminal gets what `cargo build` would print.
                eprint!("{rendered}");
                let into = match message["message"]["level"].as_str() {
                    Some("error" | "error: internal compiler error") => &mut errors,
                    _ => &mut warnings,
                };
                if into.len() + rendered.len() <= MAX_DIAGNOSTICS {
                    into.push_str(rendered);
                }
            }
        }
        let status = child.wait();
        match (status, built) {
            (Ok(status), Some(built)) if status.success() => Ok((built, warnings)),
            (Ok(status), _) => {
                if errors.is_empty() {
                    errors = format!("`cargo build` failed ({status}): see the terminal");
                }
                Err(Failure { message: errors })
            }
            (Err(error), _) => Err(Failure {
                message: format!("waiting for `cargo build`: {error}"),
            }),
        }
    }

    /// Starts the new copy once, as the child will, and asks what it serves.
    async fn check(&self, executable: PathBuf, compile: Duration) -> Result<Staged, String> {
        let command = StdioCommand::new(&executable)
            .args(&self.target.server_args)
            .env("MCP_RUNTIME_TRANSPORT", "stdio")
            .stderr(mcp_runtime::client::Stderr::Capture);
        let client = Client::builder()
            .client_info(Implementation::new(
                "cargo-mcp-dev",
                env!("CARGO_PKG_VERSION"),
            ))
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(30))
            .stdio(command)
            .await
            .map_err(|error| start_failure(&executable, &error.to_string(), None))?;
        let info = client.server_info().clone();
        let listed = async {
            let tools = match info.capabilities.tools {
                Some(_) => client.list_tools().await?,
                None => Vec::new(),
            };
            let prompts = match info.capabilities.prompts {
                Some(_) => client.list_prompts().await?,
                None => Vec::new(),
            };
            let resources = match info.capabilities.resources {
                Some(_) => {
                    client.list_resources().await?.len()
                        + client.list_resource_templates().await?.len()
                }
                None => 0,
            };
            Ok::<_, mcp_runtime::client::ClientError>((tools, prompts, resources))
        }
        .await;
        let tail = client.stderr_tail();
        let _ = client.close().await;
        let (tools, prompts, resources) = listed
            .map_err(|error| start_failure(&executable, &error.to_string(), tail.as_deref()))?;
        Ok(Staged {
            executable,
            implementation: info.implementation,
            instructions: info.instructions,
            tools: tools.into_iter().map(|t| t.name).collect(),
            prompts: prompts.into_iter().map(|p| p.name).collect(),
            resources,
            compile,
        })
    }
}

/// A new build that does not start (a panic in `main`, `Server::build` refusing a definition).
fn start_failure(executable: &Path, error: &str, stderr: Option<&str>) -> String {
    let mut message = format!(
        "the new build compiled but does not serve ({}): {error}",
        executable.display()
    );
    if let Some(stderr) = stderr.filter(|s| !s.trim().is_empty()) {
        message.push_str("\nits stderr:\n");
        message.push_str(stderr);
    }
    message
}
