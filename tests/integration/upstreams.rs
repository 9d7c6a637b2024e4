//! The servers the client and gateway tests run as upstreams, none written here:
//! `@modelcontextprotocol/server-everything` (installed by `scripts/client-upstreams.sh`) under
//! the tests' Node 22 (`scripts/node.sh`), and the Python (SDK, `mcp-server-time`) of its venv;
//! and how to wait for one that listens.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcp_tests::install_component;
use tokio::process::{Child, Command};

/// How long a server may take to listen.
const WAIT: Duration = Duration::from_secs(20);

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The npm packages of `scripts/client-upstreams.sh`, installed on first use.
fn node_modules() -> PathBuf {
    install_component("client-upstreams.sh");
    root().join(".cache/client-upstreams/node_modules")
}

/// Node 22, shared by every script and test that runs Node.
pub(crate) fn node() -> PathBuf {
    mcp_tests::node22()
}

/// server-everything's entry point, to run with [`node`].
pub(crate) fn server_everything_js() -> PathBuf {
    node_modules().join("@modelcontextprotocol/server-everything/dist/index.js")
}

/// The venv's Python, with the Python SDK and `mcp-server-time`.
pub(crate) fn python() -> PathBuf {
    install_component("client-upstreams.sh");
    root().join(".cache/py/bin/python")
}

/// A port of 127.0.0.1 nothing listens on now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A server process listening on 127.0.0.1:`port`, killed when the test ends.
pub(crate) async fn listening(mut command: Command, port: u16) -> Child {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the server");
    let started = tokio::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before it listened: {status}");
        }
        assert!(
            started.elapsed() < WAIT,
            "the server never listened on {port}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child
}
