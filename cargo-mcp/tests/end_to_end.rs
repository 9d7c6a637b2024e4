//! `cargo mcp` as a user runs it: the `cargo-mcp` binary cargo built for this test, on the
//! PATH as `cargo install` puts it (so `cargo mcp` finds it), then, in a temporary HOME and a
//! new crate holding the calculator example, `inspect`, `call`, `install` into every client
//! (each file starting with an entry of someone else's that must survive byte for byte, and a
//! second run that must change nothing) and `card`, whose two documents are validated here
//! against the vendored schemas.
//!
//! The builds share the workspace's target directory, so what `cargo test` compiled is reused;
//! `install`'s release build is unoptimized (`CARGO_PROFILE_RELEASE_OPT_LEVEL=0`). Every child
//! process is bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest a build may take on a loaded 2-core machine.
const BUILD: Duration = Duration::from_secs(1_500);

/// Runs `command` to its end or kills it after `limit`.
fn run(command: &mut Command, limit: Duration) -> Output {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown}: {e}"));
    // Drained while it runs, so a chatty build cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buffer).ok();
        buffer
    });
    let err = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut buffer).ok();
        buffer
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{shown} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The workspace's target directory: this test runs from `<target>/debug/deps/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// The example NAME of the workspace, as `cargo test --workspace` built it (on the workspace's
/// features); built here when this package is tested alone.
fn example(name: &str) -> PathBuf {
    let binary = target_dir().join("debug/examples").join(name);
    if !binary.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let built = run(
            Command::new(&cargo)
                .args(["build", "-p", "mcp-examples", "--example", name])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env("CARGO_TARGET_DIR", target_dir()),
            BUILD,
        );
        assert!(built.status.success(), "{}", text(&built.stderr));
    }
    binary
}

struct World {
    /// The temporary HOME.
    home: PathBuf,
    /// The user's crate: the calculator.
    project: PathBuf,
    /// Where `cargo-mcp` is, as `cargo install` would put it.
    bin_dir: PathBuf,
    _temp: TempDir,
}

/// A directory removed at the end of the test.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl World {
    /// `cargo mcp ARGS` in the project, with the temporary HOME.
    fn cargo_mcp(&self, args: &[&str]) -> Output {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let real_home = std::env::home_dir().unwrap();
        let mut path = std::ffi::OsString::from(&self.bin_dir);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let mut command = Command::new(&cargo);
        command
            .arg("mcp")
            .args(args)
            .current_dir(&self.project)
            .env("PATH", path)
            .env("HOME", &self.home)
            // The toolchain stays where it is installed, whatever HOME says.
            .env(
                "RUSTUP_HOME",
                std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| real_home.join(".rustup").into()),
            )
            .env(
                "CARGO_HOME",
                std::env::var_os("CARGO_HOME").unwrap_or_else(|| real_home.join(".cargo").into()),
            )
            .env("CARGO_TARGET_DIR", target_dir())
            // `install` builds the release profile, as it does for a user, into target/release;
            // unoptimized here, since what is tested is what it builds, copies and writes, and
            // the runtime's optimized build would be most of this test's time.
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            // Where `install` copies the server: the temporary HOME's.
            .env("CARGO_INSTALL_ROOT", self.home.join(".cargo"))
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME");
        run(&mut command, BUILD)
    }

    fn ok(&self, args: &[&str]) -> String {
        self.ok_with_stderr(args).0
    }

    /// Stdout and stderr of a run that must succeed.
    fn ok_with_stderr(&self, args: &[&str]) -> (String, String) {
        let output = self.cargo_mcp(args);
        assert!(
            output.status.success(),
            "cargo mcp {args:?} failed: {}\n{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        (text(&output.stdout), text(&output.stderr))
    }
}

fn world() -> World {
    let root = std::env::temp_dir().join(format!("cargo-mcp-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let home = root.join("home");
    let project = root.join("calculator");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();

    // `cargo install` puts `cargo-mcp` in a bin directory on the PATH: so does this.
    let bin_dir = root.join("install/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_cargo-mcp"), bin_dir.join("cargo-mcp")).unwrap();

    // The user's crate: the calculator example, depending on the runtime by path.
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime");
    let runtime = runtime.canonicalize().unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            r#"[package]
name = "calculator"
version = "0.3.0"
edition = "2024"
description = "Adds, divides and summarises numbers."
repository = "https://github.com/someone/calculator"

[dependencies]
mcp-runtime = {{ path = {runtime:?} }}
tokio = {{ version = "1", features = ["macros", "rt-multi-thread"] }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"
tracing-subscriber = {{ version = "0.3", features = ["env-filter"] }}

[workspace]
"#
        ),
    )
    .unwrap();
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/calculator.rs"),
    )
    .unwrap();
    // Its surface test names a file of the examples package: the server alone.
    let server = example.split("#[cfg(test)]").next().unwrap();
    std::fs::write(project.join("src/main.rs"), server).unwrap();
    // The workspace's lock pins the same dependency versions, so its builds are reused.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"),
        project.join("Cargo.lock"),
    )
    .unwrap();
    World {
        home,
        project,
        bin_dir,
        _temp: TempDir(root),
    }
}

/// The `http` example on a free port, found through the line it prints once bound.
struct HttpExample {
    child: std::process::Child,
    url: String,
}

impl HttpExample {
    fn start(binary: &Path) -> Self {
        let mut child = Command::new(binary)
            .args(["--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the http example starts");
        let url = line
            .strip_prefix("serving MCP on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_owned();
        Self { child, url }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpExample {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One client's file: where it is, an entry of someone else's, and how to read it back.
struct ClientCase {
    name: &'static str,
    path: PathBuf,
    /// The file before `install`, holding an unrelated entry.
    before: String,
    /// That entry's exact text, which must survive.
    unrelated: &'static str,
    format: &'static str,
}

fn clients(world: &World) -> Vec<ClientCase> {
    let json = |key: &str, unrelated: &str| {
        format!("{{\n  \"theme\": \"dark\",\n  \"{key}\": {{\n    {unrelated}\n  }}\n}}\n")
    };
    const OTHER: &str = r#""other": {"command": "npx", "args": ["-y", "@acme/other-server"], "env": {"TOKEN": "x\u00e9"}}"#;
    let home = &world.home;
    let project = &world.project;
    vec![
        ClientCase {
            name: "claude-desktop",
            path: home.join(".config/Claude/claude_desktop_config.json"),
            before: json("mcpServers", OTHER),
            unrelated: OTHER,
            format: "json",
        },
        ClientCase {
            name: "claude-code",
            path: project.join(".mcp.json"),
            before: json("mcpServers", OTHER),
            unrelated: OTHER,
            format: "json",
        },
        ClientCase {
            name: "vscode",
            path: project.join(".vscode/mcp.json"),
            before: format!(
                "// VS Code allows comments here\n{}",
                json("servers", &format!("{OTHER}, // someone else's")).replace("\n}\n", ",\n  \"inputs\": []\n}\n")
            ),
            unrelated: r#""other": {"command": "npx", "args": ["-y", "@acme/other-server"], "env": {"TOKEN": "x\u00e9"}}, // someone else's"#,
            format: "jsonc",
        },
        ClientCase {
            name: "cursor",
            path: home.join(".cursor/mcp.json"),
            before: json("mcpServers", OTHER),
            unrelated: OTHER,
            format: "json",
        },
        ClientCase {
            name: "gemini-cli",
            path: home.join(".gemini/settings.json"),
            before: json("mcpServers", OTHER),
            unrelated: OTHER,
            format: "jsonc",
        },
        ClientCase {
            name: "codex",
            path: home.join(".codex/config.toml"),
            before: "model = \"o3\"  # mine\n\n[mcp_servers.other]\ncommand = \"npx\"\nargs = [\"-y\", \"@acme/other-server\"]\nenv = { TOKEN = \"x\" }\n\n[profiles.fast]\nmodel = \"mini\"\n".to_owned(),
            unrelated: "[mcp_servers.other]\ncommand = \"npx\"\nargs = [\"-y\", \"@acme/other-server\"]\nenv = { TOKEN = \"x\" }\n",
            format: "toml",
        },
    ]
}

/// The file as the client reads it, as JSON (TOML converted), or a panic naming why not.
fn parse(format: &str, text: &str) -> Value {
    match format {
        "json" => serde_json::from_str(text).expect("strict JSON"),
        "jsonc" => jsonc_parser::parse_to_serde_value::<Value>(text, &Default::default())
            .expect("JSON with comments"),
        "toml" => {
            let document: toml_edit::DocumentMut = text.parse().expect("TOML");
            let table = toml_edit::Item::Table(document.as_table().clone());
            toml_json(&table)
        }
        _ => unreachable!(),
    }
}

fn toml_json(item: &toml_edit::Item) -> Value {
    use toml_edit::{Item, Value as T};
    fn value(v: &T) -> Value {
        match v {
            T::String(s) => json!(s.value()),
            T::Integer(i) => json!(i.value()),
            T::Float(f) => json!(f.value()),
            T::Boolean(b) => json!(b.value()),
            T::Datetime(d) => json!(d.value().to_string()),
            T::Array(a) => Value::Array(a.iter().map(value).collect()),
            T::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_owned(), value(v))).collect())
            }
        }
    }
    match item {
        Item::Value(v) => value(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_json(v)))
                .collect(),
        ),
        _ => Value::Null,
    }
}

/// Every way `document` breaks the vendored schema at `file` (at `pointer`, when given).
fn schema_errors(file: &str, pointer: Option<&str>, document: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(file);
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    if let Some(pointer) = pointer {
        schema["$ref"] = json!(pointer);
    }
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    validator
        .iter_errors(document)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn installed_cargo_mcp_inspects_calls_installs_and_describes_the_calculator() {
    let world = world();

    // inspect: the calculator's tools and their arguments.
    let inspected = world.ok(&["inspect"]);
    assert!(inspected.starts_with("calculator 0.3.0"), "{inspected}");
    for line in [
        "  add  [read-only, idempotent, closed world, structured output]",
        "      a  integer  required  The first addend.",
        "      b  integer  required  The second addend.",
        "  divide  [read-only, idempotent, closed world, structured output]",
        "      dividend  number  required  The number to divide.",
        "  statistics  [read-only, idempotent, closed world, structured output]",
    ] {
        assert!(inspected.contains(line), "no `{line}` in:\n{inspected}");
    }
    let listed: Value = serde_json::from_str(&world.ok(&["inspect", "--json"])).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "divide", "statistics"]);

    // call: the result, and the exit code of a tool error.
    assert_eq!(world.ok(&["call", "add", r#"{"a":1,"b":2}"#]), "3\n");
    let refused = world.cargo_mcp(&["call", "divide", r#"{"dividend":1,"divisor":0}"#]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("tool error: cannot divide by zero"));

    // --http: the same jobs against a running Streamable HTTP server (the http example).
    let mut server = HttpExample::start(&example("http"));
    let url = server.url.clone();
    let remote = world.ok(&["inspect", "--http", &url]);
    assert!(remote.starts_with("http-example "), "{remote}");
    assert!(remote.contains("  count  [read-only]"), "{remote}");
    assert!(remote.contains("      to  integer  required"), "{remote}");
    assert_eq!(
        world.ok(&["call", "--http", &url, "add", r#"{"a":1,"b":2}"#]),
        "3\n"
    );
    server.stop();

    // --unix: the same against a server on a Unix domain socket (the everything example's
    // --unix), at http://localhost/mcp.
    let socket = world.project.with_file_name("everything.sock");
    let mut child = Command::new(example("everything"))
        .arg("--unix")
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            Instant::now() < deadline,
            "the everything example listens on its socket"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let path = socket.to_str().unwrap();
    let local = world.ok(&["inspect", "--unix", path]);
    assert!(local.starts_with("mcp-conformance-everything "), "{local}");
    assert_eq!(
        world.ok(&["call", "--unix", path, "test_simple_text"]),
        "This is a simple text response for testing.\n"
    );
    let _ = child.kill();
    let _ = child.wait();

    // install into every client: parses as the client reads it, the other entry keeps its
    // bytes, and a second run changes nothing.
    for case in clients(&world) {
        std::fs::create_dir_all(case.path.parent().unwrap()).unwrap();
        std::fs::write(&case.path, &case.before).unwrap();
        let dry = world.ok(&["install", case.name, "--env", "RUST_LOG=info", "--dry-run"]);
        assert!(dry.contains("+"), "{}: {dry}", case.name);
        assert_eq!(
            std::fs::read_to_string(&case.path).unwrap(),
            case.before,
            "{}: --dry-run wrote",
            case.name
        );

        world.ok(&["install", case.name, "--env", "RUST_LOG=info"]);
        let after = std::fs::read_to_string(&case.path).unwrap();
        assert!(
            after.contains(case.unrelated),
            "{}: the other entry changed:\n{after}",
            case.name
        );
        let parsed = parse(case.format, &after);
        let key = match case.name {
            "vscode" => "servers",
            "codex" => "mcp_servers",
            _ => "mcpServers",
        };
        let entry = &parsed[key]["calculator"];
        let command = entry["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: {after}", case.name));
        // A copy of the release build of its own, which `cargo clean` leaves.
        let installed = world.home.join(".cargo/mcp-servers/calculator/calculator");
        assert_eq!(Path::new(command), installed, "{}", case.name);
        assert_eq!(
            std::fs::read(&installed).unwrap(),
            std::fs::read(target_dir().join("release/calculator")).unwrap(),
            "{}: not the release build",
            case.name
        );
        assert_eq!(entry["env"], json!({"RUST_LOG": "info"}), "{}", case.name);
        assert_eq!(parsed[key]["other"]["command"], "npx", "{}", case.name);
        if case.format != "toml" {
            assert_eq!(parsed["theme"], "dark", "{}", case.name);
        }
        let backups = |dir: &Path| {
            std::fs::read_dir(dir)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(".bak")
                })
                .count()
        };
        let dir = case.path.parent().unwrap();
        assert_eq!(backups(dir), 1, "{}: one backup of the old file", case.name);

        let again = world.ok(&["install", case.name, "--env", "RUST_LOG=info"]);
        assert!(again.contains("unchanged"), "{}: {again}", case.name);
        assert_eq!(
            std::fs::read_to_string(&case.path).unwrap(),
            after,
            "{}: the second run changed the file",
            case.name
        );
        assert_eq!(
            backups(dir),
            1,
            "{}: no backup when nothing changed",
            case.name
        );
    }

    // --debug reuses the dev build `inspect` made; --in-place points at it, and says what
    // that costs.
    let (_, stderr) = world.ok_with_stderr(&[
        "install",
        "claude-code",
        "--debug",
        "--in-place",
        "--name",
        "calc-dev",
    ]);
    assert!(
        stderr.contains("the dev build was fresh: nothing compiled"),
        "{stderr}"
    );
    assert!(stderr.contains("`cargo clean` removes it"), "{stderr}");
    let written = parse(
        "json",
        &std::fs::read_to_string(world.project.join(".mcp.json")).unwrap(),
    );
    let command = written["mcpServers"]["calc-dev"]["command"]
        .as_str()
        .unwrap();
    assert_eq!(Path::new(command), target_dir().join("debug/calculator"));

    // card: both documents validate against their published schemas.
    let out = world.home.join("card");
    let out_text = out.to_str().unwrap();
    world.ok(&[
        "card",
        "--url",
        "https://calc.example.com/mcp",
        "--out",
        out_text,
    ]);
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.join(file)).unwrap()).unwrap()
    };
    let server = read("server.json");
    let card = read("server-card.json");
    assert_eq!(
        schema_errors("registry/server.schema.json", None, &server),
        Vec::<String>::new()
    );
    assert_eq!(
        schema_errors("server-card/schema.json", Some("#/$defs/ServerCard"), &card),
        Vec::<String>::new()
    );
    // From the server itself, and the manifest where the server says nothing.
    assert_eq!(card["name"], "io.github.someone/calculator");
    assert_eq!(card["version"], "0.3.0");
    assert_eq!(card["description"], "Adds, divides and summarises numbers.");
    assert_eq!(card["remotes"][0]["url"], "https://calc.example.com/mcp");
    assert_eq!(
        card["remotes"][0]["supportedProtocolVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
    assert_eq!(
        server["repository"],
        json!({"source": "github", "url": "https://github.com/someone/calculator"})
    );
    // The validation is not vacuous.
    let mut broken = card.clone();
    broken["name"] = json!("calculator");
    assert!(
        !schema_errors(
            "server-card/schema.json",
            Some("#/$defs/ServerCard"),
            &broken
        )
        .is_empty()
    );
}
