//! Surface snapshots: a server's public surface in a reviewed golden file, and a test that fails
//! when it changes, saying which changes break clients.
//!
//! The *surface* is what clients can discover: `tools/list`, `resources/list`,
//! `resources/templates/list` and `prompts/list` (every page), as the server answers them on
//! each protocol revision it speaks ([`SURFACE_REVISIONS`]), plus the `serverInfo` name and
//! version. One call in a test records it:
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::testing::assert_surface;
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # async fn test() {
//! // In `#[tokio::test] async fn surface() { ... }`:
//! let server = Server::builder().name("calculator").version("1.4.0").tool(add);
//! assert_surface(server, "tests/mcp-surface.json").await;
//! # }
//! ```
//!
//! A relative path is taken from the package's root (`CARGO_MANIFEST_DIR`, which `cargo test`
//! sets), so the file sits beside `Cargo.toml` whichever directory the test runs from.
//!
//! # What happens
//!
//! - **The file matches** (compared as JSON values): the test passes.
//! - **The file is missing**: it is written and the test fails once, asking for a review, the
//!   way a new insta or trybuild snapshot does. On CI (the `CI` variable is set) nothing is
//!   written: a snapshot is created by a developer and committed.
//! - **The surface changed**: the test fails with every change classified as `breaking` or
//!   `non-breaking` and a line diff of the file, and writes nothing.
//! - **`MCP_SURFACE_UPDATE=1`** ([`UPDATE_VAR`]): the file is rewritten with what the server
//!   serves now and the test passes, unless the [breaking-change policy](#breaking-changes)
//!   refuses. Review the diff before committing it.
//!
//! The file is pretty-printed JSON with every object's keys sorted and a trailing newline, so
//! its diff reads well in review and does not move when field order in the code does.
//!
//! # Breaking changes
//!
//! A change is **breaking** when a client written against the recorded surface may stop
//! working:
//!
//! - a tool, prompt, resource or resource template is removed (or renamed: a rename is a
//!   removal plus an addition), or a protocol revision is no longer served;
//! - a tool argument or prompt argument is removed, newly added as required, or becomes
//!   required;
//! - an argument's schema narrows: a type is no longer accepted (`integer` → `string`,
//!   `number` → `integer`, a nullable type no longer nullable), enum values are removed, a
//!   bound tightens (`maximum` 255 → 10), a `format` or `pattern` appears or changes, unknown
//!   fields are refused;
//! - structured output changes in a way a reader notices: an `outputSchema` field is removed,
//!   its type changes or widens, enum values are added, a required field may now be absent, or
//!   the `outputSchema` goes away;
//! - a resource's `mimeType` changes.
//!
//! Everything else is **non-breaking**: new items, new optional arguments, widened argument
//! types and enums, relaxed bounds, new or newly required output fields, titles, descriptions,
//! annotations, icons and `_meta`. Arguments are what the server *accepts*, so narrowing them
//! breaks callers; output is what it *promises*, so widening it breaks readers.
//!
//! # The version policy
//!
//! The file records `serverInfo.version`. With the default policy,
//! [`BreakingChanges::RequireVersionBump`], `MCP_SURFACE_UPDATE=1` refuses to record a breaking
//! change unless the version moved to a new semver-incompatible release, as Cargo reads
//! versions ([`is_breaking_version_bump`]): a new major version from 1.0.0 on (`1.4.2` →
//! `2.0.0`), a new minor version for 0.x (`0.3.1` → `0.4.0`), a new patch version for 0.0.x.
//! Pre-release and build suffixes are ignored. So a snapshot committed with a breaking change
//! carries the version bump with it, and CI, which runs without the variable, fails on any
//! surface the file does not record. A new version with an unchanged surface is a difference
//! too (listed as non-breaking): record it, so that the next breaking change is measured from
//! the version actually released. [`BreakingChanges::Allow`] turns the check off.
//!
//! [`SurfaceSnapshot`] sets the policy and the revisions; [`capture_surface`] and
//! [`compare_surfaces`] are the parts, for tools of your own (for example, comparing with the
//! file on the main branch).

mod compare;
mod line_diff;
mod schema;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use self::compare::{SurfaceChange, compare_surfaces};
pub use self::schema::ChangeKind;
use super::{Client, ClientError};
use crate::protocol::{ProtocolVersion, error_codes};
use crate::server::{McpService, Server};

/// The protocol revisions a surface file records, oldest first: the four handshake revisions
/// and the stateless 2026-07-28, each listed by a test [`Client`] speaking it. A new revision
/// is one more line.
pub const SURFACE_REVISIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V2024_11_05,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

/// The environment variable that rewrites surface files: `MCP_SURFACE_UPDATE=1`.
pub const UPDATE_VAR: &str = "MCP_SURFACE_UPDATE";

/// The list methods recorded, each with the result key that holds its items and the capability
/// that announces it.
const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "resources"),
    ("prompts/list", "prompts", "prompts"),
];

/// At most this many pages per list, in case a server's cursors never end.
const MAX_PAGES: usize = 10_000;

/// At most this many lines of the file diff in a failure message.
const MAX_DIFF_LINES: usize = 400;

/// What a surface can be taken from: a [`Server`] (built first) or a built [`McpService`].
pub trait IntoService {
    /// The built service.
    fn into_service(self) -> crate::Result<McpService>;
}

impl IntoService for Server {
    fn into_service(self) -> crate::Result<McpService> {
        self.build()
    }
}

impl IntoService for McpService {
    fn into_service(self) -> crate::Result<McpService> {
        Ok(self)
    }
}

impl IntoService for &McpService {
    fn into_service(self) -> crate::Result<McpService> {
        Ok(self.clone())
    }
}

/// Whether `MCP_SURFACE_UPDATE=1` may record breaking changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BreakingChanges {
    /// Only with a semver-breaking version bump since the recorded version (the default); see
    /// [`is_breaking_version_bump`].
    #[default]
    RequireVersionBump,
    /// Always: the file is the only review.
    Allow,
}

/// Checks a server's surface against a golden file: [`assert_surface`] with settings.
///
/// ```no_run
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::testing::{BreakingChanges, SurfaceSnapshot};
///
/// # async fn test(server: Server) {
/// SurfaceSnapshot::new("tests/mcp-surface.json")
///     .breaking_changes(BreakingChanges::Allow)
///     .assert(server)
///     .await;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SurfaceSnapshot {
    path: PathBuf,
    breaking: BreakingChanges,
    revisions: Vec<ProtocolVersion>,
    update: Option<bool>,
}

impl SurfaceSnapshot {
    /// A snapshot kept at `path`; a relative path is taken from the package root
    /// (`CARGO_MANIFEST_DIR`), or from the working directory when that is not set.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_owned(),
            breaking: BreakingChanges::default(),
            revisions: SURFACE_REVISIONS.to_vec(),
            update: None,
        }
    }

    /// Rewrites the file (`true`, within the breaking-change policy) or never rewrites an
    /// existing file (`false`), whatever `MCP_SURFACE_UPDATE` says; without this call, the
    /// variable decides.
    pub fn update(mut self, update: bool) -> Self {
        self.update = Some(update);
        self
    }

    /// Whether `MCP_SURFACE_UPDATE=1` may record breaking changes
    /// ([`BreakingChanges::RequireVersionBump`] by default).
    pub fn breaking_changes(mut self, policy: BreakingChanges) -> Self {
        self.breaking = policy;
        self
    }

    /// Records only these revisions instead of [`SURFACE_REVISIONS`].
    pub fn revisions(mut self, revisions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.revisions = revisions.into_iter().collect();
        self
    }

    /// Where the file is, relative paths resolved.
    pub fn path(&self) -> PathBuf {
        if self.path.is_absolute() {
            return self.path.clone();
        }
        match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(root) => Path::new(&root).join(&self.path),
            None => self.path.clone(),
        }
    }

    /// Captures `server`'s surface and compares it with the file, as described in the
    /// [module docs](crate::testing::surface).
    ///
    /// # Panics
    ///
    /// When the surface differs from the file (listing each change), when the file is missing,
    /// when `MCP_SURFACE_UPDATE=1` meets a breaking change the policy refuses, and when the
    /// server does not build or answer.
    pub async fn assert(self, server: impl IntoService) {
        let path = self.path();
        let service = server
            .into_service()
            .unwrap_or_else(|error| panic!("the server does not build: {error}"));
        let actual = capture_revisions(&service, &self.revisions)
            .await
            .unwrap_or_else(|error| panic!("could not list the server's surface: {error}"));
        let text = to_text(&actual);
        let update = self.update.unwrap_or_else(update_requested);
        let recorded_text = match std::fs::read_to_string(&path) {
            Ok(recorded) => recorded,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if !update && running_on_ci() {
                    panic!(
                        "no MCP surface snapshot at {}: run the test with {UPDATE_VAR}=1 and commit the file",
                        path.display()
                    );
                }
                write(&path, &text);
                if update {
                    return;
                }
                panic!(
                    "wrote a new MCP surface snapshot to {}: review it, commit it, and run the test again",
                    path.display()
                );
            }
            Err(error) => panic!("cannot read {}: {error}", path.display()),
        };
        let recorded: Value = serde_json::from_str(&recorded_text).unwrap_or_else(|error| {
            panic!(
                "{} is not JSON ({error}): fix it, or run the test with {UPDATE_VAR}=1 to rewrite it",
                path.display()
            )
        });
        if recorded == actual {
            if update && recorded_text != text {
                write(&path, &text);
            }
            return;
        }
        let changes = compare_surfaces(&recorded, &actual);
        let old_version = server_version(&recorded);
        let new_version = server_version(&actual);
        let breaking = changes.iter().filter(|c| c.is_breaking()).count();
        let version_allows = is_breaking_version_bump(old_version, new_version);
        let policy_allows = self.breaking == BreakingChanges::Allow || version_allows;
        let mut listing: String = changes.iter().map(|c| format!("  {c}\n")).collect();
        if changes.is_empty() {
            // Only something outside the recorded shape, such as a key added by hand.
            listing.push_str("  non-breaking: see the diff\n");
        }
        if update {
            if breaking > 0 && !policy_allows {
                panic!(
                    "refusing to record {breaking} breaking change(s) in {}:\n{listing}\n{}",
                    path.display(),
                    bump_advice(old_version, new_version)
                );
            }
            write(&path, &text);
            eprintln!("updated {}:\n{listing}", path.display());
            return;
        }
        let advice = if breaking == 0 {
            format!("No breaking changes: run the test with {UPDATE_VAR}=1 to record them.")
        } else if policy_allows {
            format!(
                "{breaking} breaking change(s), allowed by {}: run the test with {UPDATE_VAR}=1 to record them.",
                if version_allows {
                    format!("the version bump from {old_version} to {new_version}")
                } else {
                    "`BreakingChanges::Allow`".to_owned()
                }
            )
        } else {
            format!(
                "{breaking} breaking change(s): clients written against {old_version} may stop working.\n{}",
                bump_advice(old_version, new_version)
            )
        };
        let diff = limit_lines(&line_diff::unified(&to_text(&recorded), &text));
        panic!(
            "the MCP surface of `{}` changed from {}:\n{listing}\n{advice}\n\ndiff (- recorded, + now):\n{diff}",
            server_name(&actual),
            path.display()
        );
    }
}

/// Checks `server`'s surface against the golden file at `path`, with the default settings of
/// [`SurfaceSnapshot`]; the [module docs](crate::testing::surface) say what it records and when it fails.
///
/// `server` is a [`Server`] or a [`McpService`]. A relative `path` is taken from the package root.
///
/// # Panics
///
/// When the surface differs from the file; see [`SurfaceSnapshot::assert`].
pub async fn assert_surface(server: impl IntoService, path: impl AsRef<Path>) {
    SurfaceSnapshot::new(path).assert(server).await;
}

/// The surface document of `server` for every revision in [`SURFACE_REVISIONS`], as the golden
/// file holds it: `{"server": {"name", "version"}, "revisions": {"<revision>": {"prompts",
/// "resourceTemplates", "resources", "tools"}}}`, every object's keys sorted.
pub async fn capture_surface(server: impl IntoService) -> Result<Value, ClientError> {
    capture_revisions(&server.into_service()?, SURFACE_REVISIONS).await
}

async fn capture_revisions(
    service: &McpService,
    revisions: &[ProtocolVersion],
) -> Result<Value, ClientError> {
    let mut by_revision = Map::new();
    let mut info = Value::Null;
    for &version in revisions {
        let (server_info, lists) = capture_revision(service, version).await?;
        if info.is_null() {
            info = server_info;
        }
        by_revision.insert(version.as_str().to_owned(), lists);
    }
    let server = json!({
        "name": info.get("name").cloned().unwrap_or(Value::Null),
        "version": info.get("version").cloned().unwrap_or(Value::Null),
    });
    Ok(sorted(
        json!({"server": server, "revisions": Value::Object(by_revision)}),
    ))
}

/// One revision: `serverInfo`, and the four lists.
async fn capture_revision(
    service: &McpService,
    version: ProtocolVersion,
) -> Result<(Value, Value), ClientError> {
    let mut builder = Client::builder().protocol_version(version);
    if !version.has_handshake() {
        builder = builder.stateless();
    }
    let client = builder.connect_service(service).await?;
    // What the server says about itself: `initialize`, or `server/discover` when stateless.
    let opening = match client.initialize_result() {
        Some(init) => {
            let negotiated = init.get("protocolVersion").and_then(Value::as_str);
            if negotiated != Some(version.as_str()) {
                return Err(ClientError::Decode(format!(
                    "asked for protocol {version}, the server answered {}",
                    negotiated.unwrap_or("nothing")
                )));
            }
            init.clone()
        }
        None => {
            let mut discovered = client.request("server/discover", json!({})).await?;
            let info = discovered
                .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                .cloned()
                .unwrap_or(Value::Null);
            discovered["serverInfo"] = info;
            discovered
        }
    };
    let capabilities = opening.get("capabilities").cloned().unwrap_or(Value::Null);
    let mut lists = Map::new();
    for (method, key, capability) in LISTS {
        let items = if capabilities.get(capability).is_some() {
            list_all(&client, method, key).await?
        } else {
            Vec::new()
        };
        lists.insert(key.to_owned(), Value::Array(items));
    }
    let info = opening.get("serverInfo").cloned().unwrap_or(Value::Null);
    Ok((info, Value::Object(lists)))
}

/// Every page of a list.
async fn list_all(client: &Client, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let mut page = match client.request(method, params).await {
            Ok(page) => page,
            // Announced but not served: nothing to list.
            Err(ClientError::Rpc(e)) if e.code == error_codes::METHOD_NOT_FOUND => break,
            Err(error) => return Err(error),
        };
        match page.get_mut(key).map(Value::take) {
            Some(Value::Array(page_items)) => items.extend(page_items),
            _ => return Err(ClientError::Decode(format!("`{method}` without `{key}`"))),
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
            _ => return Ok(items),
        }
    }
    Ok(items)
}

/// `value` with every object's keys in sorted order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The file's text: sorted keys, two-space indentation, a trailing newline.
fn to_text(surface: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(surface.clone()))
        .unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", parent.display()));
    }
    std::fs::write(path, text)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no"))
}

fn update_requested() -> bool {
    flag(UPDATE_VAR)
}

fn running_on_ci() -> bool {
    flag("CI")
}

fn server_version(surface: &Value) -> &str {
    surface
        .pointer("/server/version")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn server_name(surface: &Value) -> &str {
    surface
        .pointer("/server/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn limit_lines(text: &str) -> String {
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return text.to_owned();
    }
    let mut out: String = text
        .lines()
        .take(MAX_DIFF_LINES)
        .map(|l| format!("{l}\n"))
        .collect();
    out.push_str(&format!("... and {} more lines\n", total - MAX_DIFF_LINES));
    out
}

/// `major.minor.patch`, ignoring pre-release and build suffixes.
fn parse_version(version: &str) -> Option<(u64, u64, u64)> {
    let core = version.trim().split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let version = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(version)
}

/// The semver-compatibility class of a version, as Cargo reads it: `1.4.2` and `1.9.0` are both
/// `(1, 0, 0)`; `0.3.1` is `(0, 3, 0)`; `0.0.7` is `(0, 0, 7)`.
fn compatibility_class((major, minor, patch): (u64, u64, u64)) -> (u64, u64, u64) {
    match (major, minor) {
        (0, 0) => (0, 0, patch),
        (0, _) => (0, minor, 0),
        _ => (major, 0, 0),
    }
}

/// Whether going from version `old` to `new` is a release that may break clients, as Cargo
/// reads semantic versions: a higher major version from 1.0.0 on, a higher minor version for
/// 0.x, a higher patch version for 0.0.x. Pre-release and build suffixes are ignored; a string
/// that is not `major.minor.patch` never allows a breaking change.
///
/// ```
/// use mcp_runtime::testing::is_breaking_version_bump;
///
/// assert!(is_breaking_version_bump("1.4.2", "2.0.0"));
/// assert!(!is_breaking_version_bump("1.4.2", "1.5.0"));
/// assert!(is_breaking_version_bump("0.3.1", "0.4.0"));
/// assert!(!is_breaking_version_bump("0.3.1", "0.3.2"));
/// ```
pub fn is_breaking_version_bump(old: &str, new: &str) -> bool {
    match (parse_version(old), parse_version(new)) {
        (Some(old), Some(new)) => compatibility_class(new) > compatibility_class(old),
        _ => false,
    }
}

/// The smallest version that may break clients after `version`.
fn next_breaking(version: &str) -> Option<String> {
    let (major, minor, patch) = parse_version(version)?;
    Some(match (major, minor) {
        (0, 0) => format!("0.0.{}", patch + 1),
        (0, _) => format!("0.{}.0", minor + 1),
        _ => format!("{}.0.0", major + 1),
    })
}

fn bump_advice(old: &str, new: &str) -> String {
    match next_breaking(old) {
        Some(next) => format!(
            "Breaking changes need a new semver-incompatible version: the snapshot records {old} \
             and the server says {new}. Release them as {next} (set `serverInfo.version`, usually \
             the crate version) and run the test with {UPDATE_VAR}=1, or restore what clients use."
        ),
        None => format!(
            "Breaking changes need a new semver-incompatible version, but the recorded version \
             `{old}` is not `major.minor.patch`: use `BreakingChanges::Allow` to record them."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaking_bumps_follow_cargo() {
        assert!(is_breaking_version_bump("1.4.2", "2.0.0"));
        assert!(is_breaking_version_bump("1.4.2", "3.1.0"));
        assert!(!is_breaking_version_bump("1.4.2", "1.9.9"));
        assert!(!is_breaking_version_bump("2.0.0", "1.0.0"));
        assert!(is_breaking_version_bump("0.3.1", "0.4.0"));
        assert!(is_breaking_version_bump("0.3.1", "1.0.0"));
        assert!(!is_breaking_version_bump("0.3.1", "0.3.9"));
        assert!(is_breaking_version_bump("0.0.3", "0.0.4"));
        assert!(is_breaking_version_bump("1.0.0", "2.0.0-rc.1+build.5"));
        assert!(!is_breaking_version_bump("1.0.0", "two"));
        assert!(!is_breaking_version_bump("", "1.0.0"));
        assert_eq!(next_breaking("1.4.2").as_deref(), Some("2.0.0"));
        assert_eq!(next_breaking("0.3.1").as_deref(), Some("0.4.0"));
        assert_eq!(next_breaking("0.0.3").as_deref(), Some("0.0.4"));
    }

    #[test]
    fn the_file_has_sorted_keys_and_a_trailing_newline() {
        let text = to_text(&json!({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": 3}}));
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": [\n      {\n        \"y\": 2,\n        \"z\": 1\n      }\n    ]\n  },\n  \"b\": 1\n}\n"
        );
    }
}
