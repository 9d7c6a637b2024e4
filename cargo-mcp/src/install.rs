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
    /// Every key this tool writes in an entry of this client.
    managed: &'static [&'static str],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json(JsonDialect),
    Toml,
}

impl ClientName {
    fn file(self) -> ClientFile {
        let json = |dialect, servers_key, managed| ClientFile {
            format: Format::Json(dialect),
            servers_key,
            managed,
        };
        match self {
            Self::ClaudeDesktop => json(
                JsonDialect::Strict,
                "mcpServers",
                &["command", "args", "env"],
            ),
            Self::ClaudeCode => json(
                JsonDialect::Strict,
                "mcpServers",
                &["type", "command", "args", "env", "url", "headers"],
            ),
            Self::Vscode => json(
                JsonDialect::WithComments,
                "servers",
                &["type", "command", "args", "env", "url", "headers"],
            ),
            Self::Cursor => json(
                JsonDialect::Strict,
                "mcpServers",
                &["command", "args", "env", "url", "headers"],
            ),
            Self::GeminiCli => json(
                JsonDialect::WithComments,
                "mcpServers",
                &["command", "args", "env", "url", "httpUrl", "headers"],
            ),
            Self::Codex => ClientFile {
                format: Format::Toml,
                servers_key: "mcp_servers",
                managed: &["command", "args", "env", "url", "http_headers"],
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
        Ok(Entry {
            set,
            managed: self.file().managed,
        })
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
        // Checked before the release build, which can take minutes.
        client.entry(&Launch::Stdio {
            command: String::new(),
            args: Vec::new(),
            env: Vec::new(),
        })?;
        let binary = project.build(&args.target, true)?;
        let binary = binary.canonicalize().unwrap_or(binary);
        let launch = Launch::Stdio {
            command: binary.to_string_lossy().into_owned(),
            args: args.target.server_args.clone(),
            env,
        };
        (
            launch,
            Some(project.target.name().to_owned()),
            project.workspace_root,
        )
    };
    let name = args
        .name
        .clone()
        .or(default_name)
        .context("name the server with `--name`")?;
    check_name(&name)?;
    let path = match &args.config {
        Some(path) => path.clone(),
        None => client.path(scope, &home()?, &project_dir),
    };
    let plan = plan(client, &path, &name, &launch)?;
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

/// Reads the file (if any) and computes its new text, checked to parse as the client reads it.
fn plan(client: ClientName, path: &Path, name: &str, launch: &Launch) -> anyhow::Result<Plan> {
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

/// Writes the new text: the old file copied aside first, the new one written beside it and
/// renamed over it (so a crash leaves one or the other, never half a file), with the old
/// file's permissions. Returns the backup's path.
fn write(plan: &Plan) -> anyhow::Result<Option<PathBuf>> {
    let path = &plan.path;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let backup = match &plan.before {
        Some(_) => {
            let backup = backup_path(path);
            std::fs::copy(path, &backup).with_context(|| {
                format!("backing up {} to {}", path.display(), backup.display())
            })?;
            Some(backup)
        }
        None => None,
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".cargo-mcp.tmp");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, &plan.after)
        .with_context(|| format!("writing {}", temporary.display()))?;
    if let Ok(metadata) = std::fs::metadata(path) {
        std::fs::set_permissions(&temporary, metadata.permissions())?;
    }
    std::fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(backup)
}

/// `<file>.<unix seconds>.bak`, or with `-2`, `-3`, ... when that exists already.
fn backup_path(path: &Path) -> PathBuf {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let with = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{seconds}{suffix}.bak"));
        PathBuf::from(name)
    };
    let mut candidate = with("");
    let mut n = 2;
    while candidate.exists() {
        candidate = with(&format!("-{n}"));
        n += 1;
    }
    candidate
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
