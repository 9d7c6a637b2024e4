//! `cargo mcp new PATH`: a server crate that builds and serves at once: a tool, a resource and
//! a prompt, the logging lines (with `RUST_LOG`), a test through the in-process client, and the
//! `Cargo.toml` lines the README teaches, `[dependencies]` and `[dev-dependencies]` both.
//!
//! The `mcp-runtime` line points where the user's runtime comes from: `--path DIR`, `--git URL`
//! (with `--branch`, `--tag` or `--rev`), else the checkout this `cargo mcp` was installed from
//! while it is still there, else crates.io. A directory that exists is refused and left as it
//! is, as `cargo new` does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::cli::NewArgs;

/// Where `mcp-runtime` comes from, as a dependency's inline table (without `features`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Path(PathBuf),
    Git {
        url: String,
        reference: Option<(&'static str, String)>,
    },
    Registry,
}

impl Source {
    /// `{ path = "..." }`, `{ git = "...", tag = "..." }` or `"0.1"`, with `features` added to
    /// the table when given.
    fn dependency(&self, features: &[&str]) -> String {
        let features = if features.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = features.iter().map(|f| toml_string(f)).collect();
            format!(", features = [{}]", list.join(", "))
        };
        match self {
            Self::Path(path) => format!(
                "{{ path = {}{features} }}",
                toml_string(&path.to_string_lossy())
            ),
            Self::Git { url, reference } => {
                let reference = match reference {
                    Some((key, value)) => format!(", {key} = {}", toml_string(value)),
                    None => String::new(),
                };
                format!("{{ git = {}{reference}{features} }}", toml_string(url))
            }
            Self::Registry if features.is_empty() => {
                format!("\"{}\"", env!("CARGO_PKG_VERSION"))
            }
            Self::Registry => format!(
                "{{ version = \"{}\"{features} }}",
                env!("CARGO_PKG_VERSION")
            ),
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Path(path) => format!("the mcp-runtime in {}", path.display()),
            Self::Git { url, .. } => format!("the mcp-runtime of {url}"),
            Self::Registry => format!("mcp-runtime {} from crates.io", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_owned()
}

/// The runtime next to this package in the checkout it was built from, when that is still
/// there (a `cargo install --path cargo-mcp` user); `None` for an install from crates.io.
fn checkout_runtime() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    manifest
        .contains("name = \"mcp-runtime\"")
        .then(|| dir.canonicalize().ok())
        .flatten()
}

/// A package name cargo accepts: ASCII letters, digits, `-` and `_`, not starting with a digit.
fn check_package_name(name: &str) -> anyhow::Result<()> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.len() <= 64;
    if !valid {
        bail!(
            "`{name}` is not a package name cargo accepts: letters, digits, `-` and `_`, starting \
             with a letter (choose one with `--name`)"
        );
    }
    Ok(())
}

pub(crate) fn run(args: &NewArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.path;
    if std::fs::symlink_metadata(dir).is_ok() {
        bail!(
            "{} exists: `cargo mcp new` makes a new directory and leaves this one as it is",
            dir.display()
        );
    }
    let name = match &args.name {
        Some(name) => name.clone(),
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .with_context(|| format!("{} names no directory", dir.display()))?,
    };
    check_package_name(&name)?;
    let source = match (&args.runtime_path, &args.git) {
        (Some(path), _) => {
            let path = path
                .canonicalize()
                .with_context(|| format!("--path {}", path.display()))?;
            // A checkout of the repository: its `mcp-runtime/` member.
            let crate_dir = if path.join("mcp-runtime/Cargo.toml").is_file() {
                path.join("mcp-runtime")
            } else {
                path
            };
            if !crate_dir.join("Cargo.toml").is_file() {
                bail!(
                    "no Cargo.toml in {}: `--path` names the mcp-runtime crate's directory or a \
                     checkout of its repository",
                    crate_dir.display()
                );
            }
            Source::Path(crate_dir)
        }
        (None, Some(url)) => Source::Git {
            url: url.clone(),
            reference: match (&args.branch, &args.tag, &args.rev) {
                (Some(branch), _, _) => Some(("branch", branch.clone())),
                (_, Some(tag), _) => Some(("tag", tag.clone())),
                (_, _, Some(rev)) => Some(("rev", rev.clone())),
                _ => None,
            },
        },
        (None, None) => checkout_runtime().map_or(Source::Registry, Source::Path),
    };
    let files = files(&name, &source, args.http, args.tasks);
    // Everything is written under a temporary name first and moved into place at the end, so a
    // failure leaves no half-made crate behind.
    let parent = match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => parent.to_path_buf(),
        None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let staging = parent.join(format!(".{name}.cargo-mcp-new-{}", std::process::id()));
    let written = (|| -> anyhow::Result<()> {
        for (file, text) in &files {
            let path = staging.join(file);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(error);
    }
    // `rename` onto a directory that appeared meanwhile fails (or, for an empty one, would
    // replace it): checked once more right before.
    if std::fs::symlink_metadata(dir).is_ok() {
        let _ = std::fs::remove_dir_all(&staging);
        bail!("{} appeared meanwhile: left as it is", dir.display());
    }
    if let Err(error) = std::fs::rename(&staging, dir) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(error).with_context(|| format!("creating {}", dir.display()));
    }
    println!(
        "created `{name}` in {} (depending on {})",
        dir.display(),
        source.describe()
    );
    println!(
        "next: cd {} && cargo mcp dev    (or cargo run, cargo test, cargo mcp install claude-desktop)",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The `production` profile a new crate gets: the one file the guide's Deployment and
/// Performance chapters include and `scripts/first-hour.sh` builds.
const PRODUCTION: &str = include_str!("production.toml");

/// The files of the new crate, by path.
fn files(name: &str, source: &Source, http: bool, tasks: bool) -> Vec<(&'static str, String)> {
    let runtime = source.dependency(&[]);
    let testing = source.dependency(&["testing"]);
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
description = "A Model Context Protocol server."

[dependencies]
mcp-runtime = {runtime}
tokio = {{ version = "1", features = ["macros", "rt-multi-thread"] }}
# For your own argument and result types (`#[derive(Deserialize, Serialize, JsonSchema)]`):
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"
# The server's logs, on stderr, filtered by `RUST_LOG`:
tracing-subscriber = {{ version = "0.3", features = ["env-filter"] }}

[dev-dependencies]
mcp-runtime = {testing}
serde_json = "1"

{PRODUCTION}"#
    );
    let serve = if http {
        r#"    // `--port PORT` (8000 by default); `cargo mcp dev` serves it over stdio to its own
    // address instead.
    let port = std::env::args()
        .skip_while(|a| a != "--port")
        .nth(1)
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(8000);
    server().serve_http(("127.0.0.1", port)).await"#
    } else {
        "    server().serve_stdio().await"
    };
    let task_tool = if tasks {
        r#"
/// Count to `to`, slowly, reporting progress: a client that supports tasks may run it as one
/// and poll for its result.
#[tool(task = "optional")]
async fn count(
    /// Where to stop.
    #[arg(default = 5)]
    to: u32,
    ctx: Context,
) -> String {
    for n in 1..=to {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        ctx.progress(f64::from(n), f64::from(to), format!("{n} of {to}"))
            .await;
    }
    format!("counted to {to}")
}
"#
    } else {
        ""
    };
    let main = format!(
        r#"//! {name}: a Model Context Protocol server.

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {{
    a + b
}}
{task_tool}
/// What this server is for, as a client can read it.
#[resource("about://{name}", mime_type = "text/plain")]
async fn about() -> String {{
    format!("{{}} {{}}: adds numbers.", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
}}

/// Ask for a sum, in words.
#[prompt]
fn sum(
    /// The numbers to add, in any words.
    numbers: String,
) -> String {{
    format!("Add these numbers with the `add` tool and say the total: {{numbers}}")
}}

/// The server: every `#[tool]`, `#[resource]` and `#[prompt]` of this crate.
fn server() -> Server {{
    Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
        .description(env!("CARGO_PKG_DESCRIPTION"))
}}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {{
    // Logs go to stderr (over stdio, stdout carries the protocol); `RUST_LOG=debug` for more.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
{serve}
}}

#[cfg(test)]
mod tests {{
    use super::*;
    use mcp_runtime::testing::Client;

    #[tokio::test]
    async fn adds() -> Result<(), Box<dyn std::error::Error>> {{
        let client = Client::connect(server()).await?;
        let result = client
            .call_tool("add", serde_json::json!({{"a": 2, "b": 3}}))
            .await?;
        assert_eq!(
            result.structured_content,
            Some(serde_json::json!({{"result": 5}}))
        );
        Ok(())
    }}
}}
"#
    );
    vec![
        ("Cargo.toml", manifest),
        ("src/main.rs", main),
        ("README.md", readme(name, http)),
        (".gitignore", "/target\n".to_owned()),
    ]
}

fn readme(name: &str, http: bool) -> String {
    let transport = if http {
        "Streamable HTTP on `http://127.0.0.1:8000/mcp` (`-- --port PORT` for another)"
    } else {
        "stdio"
    };
    format!(
        "# {name}\n\nA Model Context Protocol server built with `mcp-runtime`; it serves {transport}.\n\n\
         ```sh\n\
         cargo mcp dev                       # serve it at http://127.0.0.1:6277/mcp, rebuilt on every save; the dev page at /\n\
         cargo test                          # its tests, through the in-process client\n\
         cargo mcp inspect                   # what it serves\n\
         cargo mcp install claude-desktop    # into a client (or claude-code, vscode, cursor, gemini-cli, codex)\n\
         ```\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependency_line_says_where_the_runtime_comes_from() {
        let path = Source::Path(PathBuf::from("/src/mcp-runtime/mcp-runtime"));
        assert_eq!(
            path.dependency(&[]),
            r#"{ path = "/src/mcp-runtime/mcp-runtime" }"#
        );
        assert_eq!(
            path.dependency(&["testing"]),
            r#"{ path = "/src/mcp-runtime/mcp-runtime", features = ["testing"] }"#
        );
        let git = Source::Git {
            url: "https://example.com/r.git".into(),
            reference: Some(("tag", "v0.1.0".into())),
        };
        assert_eq!(
            git.dependency(&["testing"]),
            r#"{ git = "https://example.com/r.git", tag = "v0.1.0", features = ["testing"] }"#
        );
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(Source::Registry.dependency(&[]), format!("\"{version}\""));
    }

    #[test]
    fn the_manifest_has_a_production_profile_built_on_release() {
        let files = files("weather", &Source::Registry, false, false);
        let (_, manifest) = files
            .iter()
            .find(|(path, _)| *path == "Cargo.toml")
            .expect("a manifest");
        let manifest: toml_edit::DocumentMut = manifest.parse().expect("valid TOML");
        let production = &manifest["profile"]["production"];
        assert_eq!(production["inherits"].as_str(), Some("release"));
        assert_eq!(production["lto"].as_str(), Some("fat"));
        assert_eq!(production["codegen-units"].as_integer(), Some(1));
        // The guide shows the profile the template writes: its chapters include that very file.
        let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guide/src");
        for chapter in ["deployment.md", "performance.md"] {
            let text = std::fs::read_to_string(guide.join(chapter)).expect("the guide's chapter");
            assert!(
                text.contains("{{#include ../../cargo-mcp/src/production.toml}}"),
                "guide/src/{chapter} does not include the profile `cargo mcp new` writes"
            );
        }
    }

    #[test]
    fn package_names_are_checked() {
        assert!(check_package_name("weather-server").is_ok());
        for bad in ["", "1up", "a b", "é", "a/b"] {
            assert!(check_package_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_existing_directory_is_refused_and_left_alone() {
        let dir = std::env::temp_dir().join(format!("cargo-mcp-new-exists-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine.txt"), "mine").unwrap();
        let args = NewArgs {
            path: dir.clone(),
            name: Some("weather".into()),
            http: false,
            tasks: false,
            runtime_path: None,
            git: None,
            branch: None,
            tag: None,
            rev: None,
        };
        let error = run(&args).unwrap_err().to_string();
        assert!(error.contains("exists"), "{error}");
        let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(entries.len(), 1);
        assert_eq!(
            std::fs::read_to_string(dir.join("mine.txt")).unwrap(),
            "mine"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
