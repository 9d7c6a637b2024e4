//! The command line: `cargo mcp <job> ...`, parsed with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Cargo runs `cargo-mcp mcp ...` for `cargo mcp ...`: the first argument names the subcommand.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo")]
pub(crate) enum Cargo {
    /// Inspect, call, install and describe the MCP server of this crate.
    #[command(version, about, long_about = None)]
    Mcp(McpArgs),
}

/// `cargo mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The jobs, with these names, so users and scripts can rely on them.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start the server and print what it serves: tools (arguments, annotations), resources,
    /// templates, prompts, capabilities.
    Inspect(InspectArgs),
    /// Call one tool and print its result; exits 1 when the tool reports an error.
    Call(CallArgs),
    /// Read one resource and print its contents.
    Read(ReadArgs),
    /// Get one prompt and print its messages.
    Prompt(PromptArgs),
    /// Build in release, copy the binary to a stable place and write it into an MCP client's
    /// configuration.
    Install(InstallArgs),
    /// Write the MCP Registry `server.json` and the Server Card, checked against the
    /// constraints of their published schemas.
    Card(CardArgs),
    /// Make a new server crate that builds and serves at once.
    New(NewArgs),
    /// Serve this crate's server at a stable address and swap in each rebuild on save, keeping
    /// the clients' sessions; a dev page at `/`.
    Dev(DevArgs),
    /// The process `dev` proxies: runs the current build, exits when it is replaced.
    #[command(hide = true)]
    DevChild(DevChildArgs),
}

/// `cargo mcp new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The directory to create; its last component names the package.
    pub(crate) path: PathBuf,
    /// The package's name, when not the directory's.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Serve Streamable HTTP on 127.0.0.1 (`--port`, 8000 by default) instead of stdio.
    #[arg(long)]
    pub(crate) http: bool,
    /// Add a tool that runs as a task (the `tasks` feature).
    #[arg(long)]
    pub(crate) tasks: bool,
    /// Depend on the `mcp-runtime` in this directory (the crate's own directory, or a checkout
    /// of its repository). Without `--path` or `--git`: the checkout `cargo mcp` was installed
    /// from, when it is still there, else crates.io.
    #[arg(long = "path", value_name = "DIR", conflicts_with = "git")]
    pub(crate) runtime_path: Option<PathBuf>,
    /// Depend on the `mcp-runtime` of this git repository.
    #[arg(long, value_name = "URL")]
    pub(crate) git: Option<String>,
    /// With `--git`: the branch.
    #[arg(long, value_name = "BRANCH", requires = "git", conflicts_with_all = ["tag", "rev"])]
    pub(crate) branch: Option<String>,
    /// With `--git`: the tag.
    #[arg(long, value_name = "TAG", requires = "git", conflicts_with = "rev")]
    pub(crate) tag: Option<String>,
    /// With `--git`: the commit.
    #[arg(long, value_name = "REV", requires = "git")]
    pub(crate) rev: Option<String>,
}

/// `cargo mcp dev`.
#[derive(Debug, Args)]
pub(crate) struct DevArgs {
    /// The port of `http://127.0.0.1:PORT/mcp` and of the dev page (0: any free port).
    #[arg(
        long,
        value_name = "PORT",
        default_value_t = 6277,
        conflicts_with = "stdio"
    )]
    pub(crate) port: u16,
    /// Serve the client that started this process on its stdin and stdout instead.
    #[arg(long)]
    pub(crate) stdio: bool,
    /// How long to wait after a change for more before building, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub(crate) debounce: u64,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// `cargo mcp dev-child`.
#[derive(Debug, Args)]
pub(crate) struct DevChildArgs {
    /// The file naming the current build.
    #[arg(long, value_name = "FILE")]
    pub(crate) current: PathBuf,
}

/// Which binary of which package serves, and how it is built.
#[derive(Debug, Clone, Args)]
pub(crate) struct TargetArgs {
    /// Path to the crate's Cargo.toml (by default, the crate of the current directory).
    #[arg(long, value_name = "PATH")]
    pub(crate) manifest_path: Option<PathBuf>,
    /// The package to run, in a workspace of several.
    #[arg(short, long, value_name = "NAME")]
    pub(crate) package: Option<String>,
    /// The binary that serves, when the package has several.
    #[arg(long, value_name = "NAME", conflicts_with = "example")]
    pub(crate) bin: Option<String>,
    /// An example that serves, instead of a binary.
    #[arg(long, value_name = "NAME")]
    pub(crate) example: Option<String>,
    /// Cargo features to build with (comma- or space-separated).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub(crate) features: Option<String>,
    /// Arguments for the server binary, after `--`.
    #[arg(last = true, value_name = "SERVER_ARGS")]
    pub(crate) server_args: Vec<String>,
}

/// Where the server is: built from this crate and started over stdio, or running at a URL
/// (over TCP, or over a Unix domain socket).
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("running").multiple(true)))]
pub(crate) struct ConnectArgs {
    /// Talk to a running server over Streamable HTTP at this URL instead of starting one.
    #[arg(long, value_name = "URL", group = "running")]
    pub(crate) http: Option<String>,
    /// Talk to a running server over Streamable HTTP on the Unix domain socket at PATH; the
    /// endpoint is `--http URL`'s path, `http://localhost/mcp` without it.
    #[arg(long, value_name = "PATH", group = "running")]
    pub(crate) unix: Option<PathBuf>,
    /// A header for every HTTP request (`--header 'Authorization: Bearer ...'`); repeatable.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "running")]
    pub(crate) headers: Vec<String>,
    /// Build the server in release mode.
    #[arg(long)]
    pub(crate) release: bool,
    /// Seconds to wait for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) timeout: u64,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// `cargo mcp inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// Print JSON (the server's own list results) instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
}

/// `cargo mcp call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's name.
    pub(crate) tool: String,
    /// Its arguments, a JSON object (`'{"a": 1}'`); none means `{}`.
    pub(crate) arguments: Option<String>,
    /// Print the whole `CallToolResult` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
}

/// `cargo mcp read`.
#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    /// The resource's URI.
    pub(crate) uri: String,
    /// Print the whole `ReadResourceResult` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
}

/// `cargo mcp prompt`.
#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    /// The prompt's name.
    pub(crate) name: String,
    /// Its arguments, a JSON object of strings (`'{"code": "fn main() {}"}'`); none means `{}`.
    pub(crate) arguments: Option<String>,
    /// Print the whole `GetPromptResult` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
}

/// The clients `install` writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ClientName {
    /// Claude Desktop: `claude_desktop_config.json` (stdio only).
    ClaudeDesktop,
    /// Claude Code: the project's `.mcp.json`.
    ClaudeCode,
    /// VS Code: the project's `.vscode/mcp.json`.
    Vscode,
    /// Cursor: `~/.cursor/mcp.json`, or the project's `.cursor/mcp.json`.
    Cursor,
    /// Gemini CLI: `~/.gemini/settings.json`, or the project's `.gemini/settings.json`.
    GeminiCli,
    /// Codex: `~/.codex/config.toml` (`$CODEX_HOME`), or the project's `.codex/config.toml`.
    Codex,
}

/// Which of a client's configuration files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scope {
    /// The user's own file, for every project.
    User,
    /// The project's file (the workspace root of the crate).
    Project,
}

/// `cargo mcp install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The client to configure.
    #[arg(value_enum)]
    pub(crate) client: ClientName,
    /// The server's name in the client's configuration (by default the binary's name).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Configure a running Streamable HTTP server at this URL instead of this crate's binary.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// A header the client sends to the HTTP server (`--header 'Authorization: Bearer ...'`);
    /// repeatable.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,
    /// An environment variable for the server process (`--env KEY=VALUE`); repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE", conflicts_with = "url")]
    pub(crate) env: Vec<String>,
    /// Which configuration file: the user's or the project's (each client has a default).
    #[arg(long, value_enum)]
    pub(crate) scope: Option<Scope>,
    /// Write this file instead of the client's own.
    #[arg(long, value_name = "PATH")]
    pub(crate) config: Option<PathBuf>,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Build with this profile instead of `release` (`dev`, or one of the manifest's).
    #[arg(long, value_name = "NAME", conflicts_with = "url")]
    pub(crate) profile: Option<String>,
    /// Install the dev profile's build (`--profile dev`): what `cargo build` already made.
    #[arg(long, conflicts_with_all = ["profile", "url"])]
    pub(crate) debug: bool,
    /// Make the entry run the binary where cargo builds it (`target/<profile>/`) instead of a
    /// copy: every build changes what the client runs, and `cargo clean` breaks it.
    #[arg(long, conflicts_with = "url")]
    pub(crate) in_place: bool,
    /// Where the copy goes: `DIR/mcp-servers/<name>/` (by default `$CARGO_INSTALL_ROOT`, else
    /// `$CARGO_HOME`, else `~/.cargo`, as for `cargo install`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "in_place"])]
    pub(crate) root: Option<PathBuf>,
    /// Install `cargo mcp dev --stdio` in this crate instead of a build: the client sees every
    /// save live (builds nothing now).
    #[arg(long, conflicts_with_all = ["url", "in_place", "root", "profile", "debug"])]
    pub(crate) dev: bool,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// `cargo mcp card`.
#[derive(Debug, Args)]
pub(crate) struct CardArgs {
    /// The server's name in reverse-DNS form (`io.github.you/weather`); by default derived
    /// from the package's GitHub or GitLab `repository`.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub(crate) name: Option<String>,
    /// A public Streamable HTTP URL the server is reachable at; repeatable.
    #[arg(long = "url", value_name = "URL")]
    pub(crate) urls: Vec<String>,
    /// An OCI image that runs the server over stdio (`ghcr.io/you/weather:1.0.0`), listed as a
    /// package in `server.json`.
    #[arg(long, value_name = "IMAGE")]
    pub(crate) oci: Option<String>,
    /// The directory to write `server.json` and `server-card.json` into (by default the
    /// package's).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Seconds to wait for the server's answers.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) timeout: u64,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}
