//! Skills (SEP-2640) as a client sees them: embedded at compile time with `skills!`, read from a
//! directory at startup, or built in code; `skills/list`, `skills/get`, `resources/read` at
//! `skill://`, `resources/directory/read`, in both eras.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use mcp_runtime::testing::{Client, ClientError};
use mcp_runtime::{Server, Skill, Skills};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

fn embedded() -> Server {
    Server::builder()
        .name("skills")
        .version("1.0.0")
        .skills(mcp_runtime::skills!("skill-fixtures"))
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// The bytes `resources/read` serves at `uri`: the text, or the decoded blob.
async fn served_bytes(client: &Client, uri: &str) -> (Vec<u8>, Value) {
    let result = client
        .request("resources/read", json!({"uri": uri}))
        .await
        .unwrap();
    let contents = result["contents"][0].clone();
    assert_eq!(contents["uri"], uri);
    let bytes = match (&contents["text"], &contents["blob"]) {
        (Value::String(text), _) => text.as_bytes().to_vec(),
        (_, Value::String(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .unwrap(),
        _ => panic!("no contents: {contents}"),
    };
    (bytes, contents)
}

fn code(error: ClientError) -> i64 {
    error.rpc().expect("a JSON-RPC error").code
}

#[tokio::test]
async fn the_extension_is_declared_in_both_eras() {
    let client = Client::connect(embedded()).await.unwrap();
    let capabilities = &client.initialize_result().unwrap()["capabilities"];
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(capabilities["resources"].is_object());
    let stateless = Client::builder()
        .stateless()
        .connect(embedded())
        .await
        .unwrap();
    let discover = stateless
        .request("server/discover", json!({}))
        .await
        .unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    // A server without skills declares no extension and has no skills methods.
    let plain = Client::connect(
        Server::builder()
            .name("x")
            .version("1")
            .resource(crate::fixtures::static_text),
    )
    .await
    .unwrap();
    assert!(
        plain.initialize_result().unwrap()["capabilities"]
            .get("extensions")
            .is_none()
    );
    let error = plain.request("skills/list", json!({})).await.unwrap_err();
    assert_eq!(code(error), -32601);
}

#[tokio::test]
async fn skills_list_digests_are_over_the_bytes_served() {
    let client = Client::connect(embedded()).await.unwrap();
    let list = client.request("skills/list", json!({})).await.unwrap();
    let skills = list["skills"].as_array().unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://notes/SKILL.md",
            "skill://notes/deep/nested-note/SKILL.md"
        ]
    );
    let notes = &skills[0];
    assert_eq!(
        notes["frontmatter"],
        json!({"name": "notes", "description": "Keep notes: short, dated, searchable.",
               "metadata": {"tags": ["writing", "memory"]}})
    );
    let resources = notes["resources"].as_array().unwrap();
    let listed: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    // The parent lists its nested skill's files too.
    assert_eq!(
        listed,
        [
            "skill://notes/SKILL.md",
            "skill://notes/deep/nested-note/SKILL.md",
            "skill://notes/logo.png"
        ]
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("integration/skill-fixtures");
    for resource in resources {
        let uri = resource["uri"].as_str().unwrap();
        let (bytes, contents) = served_bytes(&client, uri).await;
        let on_disk = std::fs::read(fixtures.join(&uri["skill://".len()..])).unwrap();
        assert_eq!(bytes, on_disk, "{uri}");
        assert_eq!(resource["digest"], sha256(&bytes), "{uri}");
        assert_eq!(resource["size"], bytes.len(), "{uri}");
        if uri.ends_with(".png") {
            assert_eq!(contents["mimeType"], "image/png");
            assert!(contents.get("blob").is_some());
        } else {
            assert_eq!(contents["mimeType"], "text/markdown");
        }
    }
    // SKILL.md is listed as a resource named and described by its frontmatter.
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let manifest = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://notes/SKILL.md")
        .unwrap()
        .clone();
    assert_eq!(manifest["name"], "notes");
    assert_eq!(
        manifest["description"],
        "Keep notes: short, dated, searchable."
    );
    assert_eq!(manifest["mimeType"], "text/markdown");
}

#[tokio::test]
async fn skills_get_serves_any_skill_and_refuses_the_rest() {
    let client = Client::connect(embedded()).await.unwrap();
    let list = client.request("skills/list", json!({})).await.unwrap();
    for entry in list["skills"].as_array().unwrap() {
        let got = client
            .request("skills/get", json!({"uri": entry["uri"]}))
            .await
            .unwrap();
        assert_eq!(&got["skill"], entry);
        assert!(got.get("nextCursor").is_none());
    }
    for uri in [
        "skill://missing/SKILL.md",
        "skill://notes/logo.png",
        "skill://notes/../notes/SKILL.md",
        "skill://notes",
    ] {
        let error = client
            .request("skills/get", json!({"uri": uri}))
            .await
            .unwrap_err();
        assert_eq!(code(error), -32602, "{uri}");
    }
    // A path that climbs out of a skill reads nothing.
    for uri in [
        "skill://notes/../../Cargo.toml",
        "skill://notes/deep/../../../etc/passwd",
    ] {
        let error = client
            .request("resources/read", json!({"uri": uri}))
            .await
            .unwrap_err();
        assert!(error.rpc().is_some(), "{uri}");
    }
}

#[tokio::test]
async fn directories_list_their_children() {
    let client = Client::connect(embedded()).await.unwrap();
    let read = client
        .request("resources/directory/read", json!({"uri": "skill://notes"}))
        .await
        .unwrap();
    assert_eq!(
        read["resources"],
        json!([
            {"uri": "skill://notes/SKILL.md", "name": "notes",
             "description": "Keep notes: short, dated, searchable.",
             "mimeType": "text/markdown", "size": 145},
            {"uri": "skill://notes/deep", "name": "deep", "mimeType": "inode/directory"},
            {"uri": "skill://notes/logo.png", "name": "logo.png", "mimeType": "image/png", "size": 18},
        ])
    );
    for uri in ["skill://notes/SKILL.md", "skill://nothing", "file:///etc"] {
        let error = client
            .request("resources/directory/read", json!({"uri": uri}))
            .await
            .unwrap_err();
        assert_eq!(code(error), -32602, "{uri}");
    }
    // Paginated, one child a page.
    let client = Client::connect(embedded().page_size(1)).await.unwrap();
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut params = json!({"uri": "skill://notes"});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        let page = client
            .request("resources/directory/read", params)
            .await
            .unwrap();
        assert_eq!(page["resources"].as_array().unwrap().len(), 1);
        seen.push(page["resources"][0]["uri"].as_str().unwrap().to_owned());
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn skills_list_pages_keep_entries_whole_and_carry_cache_hints() {
    let client = Client::builder()
        .stateless()
        .connect(embedded().page_size(1))
        .await
        .unwrap();
    let first = client.request("skills/list", json!({})).await.unwrap();
    assert_eq!(first["skills"].as_array().unwrap().len(), 1);
    assert_eq!(first["skills"][0]["resources"].as_array().unwrap().len(), 3);
    assert!(first["ttlMs"].is_number() && first["cacheScope"].is_string());
    let second = client
        .request("skills/list", json!({"cursor": first["nextCursor"]}))
        .await
        .unwrap();
    assert_eq!(
        second["skills"][0]["uri"],
        "skill://notes/deep/nested-note/SKILL.md"
    );
    assert!(second.get("nextCursor").is_none());
    let got = client
        .request("skills/get", json!({"uri": "skill://notes/SKILL.md"}))
        .await
        .unwrap();
    assert!(got["ttlMs"].is_number() && got["cacheScope"].is_string());
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-skills-{name}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn digests(server: Server) -> Vec<(String, String)> {
    let client = Client::connect(server).await.unwrap();
    let list = client.request("skills/list", json!({})).await.unwrap();
    list["skills"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap().to_owned(),
                r["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_changed_file_changes_its_digest() {
    let root = temp_dir("change");
    write(
        &root.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: PDFs.\n---\nBody\n",
    );
    write(&root.join("pdf/references/forms.md"), "Version one.\n");
    let server = || Server::builder().name("s").version("1").skills_dir(&root);
    let before = digests(server()).await;
    assert_eq!(before[1].0, "skill://pdf/references/forms.md");
    assert_eq!(before[1].1, sha256(b"Version one.\n"));
    write(&root.join("pdf/references/forms.md"), "Version two.\n");
    let after = digests(server()).await;
    assert_eq!(after[1].1, sha256(b"Version two.\n"));
    assert_ne!(before[1].1, after[1].1);
    // SKILL.md did not change, nor did its digest.
    assert_eq!(before[0], after[0]);
    std::fs::remove_dir_all(&root).unwrap();
}

fn build_error(server: Server) -> String {
    match server.build() {
        Ok(_) => panic!("the server was built"),
        Err(error) => error.to_string(),
    }
}

/// A directory case: its name, the files written, what the error says.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[tokio::test]
async fn a_directory_is_checked_at_startup() {
    // What the error says after the location, which is the directory, or `file:line` when the
    // fault is on a line of a `SKILL.md`.
    let cases: [Case; 6] = [
        ("missing", &[("pdf/notes.md", "x")], ": has no SKILL.md"),
        (
            "differs",
            &[("pdf/SKILL.md", "---\nname: other\ndescription: d\n---\n")],
            "/pdf/SKILL.md:2: the skill name `other` differs from its directory",
        ),
        (
            "no-description",
            &[("pdf/SKILL.md", "---\nname: pdf\n---\n")],
            "/pdf/SKILL.md:1: the frontmatter of SKILL.md has no `description`",
        ),
        (
            "bad-name",
            &[("Pdf/SKILL.md", "---\nname: Pdf\ndescription: d\n---\n")],
            "/Pdf/SKILL.md:2: the skill name `Pdf` breaks the naming rules",
        ),
        (
            "misspelt",
            &[("pdf/SKILL.md", "---\nname: pdf\ndescripton: d\n---\n")],
            "/pdf/SKILL.md:3: unknown frontmatter key `descripton`; did you mean `description`?",
        ),
        (
            "syntax",
            &[(
                "pdf/SKILL.md",
                "---\nname: pdf\ndescription: d\ntags: [a]\n---\n",
            )],
            "/pdf/SKILL.md:4: flow collections",
        ),
    ];
    for (name, files, wanted) in cases {
        let root = temp_dir(name);
        for (path, text) in files {
            write(&root.join(path), text);
        }
        let error = build_error(Server::builder().name("s").version("1").skills_dir(&root));
        assert!(error.contains(wanted), "{name}: {error}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_symbolic_link_out_of_the_root_is_refused_at_startup() {
    let outside = temp_dir("outside");
    write(&outside.join("secret.txt"), "secret");
    let root = temp_dir("symlink");
    write(
        &root.join("leak/SKILL.md"),
        "---\nname: leak\ndescription: d\n---\n",
    );
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leak/secret.txt")).unwrap();
    let error = build_error(Server::builder().name("s").version("1").skills_dir(&root));
    assert!(
        error.contains("a symbolic link leaving the skills directory"),
        "{error}"
    );
    // A link to a file inside the root is served like the file.
    std::fs::remove_file(root.join("leak/secret.txt")).unwrap();
    write(&root.join("leak/real.txt"), "inside");
    std::os::unix::fs::symlink(root.join("leak/real.txt"), root.join("leak/alias.txt")).unwrap();
    let served = digests(Server::builder().name("s").version("1").skills_dir(&root)).await;
    assert_eq!(
        served[1],
        ("skill://leak/alias.txt".to_owned(), sha256(b"inside"))
    );
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

#[tokio::test]
async fn skills_built_in_code() {
    let skills = Skills::new()
        .skill(
            Skill::new(
                "team/review",
                "---\nname: review\ndescription: Reviews.\n---\n",
            )
            .file("checklist.md", "- tests\n"),
        )
        .skill(Skill::new("live", "---\nname: live\ndescription: Generated.\n---\n").dynamic());
    let client = Client::connect(Server::builder().name("s").version("1").skills(skills))
        .await
        .unwrap();
    let list = client.request("skills/list", json!({})).await.unwrap();
    assert_eq!(list["skills"][0]["uri"], "skill://live/SKILL.md");
    assert_eq!(list["skills"][0]["resources"], "dynamic");
    assert_eq!(list["skills"][1]["uri"], "skill://team/review/SKILL.md");
    let (bytes, _) = served_bytes(&client, "skill://team/review/checklist.md").await;
    assert_eq!(bytes, b"- tests\n");
    let root = client
        .request("resources/directory/read", json!({"uri": "skill://team"}))
        .await
        .unwrap();
    assert_eq!(
        root["resources"],
        json!([{"uri": "skill://team/review", "name": "review", "mimeType": "inode/directory"}])
    );
    // The checks of `skills!` apply to skills built in code, as build errors.
    let error = build_error(
        Server::builder()
            .name("s")
            .version("1")
            .skills(Skills::new().skill(Skill::new(
                "../escape",
                "---\nname: escape\ndescription: d\n---\n",
            ))),
    );
    assert!(error.contains("not a skill path"), "{error}");
    let error = build_error(
        Server::builder()
            .name("s")
            .version("1")
            .skills(Skills::new().skill(Skill::new(
                "review",
                "---\nname: review\nDescription: Reviews.\n---\n",
            ))),
    );
    assert!(
        error.contains(
            "SKILL.md:3: unknown frontmatter key `Description`; did you mean `description`?"
        ),
        "{error}"
    );
}
