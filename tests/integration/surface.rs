//! Surface snapshots as a user meets them: a server changes, `assert_surface` fails with each
//! change marked breaking or not, and recording the new surface (with the version bump a
//! breaking change needs) makes it pass again.

use std::path::{Path, PathBuf};

use mcp_runtime::Server;
use mcp_runtime::testing::{BreakingChanges, SurfaceSnapshot, assert_surface, capture_surface};

/// The first release: `add(a, b)`.
mod v1 {
    use mcp_runtime::prelude::*;

    /// Add two integers.
    #[tool]
    pub(crate) async fn add(a: i64, b: i64) -> i64 {
        a + b
    }
}

/// `add` renamed to `sum`.
mod renamed {
    use mcp_runtime::prelude::*;

    /// Add two integers.
    #[tool]
    pub(crate) async fn sum(a: i64, b: i64) -> i64 {
        a + b
    }
}

/// `add` with a third, required argument.
mod required_argument {
    use mcp_runtime::prelude::*;

    /// Add three integers.
    #[tool(name = "add")]
    pub(crate) async fn add(a: i64, b: i64, c: i64) -> i64 {
        a + b + c
    }
}

/// `add` with a third, optional argument.
mod optional_argument {
    use mcp_runtime::prelude::*;

    /// Add two or three integers.
    #[tool(name = "add")]
    pub(crate) async fn add(a: i64, b: i64, c: Option<i64>) -> i64 {
        a + b + c.unwrap_or(0)
    }
}

fn server(version: &str) -> Server {
    Server::builder().name("adder").version(version)
}

/// A snapshot file of this test's own, removed when dropped.
struct TempSnapshot(PathBuf);

impl TempSnapshot {
    fn new(test: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("mcp-surface-{}-{test}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// Checks without writing, whatever `MCP_SURFACE_UPDATE` says.
    fn check(&self) -> SurfaceSnapshot {
        SurfaceSnapshot::new(&self.0).update(false)
    }

    /// Records, as `MCP_SURFACE_UPDATE=1` does.
    fn record(&self) -> SurfaceSnapshot {
        SurfaceSnapshot::new(&self.0).update(true)
    }
}

impl Drop for TempSnapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs a snapshot assertion and returns its panic message, or `None` when it passed.
async fn failure(snapshot: SurfaceSnapshot, server: Server) -> Option<String> {
    let outcome = tokio::spawn(async move { snapshot.assert(server).await }).await;
    match outcome {
        Ok(()) => None,
        Err(error) => {
            let panic = error.into_panic();
            Some(
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
            )
        }
    }
}

#[tokio::test]
async fn renaming_a_tool_fails_as_breaking_until_recorded_with_a_major_bump() {
    let file = TempSnapshot::new("rename");
    assert_eq!(
        failure(file.record(), server("1.0.0").tool(v1::add)).await,
        None
    );
    assert_eq!(
        failure(file.check(), server("1.0.0").tool(v1::add)).await,
        None
    );

    let message = failure(file.check(), server("1.0.0").tool(renamed::sum))
        .await
        .expect("a renamed tool fails the snapshot");
    assert!(
        message.contains("breaking: tool \"add\" removed\n"),
        "{message}"
    );
    assert!(
        message.contains("non-breaking: tool \"sum\" added\n"),
        "{message}"
    );
    assert!(message.contains("Release them as 2.0.0"), "{message}");
    // The file's diff follows, line by line.
    let diff_line = |sign: &str, name: &str| {
        message.lines().any(|line| {
            line.strip_prefix(sign).is_some_and(|rest| {
                rest.trim_start()
                    .starts_with(&format!("\"name\": \"{name}\""))
            })
        })
    };
    assert!(
        diff_line("- ", "add") && diff_line("+ ", "sum"),
        "{message}"
    );

    // Recording the rename without a new major version is refused, and the file is kept.
    let refused = failure(file.record(), server("1.1.0").tool(renamed::sum))
        .await
        .expect("a breaking change needs a major version");
    assert!(
        refused.contains("refusing to record 1 breaking change(s)"),
        "{refused}"
    );
    assert_eq!(
        failure(file.check(), server("1.0.0").tool(v1::add)).await,
        None
    );

    // With 2.0.0 it is recorded, and the renamed server passes.
    assert_eq!(
        failure(file.record(), server("2.0.0").tool(renamed::sum)).await,
        None
    );
    assert_eq!(
        failure(file.check(), server("2.0.0").tool(renamed::sum)).await,
        None
    );
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    assert_eq!(recorded["server"]["version"], "2.0.0");
    assert_eq!(
        recorded["revisions"]["2025-11-25"]["tools"][0]["name"],
        "sum"
    );
}

#[tokio::test]
async fn a_new_required_argument_fails_as_breaking() {
    let file = TempSnapshot::new("required");
    assert_eq!(
        failure(file.record(), server("0.3.1").tool(v1::add)).await,
        None
    );
    let message = failure(file.check(), server("0.3.1").tool(required_argument::add))
        .await
        .expect("a new required argument fails the snapshot");
    assert!(
        message.contains("breaking: tool \"add\": new required argument \"c\"\n"),
        "{message}"
    );
    // 0.x: the minor version is the breaking one.
    assert!(message.contains("Release them as 0.4.0"), "{message}");
    assert_eq!(
        failure(file.record(), server("0.4.0").tool(required_argument::add)).await,
        None
    );
    assert_eq!(
        failure(file.check(), server("0.4.0").tool(required_argument::add)).await,
        None
    );
}

#[tokio::test]
async fn a_new_optional_argument_is_not_breaking_but_still_reviewed() {
    let file = TempSnapshot::new("optional");
    assert_eq!(
        failure(file.record(), server("1.0.0").tool(v1::add)).await,
        None
    );
    let message = failure(file.check(), server("1.0.0").tool(optional_argument::add))
        .await
        .expect("any change fails until it is recorded");
    assert!(
        message.contains("non-breaking: tool \"add\": new optional argument \"c\"\n"),
        "{message}"
    );
    assert!(!message.contains("\n  breaking:"), "{message}");
    assert!(message.contains("No breaking changes"), "{message}");
    // No version bump needed to record it.
    assert_eq!(
        failure(file.record(), server("1.0.0").tool(optional_argument::add)).await,
        None
    );
    assert_eq!(
        failure(file.check(), server("1.0.0").tool(optional_argument::add)).await,
        None
    );
}

#[tokio::test]
async fn allowing_breaking_changes_records_them_without_a_bump() {
    let file = TempSnapshot::new("allow");
    assert_eq!(
        failure(file.record(), server("1.0.0").tool(v1::add)).await,
        None
    );
    let allow = file.record().breaking_changes(BreakingChanges::Allow);
    assert_eq!(
        failure(allow, server("1.0.0").tool(renamed::sum)).await,
        None
    );
    assert_eq!(
        failure(file.check(), server("1.0.0").tool(renamed::sum)).await,
        None
    );
}

#[tokio::test]
async fn a_missing_snapshot_fails_and_names_the_file() {
    let file = TempSnapshot::new("missing");
    let message = failure(file.check(), server("1.0.0").tool(v1::add))
        .await
        .expect("a missing snapshot never passes silently");
    assert!(
        message.contains(&file.path().display().to_string()),
        "{message}"
    );
    // Outside CI the file is written for review, and then passes.
    if file.path().exists() {
        assert_eq!(
            failure(file.check(), server("1.0.0").tool(v1::add)).await,
            None
        );
    }
}

#[tokio::test]
async fn the_file_is_sorted_pretty_json_with_every_revision() {
    let file = TempSnapshot::new("format");
    let service = server("1.0.0").tool(v1::add).build().unwrap();
    file.record().assert(&service).await;
    // The plain call passes on the file it wrote.
    assert_surface(&service, file.path()).await;
    let text = std::fs::read_to_string(file.path()).unwrap();
    assert!(text.ends_with("}\n"));
    assert!(text.starts_with("{\n  \"revisions\": {\n    \"2024-11-05\": {\n      \"prompts\": [],\n      \"resourceTemplates\": [],\n      \"resources\": [],\n      \"tools\": ["));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value, capture_surface(&service).await.unwrap());
    let revisions: Vec<&String> = value["revisions"].as_object().unwrap().keys().collect();
    assert_eq!(
        revisions,
        [
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ]
    );
    // Shaped per revision: no `outputSchema` before 2025-06-18.
    assert!(value["revisions"]["2025-03-26"]["tools"][0]["outputSchema"].is_null());
    assert!(value["revisions"]["2025-06-18"]["tools"][0]["outputSchema"].is_object());
}
