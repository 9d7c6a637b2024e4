//! `cargo mcp install CLIENT`: the server written into one client's configuration.
//!
//! Each client's file, key and entry shape, from its own documentation:
//!
//! | client | file | servers under | stdio entry | HTTP entry |
//! |---|---|---|---|---|
//! | Claude Desktop | `~/.config/Claude/claude_desktop_config.json` (Linux), `~/Library/Application Support/Claude/...` (macOS), `%APPDATA%\Claude\...` (Windows) | `mcpServers` | `command`, `args`, `env` | none: remote servers are added as connectors in the app |
//! | Claude Code | `<project>/.mcp.json` | `mcpServers` | `type: "stdio"`, `command`, `args`, `env` | `type: "http"`, `url`, `headers` |
//! | VS Code | `<project>/.vscode/mcp.json` | `servers` | `type: "stdio"`, `command`, `args`, `env` | `type: "http"`, `url`, `headers` |
//! | Cursor | `~/.cursor/mcp.json` or `<project>/.cursor/mcp.json` | `mcpServers` | `command`, `args`, `env` | `url`, `headers` |
//! | Gemini CLI | `~/.gemini/settings.json` or `<project>/.gemini/settings.json` | `mcpServers` | `command`, `args`, `env` | `httpUrl`, `headers` |
//! | Codex | `~/.codex/config.toml` (`$CODEX_HOME`) or `<project>/.codex/config.toml` | `[mcp_servers.<name>]` | `command`, `args`, `env` | `url`, `http_headers` |
//!
//! Sources (read for this table):
//! - Claude Desktop: <https://modelcontextprotocol.io/docs/develop/connect-local-servers>
//!   (the file, `mcpServers`, `command`/`args`/`env`, the macOS and Windows paths); the Linux
//!   path is where FastMCP's installer writes it (`src/fastmcp/cli/install/claude_desktop.py`
//!   in <https://github.com/jlowin/fastmcp>); remote servers are custom connectors added in
//!   the app, not in this file:
//!   <https://support.claude.com/en/articles/11175166-getting-started-with-custom-connectors-using-remote-mcp>.
//! - Claude Code: <https://code.claude.com/docs/en/mcp> (project scope is `.mcp.json` at the
//!   project root; `type` `stdio` or `http`, `url`, `headers`).
//! - VS Code: <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>
//!   (`.vscode/mcp.json`, a top-level `servers` object, `type` `stdio` with `command`/`args`/
//!   `env`, `type` `http` with `url`/`headers`; the file is JSON with comments).
//! - Cursor: <https://cursor.com/docs/mcp> (`~/.cursor/mcp.json` or `.cursor/mcp.json`,
//!   `mcpServers`, `command`/`args`/`env` for stdio, `url`/`headers` for remote servers).
//! - Gemini CLI: <https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md>
//!   and <https://geminicli.com/docs/cli/configuration> (`~/.gemini/settings.json` or
//!   `.gemini/settings.json`, `mcpServers`, `command`/`args`/`env`, `httpUrl` for Streamable
//!   HTTP where `url` means SSE, `headers`).
//! - Codex: <https://developers.openai.com/codex/mcp> (`~/.codex/config.toml`, or
//!   `.codex/config.toml` of a trusted project; `[mcp_servers.<name>]` with `command`/`args`/
//!   `env`, or `url` with `http_headers` for Streamable HTTP).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use crate::cli::{ClientName, InstallArgs, Scope};
use crate::edit::{self, Entry, JsonDialect};
use crate::project::Project;

/// How the client reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Launch {
    /// The client starts the binary and talks over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// The client talks to a running server over Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// What a client's configuration file is and where.
#[derive(Debug, Clone, Copy)]
struct ClientFile {
    format: Format,
    /// The key under which servers are listed.
    servers_key: &'static str,
    /// The keys of an HTTP entry, which a stdio entry removes.
    http_keys: &'static [&'static str],
    /// The keys of a stdio entry, which an HTTP entry removes (with Gemini CLI's SSE `url`).
    stdio_keys: &'static [&'static str],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json(JsonDialect),
    Toml,
}

impl ClientName {
    fn file(self) -> ClientFile {
        const STDIO: &[&str] = &["command", "args", "env"];
        let json = |dialect, servers_key, http_keys| ClientFile {
            format: Format::Json(dialect),
            servers_key,
            http_keys,
            stdio_keys: STDIO,
        };
        match self {
            Self::ClaudeDesktop => json(JsonDialect::Strict, "mcpServers", &[]),
            Self::ClaudeCode | Self::Cursor => {
                json(JsonDialect::Strict, "mcpServers", &["url", "headers"])
            }
            Self::Vscode => json(JsonDialect::WithComments, "servers", &["url", "headers"]),
            Self::GeminiCli => ClientFile {
                stdio_keys: &["command", "args", "env", "url"],
                ..json(
                    JsonDialect::WithComments,
                    "mcpServers",
                    &["url", "httpUrl", "headers"],
                )
            },
            Self::Codex => ClientFile {
                format: Format::Toml,
                servers_key: "mcp_servers",
                http_keys: &["url", "http_headers"],
                stdio_keys: STDIO,
            },
        }
    }

    /// The name users know the client by.
    fn title(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "Claude Desktop",
            Self::ClaudeCode => "Claude Code",
            Self::Vscode => "VS Code",
            Self::Cursor => "Cursor",
            Self::GeminiCli => "Gemini CLI",
            Self::Codex => "Codex",
        }
    }

    /// The scopes the client has a file for, the default first.
    fn scopes(self) -> &'static [Scope] {
        match self {
            Self::ClaudeDesktop => &[Scope::User],
            Self::ClaudeCode | Self::Vscode => &[Scope::Project],
            Self::Cursor | Self::GeminiCli | Self::Codex => &[Scope::User, Scope::Project],
        }
    }

    /// The configuration file for `scope`, under `home` or the `project` directory.
    fn path(self, scope: Scope, home: &Path, project: &Path) -> PathBuf {
        match (self, scope) {
            (Self::ClaudeDesktop, _) => claude_desktop_dir(home).join("claude_desktop_config.json"),
            (Self::ClaudeCode, _) => project.join(".mcp.json"),
            (Self::Vscode, _) => project.join(".vscode").join("mcp.json"),
            (Self::Cursor, Scope::User) => home.join(".cursor").join("mcp.json"),
            (Self::Cursor, Scope::Project) => project.join(".cursor").join("mcp.json"),
            (Self::GeminiCli, Scope::User) => home.join(".gemini").join("settings.json"),
            (Self::GeminiCli, Scope::Project) => project.join(".gemini").join("settings.json"),
            (Self::Codex, Scope::User) => match std::env::var_os("CODEX_HOME") {
                Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("config.toml"),
                _ => home.join(".codex").join("config.toml"),
            },
            (Self::Codex, Scope::Project) => project.join(".codex").join("config.toml"),
        }
    }

    /// The entry that makes this client start or reach the server.
    fn entry(self, launch: &Launch) -> anyhow::Result<Entry> {
        let mut set = Map::new();
        let pairs = |pairs: &[(String, String)]| -> Value {
            Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                    .collect(),
            )
        };
        let file = self.file();
        let remove = match launch {
            Launch::Stdio { .. } => file.http_keys,
            Launch::Http { .. } => file.stdio_keys,
        };
        match launch {
            Launch::Stdio { command, args, env } => {
                if matches!(self, Self::ClaudeCode | Self::Vscode) {
                    set.insert("type".into(), json!("stdio"));
                }
                set.insert("command".into(), json!(command));
                set.insert("args".into(), json!(args));
                if !env.is_empty() {
                    set.insert("env".into(), pairs(env));
                }
            }
            Launch::Http { url, headers } => {
                let (url_key, headers_key) = match self {
                    Self::ClaudeDesktop => bail!(
                        "Claude Desktop's configuration file starts stdio servers only: add a \
                         remote server in the app (Settings > Connectors > Add custom connector), \
                         or install this crate's binary without `--url`"
                    ),
                    Self::ClaudeCode | Self::Vscode => {
                        set.insert("type".into(), json!("http"));
                        ("url", "headers")
                    }
                    Self::Cursor => ("url", "headers"),
                    // `url` is SSE in Gemini CLI; Streamable HTTP is `httpUrl`.
                    Self::GeminiCli => ("httpUrl", "headers"),
                    Self::Codex => ("url", "http_headers"),
                };
                set.insert(url_key.into(), json!(url));
                if !headers.is_empty() {
                    set.insert(headers_key.into(), pairs(headers));
                }
            }
        }
        Ok(Entry { set, remove })
    }
}

/// Claude Desktop's directory on this platform.
fn claude_desktop_dir(home: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Claude")
    } else if cfg!(windows) {
        match std::env::var_os("APPDATA") {
            Some(dir) => PathBuf::from(dir).join("Claude"),
            None => home.join("AppData").join("Roaming").join("Claude"),
        }
    } else {
        match std::env::var_os("XDG_CONFIG_HOME") {
            Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir).join("Claude"),
            _ => home.join(".config").join("Claude"),
        }
    }
}

/// The user's home directory.
pub(crate) fn home() -> anyhow::Result<PathBuf> {
    std::env::home_dir()
        .filter(|home| !home.as_os_str().is_empty())
        .context("no home directory (set HOME)")
}

/// A server name every client accepts as a key: letters, digits, `-` and `_`.
fn check_name(name: &str) -> anyhow::Result<()> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        bail!(
            "`{name}` cannot name a server in every client: use 1 to 64 letters, digits, `-` or `_` (`--name`)"
        );
    }
    Ok(())
}

/// `KEY=VALUE`.
fn env_pair(text: &str) -> anyhow::Result<(String, String)> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => bail!("`--env {text}`: expected KEY=VALUE"),
    }
}

/// `Name: value`.
pub(crate) fn header_pair(text: &str) -> anyhow::Result<(String, String)> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => bail!("`--header {text}`: expected 'Name: value'"),
    }
}

/// What `install` decided to write, before it writes.
struct Plan {
    path: PathBuf,
    before: Option<String>,
    after: String,
}

pub(crate) fn run(args: &InstallArgs) -> anyhow::Result<ExitCode> {
    let client = args.client;
    let scopes = client.scopes();
    let scope = args.scope.unwrap_or(scopes[0]);
    if args.config.is_none() && !scopes.contains(&scope) {
        bail!(
            "{} has no {} configuration file that this tool writes (use `--config PATH`)",
            client.title(),
            match scope {
                Scope::User => "user",
                Scope::Project => "project",
            }
        );
    }
    let (launch, default_name, project_dir) = if let Some(url) = &args.url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("`--url {url}`: expected an http:// or https:// URL");
        }
        let headers = args
            .headers
            .iter()
            .map(|h| header_pair(h))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let project = Project::find(&args.target).ok();
        let name = project.as_ref().map(|p| p.target.name().to_owned());
        let dir = match &project {
            Some(project) => project.workspace_root.clone(),
            None => std::env::current_dir()?,
        };
        (
            Launch::Http {
                url: url.clone(),
                headers,
            },
            name,
            dir,
        )
    } else {
        let env = args
            .env
            .iter()
            .map(|e| env_pair(e))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let project = Project::find(&args.target)?;
        // Checked before the build, which can take minutes.
        client.entry(&Launch::Stdio {
            command: String::new(),
            args: Vec::new(),
            env: Vec::new(),
        })?;
        let name = args
            .name
            .clone()
            .unwrap_or_else(|| project.target.name().to_owned());
        check_name(&name)?;
        let launch = if args.dev {
            dev_launch(args, &project, env)?
        } else {
            let binary = build_and_place(args, &project, &name)?;
            Launch::Stdio {
                command: binary.to_string_lossy().into_owned(),
                args: args.target.server_args.clone(),
                env,
            }
        };
        (launch, Some(name), project.workspace_root)
    };
    let name = args
        .name
        .clone()
        .or(default_name)
        .context("name the server with `--name`")?;
    check_name(&name)?;
    let (path, confined_to) = match &args.config {
        Some(path) => (path.clone(), None),
        None => (
            client.path(scope, &home()?, &project_dir),
            (scope == Scope::Project).then_some(project_dir.as_path()),
        ),
    };
    let plan = plan(client, &path, confined_to, &name, &launch)?;
    if plan.path != path {
        println!(
            "{} leads through a symlink: writing its target, {}",
            path.display(),
            plan.path.display()
        );
    }
    let path = &plan.path;
    if plan.before.as_deref() == Some(plan.after.as_str()) {
        println!(
            "{}: `{name}` is already configured as this would write it; {} unchanged",
            client.title(),
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        print!("{}", diff(&plan));
        println!("(dry run: nothing written)");
        return Ok(ExitCode::SUCCESS);
    }
    let backup = write(&plan)?;
    match backup {
        Some(backup) => println!(
            "{}: wrote `{name}` into {} (the previous file is {})",
            client.title(),
            path.display(),
            backup.display()
        ),
        None => println!(
            "{}: wrote `{name}` into {} (a new file)",
            client.title(),
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the server (in release unless `--profile`/`--debug` says otherwise; cargo compiles
/// nothing when that build is fresh) and returns what the entry runs: a copy under the
/// install root, or, with `--in-place`, the build itself.
fn build_and_place(args: &InstallArgs, project: &Project, name: &str) -> anyhow::Result<PathBuf> {
    let profile = match (&args.profile, args.debug) {
        (Some(profile), _) => profile.as_str(),
        (None, true) => "dev",
        (None, false) => "release",
    };
    if profile == "release" {
        eprintln!(
            "building `{}` in release (`--debug` installs the dev build instead)",
            project.target.name()
        );
    }
    let built = project.build(&args.target, profile)?;
    let executable = built.executable.canonicalize().unwrap_or(built.executable);
    if built.fresh {
        eprintln!("the {profile} build was fresh: nothing compiled");
    }
    if args.in_place {
        eprintln!(
            "warning: the entry runs {} where cargo builds it: `cargo clean` removes it and every \
             build of this crate changes what the client runs (without `--in-place`, install \
             copies it to a place of its own)",
            executable.display()
        );
        return Ok(executable);
    }
    let root = match &args.root {
        Some(root) => root.clone(),
        None => install_root()?,
    };
    let copy = place(
        &executable,
        &root.join("mcp-servers").join(name),
        args.dry_run,
    )?;
    eprintln!(
        "the entry runs {}, a copy of the build (`cargo clean` leaves it; install again to \
         update it)",
        copy.display()
    );
    Ok(copy)
}

/// The entry of `--dev`: this `cargo-mcp` running `dev --stdio` on the crate's manifest, with
/// the `cargo` that ran it (a client's `PATH` often lacks `~/.cargo/bin`).
fn dev_launch(
    args: &InstallArgs,
    project: &Project,
    mut env: Vec<(String, String)>,
) -> anyhow::Result<Launch> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let manifest = project.package_dir.join("Cargo.toml");
    let manifest = manifest.canonicalize().unwrap_or(manifest);
    let mut dev_args = vec![
        "mcp".to_owned(),
        "dev".to_owned(),
        "--stdio".to_owned(),
        "--manifest-path".to_owned(),
        manifest.to_string_lossy().into_owned(),
        "-p".to_owned(),
        project.package.clone(),
    ];
    match &project.target {
        crate::project::Target::Bin(bin) => dev_args.extend(["--bin".to_owned(), bin.clone()]),
        crate::project::Target::Example(example) => {
            dev_args.extend(["--example".to_owned(), example.clone()]);
        }
    }
    if let Some(features) = &args.target.features {
        dev_args.extend(["--features".to_owned(), features.clone()]);
    }
    if !args.target.server_args.is_empty() {
        dev_args.push("--".to_owned());
        dev_args.extend(args.target.server_args.iter().cloned());
    }
    if !env.iter().any(|(key, _)| key == "CARGO") {
        let cargo = crate::project::cargo();
        let cargo = which(&cargo).unwrap_or_else(|| PathBuf::from(&cargo));
        env.push(("CARGO".to_owned(), cargo.to_string_lossy().into_owned()));
    }
    eprintln!(
        "the entry runs `cargo mcp dev --stdio` on {}: the client's server is rebuilt and swapped \
         on every save; the first start builds the crate (dev profile)",
        manifest.display()
    );
    Ok(Launch::Stdio {
        command: exe.to_string_lossy().into_owned(),
        args: dev_args,
        env,
    })
}

/// `program` as an absolute path: itself when it has a directory, else found on `PATH`.
fn which(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.canonicalize().ok();
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Where `cargo install` puts what it installs: `$CARGO_INSTALL_ROOT`, else `$CARGO_HOME`, else
/// `~/.cargo`.
fn install_root() -> anyhow::Result<PathBuf> {
    for variable in ["CARGO_INSTALL_ROOT", "CARGO_HOME"] {
        if let Some(dir) = std::env::var_os(variable).filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
    }
    Ok(home()?.join(".cargo"))
}

/// Copies `executable` into `dir` (created when missing) under its own file name, replacing an
/// older copy atomically (a client running the old one keeps running it), and returns the
/// copy's path. With `dry_run`, only the path.
fn place(executable: &Path, dir: &Path, dry_run: bool) -> anyhow::Result<PathBuf> {
    let file_name = executable
        .file_name()
        .with_context(|| format!("{} names no file", executable.display()))?;
    let destination = dir.join(file_name);
    if dry_run {
        return Ok(destination);
    }
    let bytes =
        std::fs::read(executable).with_context(|| format!("reading {}", executable.display()))?;
    if std::fs::read(&destination).is_ok_and(|old| old == bytes) {
        return Ok(destination);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let names = (0..100).map(|_| {
        format!(
            ".{}.{:016x}.cargo-mcp.tmp",
            file_name.to_string_lossy(),
            random()
        )
    });
    let (temporary, file) = create_new(dir, names, &bytes)?;
    let placed = (|| {
        file.set_permissions(std::fs::metadata(executable)?.permissions())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, &destination)
    })();
    if let Err(error) = placed {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("installing {}", destination.display()));
    }
    Ok(destination)
}

/// Finds the file to write (`resolve`), reads it (if any) and computes its new text, checked to
/// parse as the client reads it.
fn plan(
    client: ClientName,
    config: &Path,
    confined_to: Option<&Path>,
    name: &str,
    launch: &Launch,
) -> anyhow::Result<Plan> {
    let path = &resolve(config, confined_to)?;
    let before = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let file = client.file();
    let entry = client.entry(launch)?;
    let text = before.as_deref().unwrap_or("");
    let after = match file.format {
        Format::Json(dialect) => edit::upsert_json(text, dialect, file.servers_key, name, &entry),
        Format::Toml => edit::upsert_toml(text, file.servers_key, name, &entry),
    }
    .with_context(|| format!("{} (left as it is)", path.display()))?;
    check_parses(file.format, &after)
        .with_context(|| format!("the new {} would not parse", path.display()))?;
    Ok(Plan {
        path: path.to_owned(),
        before,
        after,
    })
}

/// Whether `text` reads as the client reads its file.
fn check_parses(format: Format, text: &str) -> anyhow::Result<()> {
    match format {
        Format::Json(JsonDialect::Strict) => {
            serde_json::from_str::<Value>(text)?;
        }
        Format::Json(JsonDialect::WithComments) => {
            jsonc_parser::parse_to_value(text, &Default::default())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Format::Toml => {
            text.parse::<toml_edit::DocumentMut>()?;
        }
    }
    Ok(())
}

/// The change as a unified diff.
fn diff(plan: &Plan) -> String {
    let before = plan.before.as_deref().unwrap_or("");
    let path = plan.path.display().to_string();
    let old = if plan.before.is_some() {
        path.clone()
    } else {
        "/dev/null".to_owned()
    };
    similar::TextDiff::from_lines(before, &plan.after)
        .unified_diff()
        .header(&old, &path)
        .to_string()
}

/// The file to write for the configuration at `path`: `path` itself, or, when it or a directory
/// on the way is a symlink, where the link leads, so the link stays a link and its target gets
/// the server. A project's file (`confined_to` its directory) that leads outside the project is
/// refused: a repository can ship `.vscode/mcp.json` as a link to any file of the user's.
fn resolve(path: &Path, confined_to: Option<&Path>) -> anyhow::Result<PathBuf> {
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let resolved = match std::fs::canonicalize(path) {
        Ok(target) => target,
        Err(_) if linked => bail!(
            "{} is a symlink to {}, which does not exist: left as it is (point the link at a \
             file, or remove it)",
            path.display(),
            std::fs::read_link(path)
                .map(|target| target.display().to_string())
                .unwrap_or_else(|_| "nothing".to_owned())
        ),
        // A new file: where its directory (the nearest one that exists) leads.
        Err(_) => {
            let mut existing = path;
            let mut rest = Vec::new();
            while let Some(parent) = existing.parent().filter(|p| !p.as_os_str().is_empty()) {
                rest.push(existing.file_name().unwrap_or_default());
                existing = parent;
                if existing.exists() {
                    break;
                }
            }
            let mut resolved = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.into());
            resolved.extend(rest.iter().rev());
            resolved
        }
    };
    if let Some(project) = confined_to {
        let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.into());
        if !resolved.starts_with(&project) {
            bail!(
                "{} leads through a symlink to {}, outside the project: not written, since a \
                 repository can point its files anywhere (to write there, pass `--config {}`)",
                path.display(),
                resolved.display(),
                resolved.display()
            );
        }
    }
    // Not absolute when the path was relative and nothing of it exists: leave it as given.
    Ok(if resolved.is_absolute() {
        resolved
    } else {
        path.to_owned()
    })
}

/// Writes the new text: the old text kept in a backup first, the new text written to a file
/// of its own beside the configuration and renamed over it (so a crash leaves one or the other,
/// never half a file), with the old file's permissions. Both the backup and the temporary file
/// are created exclusively (`O_EXCL`), the temporary one under a random name, so nothing planted
/// beside the configuration (a symlink to another file) is written through. Returns the
/// backup's path.
fn write(plan: &Plan) -> anyhow::Result<Option<PathBuf>> {
    let path = &plan.path;
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir,
        None => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file_name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_string_lossy()
        .into_owned();
    let backup = match &plan.before {
        Some(before) => {
            let seconds = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default();
            let names = (1..=100).map(|n| match n {
                1 => format!("{file_name}.{seconds}.bak"),
                n => format!("{file_name}.{seconds}-{n}.bak"),
            });
            let (backup, _) = create_new(dir, names, before.as_bytes())
                .with_context(|| format!("backing up {}", path.display()))?;
            Some(backup)
        }
        None => None,
    };
    let names = (0..100).map(|_| format!(".{file_name}.{:016x}.cargo-mcp.tmp", random()));
    let (temporary, file) = create_new(dir, names, plan.after.as_bytes())
        .with_context(|| format!("writing beside {}", path.display()))?;
    let replaced = (|| {
        if let Ok(metadata) = std::fs::metadata(path) {
            file.set_permissions(metadata.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = replaced {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("replacing {}", path.display()));
    }
    Ok(backup)
}

/// Creates the first of `names` in `dir` that does not exist yet (as a file of its own: never
/// through a symlink or over anything there) and writes `bytes` into it.
fn create_new(
    dir: &Path,
    names: impl IntoIterator<Item = String>,
    bytes: &[u8],
) -> anyhow::Result<(PathBuf, std::fs::File)> {
    use std::io::Write;
    for name in names {
        let path = dir.join(name);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                if let Err(error) = file.write_all(bytes) {
                    drop(file);
                    let _ = std::fs::remove_file(&path);
                    return Err(error).with_context(|| format!("writing {}", path.display()));
                }
                return Ok((path, file));
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => {
                return Err(error).with_context(|| format!("creating {}", path.display()));
            }
        }
    }
    bail!("every name tried in {} is taken", dir.display())
}

/// 64 unpredictable bits: std's hasher keys are random per process and per `RandomState`.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Launch {
        Launch::Stdio {
            command: "/p/target/release/calc".into(),
            args: vec!["--verbose".into()],
            env: vec![("RUST_LOG".into(), "info".into())],
        }
    }

    fn http() -> Launch {
        Launch::Http {
            url: "https://calc.example.com/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t".into())],
        }
    }

    #[test]
    fn each_client_gets_its_documented_shape() {
        let set =
            |client: ClientName, launch: &Launch| Value::Object(client.entry(launch).unwrap().set);
        assert_eq!(
            set(ClientName::ClaudeDesktop, &stdio()),
            json!({"command": "/p/target/release/calc", "args": ["--verbose"], "env": {"RUST_LOG": "info"}})
        );
        assert_eq!(
            set(ClientName::Vscode, &stdio())["type"],
            "stdio",
            "VS Code and Claude Code name the type"
        );
        assert_eq!(
            set(ClientName::ClaudeCode, &http()),
            json!({"type": "http", "url": "https://calc.example.com/mcp", "headers": {"Authorization": "Bearer t"}})
        );
        assert_eq!(
            set(ClientName::Cursor, &http()),
            json!({"url": "https://calc.example.com/mcp", "headers": {"Authorization": "Bearer t"}})
        );
        assert_eq!(
            set(ClientName::GeminiCli, &http())["httpUrl"],
            "https://calc.example.com/mcp"
        );
        assert_eq!(
            set(ClientName::Codex, &http()),
            json!({"url": "https://calc.example.com/mcp", "http_headers": {"Authorization": "Bearer t"}})
        );
        let refused = ClientName::ClaudeDesktop
            .entry(&http())
            .unwrap_err()
            .to_string();
        assert!(refused.contains("Connectors"), "{refused}");
    }

    #[test]
    fn files_are_where_each_client_reads_them() {
        let home = Path::new("/home/u");
        let project = Path::new("/work/calc");
        let path = |client: ClientName, scope| client.path(scope, home, project);
        if cfg!(target_os = "linux") && std::env::var_os("XDG_CONFIG_HOME").is_none() {
            assert_eq!(
                path(ClientName::ClaudeDesktop, Scope::User),
                Path::new("/home/u/.config/Claude/claude_desktop_config.json")
            );
        }
        assert_eq!(
            path(ClientName::ClaudeCode, Scope::Project),
            Path::new("/work/calc/.mcp.json")
        );
        assert_eq!(
            path(ClientName::Vscode, Scope::Project),
            Path::new("/work/calc/.vscode/mcp.json")
        );
        assert_eq!(
            path(ClientName::Cursor, Scope::User),
            Path::new("/home/u/.cursor/mcp.json")
        );
        assert_eq!(
            path(ClientName::GeminiCli, Scope::Project),
            Path::new("/work/calc/.gemini/settings.json")
        );
        if std::env::var_os("CODEX_HOME").is_none() {
            assert_eq!(
                path(ClientName::Codex, Scope::User),
                Path::new("/home/u/.codex/config.toml")
            );
        }
    }

    /// A directory of the test's own, removed at its end.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("cargo-mcp-install-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// `install` into `config` as `run` does it, after the build.
    fn install(client: ClientName, config: &Path, launch: &Launch) -> anyhow::Result<()> {
        let plan = plan(client, config, None, "calc", launch)?;
        write(&plan)?;
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_symlink_is_not_written_through() {
        let scratch = Scratch::new("planted");
        let vscode = scratch.0.join("repo/.vscode");
        std::fs::create_dir_all(&vscode).unwrap();
        let precious = scratch.0.join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        let config = vscode.join("mcp.json");
        std::fs::write(&config, "{\"servers\": {}}\n").unwrap();
        // What a repository can ship beside its configuration.
        std::os::unix::fs::symlink("../../precious.txt", vscode.join("mcp.json.cargo-mcp.tmp"))
            .unwrap();

        install(ClientName::Vscode, &config, &stdio()).unwrap();

        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
        let metadata = std::fs::symlink_metadata(&config).unwrap();
        assert!(
            metadata.file_type().is_file(),
            "the config became {metadata:?}"
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        assert_eq!(
            written["servers"]["calc"]["command"],
            "/p/target/release/calc"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_config_is_written_through_to_its_target() {
        let scratch = Scratch::new("linked");
        let dotfiles = scratch.0.join("dotfiles");
        let cursor = scratch.0.join("home/.cursor");
        std::fs::create_dir_all(&dotfiles).unwrap();
        std::fs::create_dir_all(&cursor).unwrap();
        let target = dotfiles.join("cursor-mcp.json");
        std::fs::write(&target, "{\"mcpServers\": {}}\n").unwrap();
        let config = cursor.join("mcp.json");
        std::os::unix::fs::symlink(&target, &config).unwrap();

        install(ClientName::Cursor, &config, &stdio()).unwrap();

        assert!(
            std::fs::symlink_metadata(&config)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced by a file"
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        assert_eq!(
            written["mcpServers"]["calc"]["command"],
            "/p/target/release/calc"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_project_file_linked_outside_the_project_is_refused() {
        let scratch = Scratch::new("outside");
        let project = scratch.0.join("repo");
        std::fs::create_dir_all(project.join(".vscode")).unwrap();
        let precious = scratch.0.join("settings.json");
        std::fs::write(&precious, "{}\n").unwrap();
        let config = project.join(".vscode/mcp.json");
        std::os::unix::fs::symlink("../../settings.json", &config).unwrap();

        let error = plan(
            ClientName::Vscode,
            &config,
            Some(&project),
            "calc",
            &stdio(),
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(error.contains("outside the project"), "{error}");
        assert!(error.contains("--config"), "{error}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "{}\n");
    }

    #[test]
    fn reinstalling_keeps_headers_and_env_added_by_hand() {
        let scratch = Scratch::new("merge");
        let config = scratch.0.join(".mcp.json");
        let http_only = Launch::Http {
            url: "https://calc.example.com/mcp".into(),
            headers: Vec::new(),
        };
        install(ClientName::ClaudeCode, &config, &http_only).unwrap();
        // The user adds a header by hand, then installs again (a new URL).
        let text = std::fs::read_to_string(&config).unwrap();
        let text = text.replace(
            "\"url\": \"https://calc.example.com/mcp\"",
            "\"url\": \"https://calc.example.com/mcp\",\n      \"headers\": {\"X-Team\": \"blue\"}",
        );
        std::fs::write(&config, text).unwrap();
        let moved = Launch::Http {
            url: "https://calc2.example.com/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t".into())],
        };
        install(ClientName::ClaudeCode, &config, &moved).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        assert_eq!(
            written["mcpServers"]["calc"],
            json!({
                "type": "http",
                "url": "https://calc2.example.com/mcp",
                "headers": {"X-Team": "blue", "Authorization": "Bearer t"}
            })
        );
    }

    #[test]
    fn the_installed_copy_outlives_the_build_and_is_replaced_whole() {
        let scratch = Scratch::new("place");
        let target = scratch.0.join("target/release");
        std::fs::create_dir_all(&target).unwrap();
        let built = target.join("calc");
        std::fs::write(&built, "version 1").unwrap();
        let servers = scratch.0.join("root/mcp-servers/calc");

        let copy = place(&built, &servers, false).unwrap();
        assert_eq!(copy, servers.join("calc"));
        // `cargo clean`.
        std::fs::remove_dir_all(scratch.0.join("target")).unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "version 1");

        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(&built, "version 2").unwrap();
        assert_eq!(place(&built, &servers, false).unwrap(), copy);
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "version 2");
        let left: Vec<_> = std::fs::read_dir(&servers).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left beside the copy");
    }

    #[test]
    fn names_and_pairs_are_checked() {
        assert!(check_name("calc_2-x").is_ok());
        for bad in ["", "a b", "a.b", "é", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(env_pair("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(env_pair("=x").is_err());
        assert!(env_pair("novalue").is_err());
        assert_eq!(
            header_pair("Authorization: Bearer a:b").unwrap(),
            ("Authorization".into(), "Bearer a:b".into())
        );
        assert!(header_pair("nocolon").is_err());
    }
}
