//! The filesystem server through the runtime's in-process client: hostile paths refused before
//! any access, the client's roots replacing the command line's directories (in both eras),
//! and reads held to their bounds. The same session against the original is
//! `tests/servers/test_filesystem.py` (`scripts/servers.sh filesystem`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use mcp_server_filesystem::Filesystem;
use mcp_server_filesystem::read::MAX_READ_BYTES;
use mcp_server_filesystem::sandbox::Sandbox;
use serde_json::{Value, json};

/// A directory of its own under the system's temporary directory, removed when dropped: a
/// sandbox `root` with a file, and an `outside` with a secret, linked to from inside.
struct Tree {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new(name: &str) -> Self {
        let base = std::env::temp_dir().join(format!("mcp-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let base = {
            std::fs::create_dir_all(&base).unwrap();
            std::fs::canonicalize(&base).unwrap()
        };
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("hello.txt"), "hello\n").unwrap();
        std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("escape.txt")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("escape_dir")).unwrap();
        std::os::unix::fs::symlink(outside.join("planted.txt"), root.join("dangling.txt")).unwrap();
        Self {
            base,
            root,
            outside,
        }
    }

    fn at(&self, path: &str) -> String {
        self.root.join(path).to_string_lossy().into_owned()
    }

    fn server(&self) -> Server {
        let dirs = Sandbox::from_command_line(&[self.root.to_string_lossy().into_owned()]).unwrap();
        Filesystem::new(dirs).into_server()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

async fn call(client: &Client, tool: &str, arguments: Value) -> (bool, String) {
    let result = client.call_tool(tool, arguments).await.unwrap();
    (result.is_error, result.text())
}

#[tokio::test]
async fn hostile_paths_are_refused_naming_why() {
    let tree = Tree::new("hostile");
    let client = Client::connect(tree.server()).await.unwrap();
    let root = tree.root.display().to_string();
    let outside = tree.outside.display().to_string();
    let refused = [
        (
            "read_text_file",
            json!({"path": tree.at("../outside/secret.txt")}),
            format!(
                "Access denied - path outside allowed directories: {outside}/secret.txt not in {root}"
            ),
        ),
        (
            "read_text_file",
            json!({"path": "../outside/secret.txt"}),
            format!(
                "Access denied - path outside allowed directories: {outside}/secret.txt not in {root}"
            ),
        ),
        (
            "read_text_file",
            json!({"path": tree.at("escape.txt")}),
            format!(
                "Access denied - symlink target outside allowed directories: {outside}/secret.txt not in {root}"
            ),
        ),
        (
            "write_file",
            json!({"path": tree.at("escape_dir/new.txt"), "content": "planted"}),
            format!(
                "Access denied - symlink target outside allowed directories: {outside} not in {root}"
            ),
        ),
        (
            "write_file",
            json!({"path": tree.at("dangling.txt"), "content": "through the link"}),
            format!(
                "Access denied - {root}/dangling.txt is a symbolic link to {outside}/planted.txt, which does not exist"
            ),
        ),
        (
            "read_text_file",
            json!({"path": format!("{root}/hello.txt\u{0}")}),
            format!(
                "Access denied - path outside allowed directories: {root}/hello.txt\u{0} not in {root}"
            ),
        ),
        (
            "read_text_file",
            json!({"path": "C:\\Windows\\win.ini"}),
            "Access denied - Windows-style path received on a POSIX host: C:\\Windows\\win.ini"
                .to_owned(),
        ),
    ];
    for (tool, arguments, message) in refused {
        assert_eq!(
            call(&client, tool, arguments.clone()).await,
            (true, message),
            "{arguments}"
        );
    }
    assert!(!tree.outside.join("new.txt").exists());
    assert!(!tree.outside.join("planted.txt").exists());
    assert_eq!(
        std::fs::read_to_string(tree.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    // The refused calls left the server serving.
    assert_eq!(
        call(
            &client,
            "read_text_file",
            json!({"path": tree.at("hello.txt")})
        )
        .await,
        (false, "hello\n".to_owned())
    );
}

/// A client with roots, whose list the test changes: it answers `roots/list` with `roots`.
fn client_with_roots(roots: Arc<Mutex<Vec<PathBuf>>>) -> mcp_runtime::testing::ClientBuilder {
    Client::builder()
        .capabilities(json!({"roots": {"listChanged": true}}))
        .on_request(move |method, _| {
            assert_eq!(method, "roots/list");
            let listed: Vec<Value> = roots
                .lock()
                .unwrap()
                .iter()
                .map(|d| json!({"uri": format!("file://{}", d.display())}))
                .collect();
            Ok(json!({ "roots": listed }))
        })
}

#[tokio::test]
async fn roots_replace_the_command_line_and_a_removed_root_is_refused() {
    let tree = Tree::new("roots");
    let other = tree.base.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("file.txt"), "in other\n").unwrap();
    let roots = Arc::new(Mutex::new(vec![other.clone()]));
    let client = client_with_roots(Arc::clone(&roots))
        .connect(tree.server())
        .await
        .unwrap();
    let other_file = json!({"path": other.join("file.txt")});
    assert_eq!(
        call(&client, "list_allowed_directories", json!({})).await,
        (false, format!("Allowed directories:\n{}", other.display()))
    );
    assert_eq!(
        call(&client, "read_text_file", other_file.clone()).await,
        (false, "in other\n".to_owned())
    );
    // The command line's directory is replaced.
    assert!(
        call(
            &client,
            "read_text_file",
            json!({"path": tree.at("hello.txt")})
        )
        .await
        .0
    );

    // The client swaps its root for the command line's; until it says so, the old list holds.
    *roots.lock().unwrap() = vec![tree.root.clone()];
    assert!(!call(&client, "read_text_file", other_file.clone()).await.0);
    client
        .notify("notifications/roots/list_changed", json!({}))
        .unwrap();
    let (refused, text) = call(&client, "read_text_file", other_file).await;
    assert!(refused, "{text}");
    assert_eq!(
        text,
        format!(
            "Access denied - path outside allowed directories: {}/file.txt not in {}",
            other.display(),
            tree.root.display()
        )
    );
    assert_eq!(
        call(
            &client,
            "read_text_file",
            json!({"path": tree.at("hello.txt")})
        )
        .await,
        (false, "hello\n".to_owned())
    );

    // No root that is a directory here: the command line's directories serve.
    *roots.lock().unwrap() = vec![tree.base.join("gone")];
    client
        .notify("notifications/roots/list_changed", json!({}))
        .unwrap();
    assert_eq!(
        call(&client, "list_allowed_directories", json!({})).await,
        (
            false,
            format!("Allowed directories:\n{}", tree.root.display())
        )
    );
}

#[tokio::test]
async fn a_stateless_client_is_served_with_or_without_roots() {
    let tree = Tree::new("stateless");
    let without = Client::builder()
        .stateless()
        .connect(tree.server())
        .await
        .unwrap();
    assert_eq!(
        call(&without, "list_allowed_directories", json!({})).await,
        (
            false,
            format!("Allowed directories:\n{}", tree.root.display())
        )
    );
    let docs = tree.root.join("docs");
    let with = client_with_roots(Arc::new(Mutex::new(vec![docs.clone()])))
        .stateless()
        .connect(tree.server())
        .await
        .unwrap();
    assert_eq!(
        call(&with, "list_allowed_directories", json!({})).await,
        (false, format!("Allowed directories:\n{}", docs.display()))
    );
}

/// A file of `size` bytes whose first and last lines are text (the middle a hole of zeros).
fn big_file(path: &Path, size: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(b"first\nsecond\n").unwrap();
    file.set_len(size).unwrap();
    file.seek(SeekFrom::Start(size - 12)).unwrap();
    file.write_all(b"\nlast\nlines\n").unwrap();
}

#[tokio::test]
async fn a_file_over_the_bound_is_refused_whole_and_read_in_part() {
    let tree = Tree::new("bounds");
    let size = MAX_READ_BYTES + 4096;
    big_file(&tree.root.join("big.log"), size);
    std::fs::copy(tree.root.join("big.log"), tree.root.join("big.png")).unwrap();
    let client = Client::connect(tree.server()).await.unwrap();
    let big = tree.at("big.log");
    assert_eq!(
        call(&client, "read_text_file", json!({"path": big})).await,
        (
            true,
            format!(
                "File too large to read: {big} is {size} bytes, over the limit of {MAX_READ_BYTES} bytes; \
                 read part of it with `head` or `tail`"
            )
        )
    );
    assert_eq!(
        call(&client, "read_text_file", json!({"path": big, "head": 2})).await,
        (false, "first\nsecond".to_owned())
    );
    assert_eq!(
        call(&client, "read_text_file", json!({"path": big, "tail": 3})).await,
        (false, "last\nlines\n".to_owned())
    );
    // Lines that run past the bound are refused rather than read.
    // Lines that run past the bound are refused rather than read (the texts are short: an
    // 8 MiB answer would not be).
    for (tool, arguments) in [
        ("read_text_file", json!({"path": big, "head": 3})),
        ("read_text_file", json!({"path": big, "tail": 4})),
        ("read_media_file", json!({"path": tree.at("big.png")})),
    ] {
        let (refused, text) = call(&client, tool, arguments.clone()).await;
        let start = text.get(..200).unwrap_or(&text);
        assert!(refused && text.len() < 400, "{arguments}: {start}");
        assert!(text.starts_with("File too large to read"), "{start}");
    }
    let many = call(
        &client,
        "read_multiple_files",
        json!({"paths": [big, tree.at("hello.txt")]}),
    )
    .await;
    assert!(!many.0);
    assert!(
        many.1.contains(": Error - File too large to read") && many.1.contains("hello\n"),
        "{}",
        many.1
    );
}

#[tokio::test]
async fn media_comes_back_as_base64_blocks() {
    let tree = Tree::new("media");
    std::fs::write(tree.root.join("pixel.png"), [0x89, b'P', b'N', b'G']).unwrap();
    std::fs::write(tree.root.join("raw.bin"), [0u8, 255]).unwrap();
    let client = Client::connect(tree.server()).await.unwrap();
    let image = client
        .call_tool("read_media_file", json!({"path": tree.at("pixel.png")}))
        .await
        .unwrap();
    let block = serde_json::to_value(&image.content[0]).unwrap();
    assert_eq!(
        block,
        json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})
    );
    assert_eq!(image.structured_content, Some(json!({"content": [block]})));
    let raw = client
        .call_tool("read_media_file", json!({"path": tree.at("raw.bin")}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&raw.content[0]).unwrap(),
        json!({"type": "resource", "resource": {
            "uri": format!("file://{}/raw.bin", tree.root.display()),
            "mimeType": "application/octet-stream",
            "blob": "AP8=",
        }})
    );
}
