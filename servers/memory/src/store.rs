//! The knowledge graph on disk: the original's JSONL file, where it lives, and how it is read
//! and replaced.
//!
//! One JSON object a line, entities first, then relations, with no newline after the last:
//!
//! ```text
//! {"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program"]}
//! {"type":"relation","from":"Ada","to":"Analytical Engine","relationType":"programmed"}
//! ```
//!
//! Blank lines and objects of another `type` are skipped when reading, as the original skips
//! them. A write goes to a new file beside the graph (created exclusively, under a random
//! name), is flushed to disk and renamed over it: a reader, or a crash, sees the old graph or
//! the new one, never part of one. While one write is under way no other starts, in this
//! process (the server's lock) or another (an advisory lock on `<file>.lock`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use mcp_runtime::prelude::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest graph file read or written (64 MiB): a larger one is refused with an error
/// naming the bound, so no call holds more than that of graph.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The environment variable naming the file, as the original's.
pub const PATH_VARIABLE: &str = "MEMORY_FILE_PATH";

/// A node of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Entity {
    /// The name of the entity
    pub name: String,
    /// The type of the entity
    #[serde(rename = "entityType")]
    pub entity_type: String,
    /// An array of observation contents associated with the entity
    pub observations: Vec<String>,
}

/// A directed edge between two entities, named in active voice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Relation {
    /// The name of the entity where the relation starts
    pub from: String,
    /// The name of the entity where the relation ends
    pub to: String,
    /// The type of the relation
    #[serde(rename = "relationType")]
    pub relation_type: String,
}

/// The whole graph, or the part of it a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Graph {
    /// The entities.
    pub entities: Vec<Entity>,
    /// The relations.
    pub relations: Vec<Relation>,
}

/// One line of the file as read: an entity, a relation, or an object of another `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum LineIn {
    Entity(Entity),
    Relation(Relation),
    #[serde(other)]
    Other,
}

/// Why `line` (number `number`) is neither an entity, a relation nor an object to skip:
/// `Ok` for an object with no `type` or one of another kind, which is skipped.
fn check_line(path: &Path, number: usize, line: &str) -> Result<(), StoreError> {
    let item: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| StoreError(format!("{} line {number}: not JSON ({e})", path.display())))?;
    match item.get("type").and_then(|t| t.as_str()) {
        Some(kind @ ("entity" | "relation")) => Err(StoreError(format!(
            "{} line {number}: not a valid {kind}",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// One line of the file.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum LineOut<'a> {
    Entity(&'a Entity),
    Relation(&'a Relation),
}

/// Why the graph could not be read or written.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io_error(error: io::Error, what: &str, path: &Path) -> StoreError {
    StoreError(format!("{what} {}: {error}", path.display()))
}

/// Where the graph lives: `MEMORY_FILE_PATH` when set (a relative path is taken from the
/// default file's directory, as the original takes it from its own), else `memory.jsonl` in
/// this server's data directory ([`data_dir`]).
pub fn file_path() -> PathBuf {
    let default_dir = data_dir();
    match std::env::var_os(PATH_VARIABLE).filter(|p| !p.is_empty()) {
        Some(path) => default_dir.join(path),
        None => default_dir.join("memory.jsonl"),
    }
}

/// `$XDG_DATA_HOME/mcp-server-memory` or `~/.local/share/mcp-server-memory` (Linux and other
/// Unix), `~/Library/Application Support/mcp-server-memory` (macOS),
/// `%APPDATA%\mcp-server-memory` (Windows); the current directory when none is known.
pub fn data_dir() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("APPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
    };
    base.unwrap_or_default().join("mcp-server-memory")
}

/// The original's format before JSONL was `memory.json` beside it: with no `MEMORY_FILE_PATH`
/// and no `memory.jsonl`, a `memory.json` in the data directory is renamed to it.
pub fn migrate_legacy(path: &Path) {
    if std::env::var_os(PATH_VARIABLE).is_some_and(|p| !p.is_empty()) || path.exists() {
        return;
    }
    let legacy = path.with_file_name("memory.json");
    if legacy.is_file() {
        eprintln!(
            "DETECTED: Found legacy memory.json file, migrating to memory.jsonl for JSONL format compatibility"
        );
        match fs::rename(&legacy, path) {
            Ok(()) => eprintln!("COMPLETED: Successfully migrated memory.json to memory.jsonl"),
            Err(error) => eprintln!("Migration of {} failed: {error}", legacy.display()),
        }
    }
}

/// The graph in `path`; empty when there is no file yet.
pub fn load(path: &Path) -> Result<Graph, StoreError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Graph::default()),
        Err(error) => return Err(io_error(error, "cannot open", path)),
    };
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| io_error(e, "cannot read", path))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    let mut graph = Graph::default();
    for (number, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<LineIn>(line) {
            Ok(LineIn::Entity(entity)) => graph.entities.push(entity),
            Ok(LineIn::Relation(relation)) => graph.relations.push(relation),
            Ok(LineIn::Other) => {}
            // Not one of the three shapes: find out why, for the error, or skip an object of
            // no known `type`.
            Err(_) => check_line(path, number + 1, line)?,
        }
    }
    Ok(graph)
}

fn too_large(path: &Path) -> StoreError {
    StoreError(format!(
        "the memory file {} is larger than {MAX_FILE_BYTES} bytes; remove entities or start another file with {PATH_VARIABLE}",
        path.display()
    ))
}

/// The file's text for `graph`.
pub fn to_jsonl(graph: &Graph) -> Result<String, StoreError> {
    let lines: Result<Vec<String>, _> = graph
        .entities
        .iter()
        .map(LineOut::Entity)
        .chain(graph.relations.iter().map(LineOut::Relation))
        .map(|line| serde_json::to_string(&line))
        .collect();
    lines
        .map(|lines| lines.join("\n"))
        .map_err(|e| StoreError(e.to_string()))
}

/// Replaces the file at `path` with `graph`, atomically (the module docs say how).
pub fn save(path: &Path, graph: &Graph) -> Result<(), StoreError> {
    let text = to_jsonl(graph)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (temp, mut file) = create_beside(path)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temp, path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error(error, "cannot write", path));
    }
    // The rename itself reaches the disk with the directory (POSIX; elsewhere a no-op).
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Holds the advisory lock on `<path>.lock` (made with the file's directory when missing) until
/// dropped, so writers in other processes take turns with this one.
pub fn lock(path: &Path) -> Result<File, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|e| io_error(e, "cannot create", dir))?;
    }
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io_error(e, "cannot open", &lock_path))?;
    file.lock()
        .map_err(|e| io_error(e, "cannot lock", &lock_path))?;
    Ok(file)
}

/// A new file beside `path`, `<name>.<32 hex digits>.tmp`, created exclusively.
fn create_beside(path: &Path) -> Result<(PathBuf, File), StoreError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).map_err(|e| StoreError(format!("no randomness: {e}")))?;
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let temp = path.with_file_name(format!("{name}.{hex}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {}
            Err(error) => return Err(io_error(error, "cannot create", &temp)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_and_other_objects_are_skipped_and_a_bad_entity_named() {
        let dir = std::env::temp_dir().join(format!("mcp-memory-load-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("memory.jsonl");
        fs::write(
            &path,
            "\n{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[]}\n  \n\
             {\"type\":\"note\",\"text\":\"x\"}\n{\"no\":\"type\"}\n\
             {\"type\":\"relation\",\"from\":\"A\",\"to\":\"A\",\"relationType\":\"is\"}",
        )
        .unwrap();
        let graph = load(&path).unwrap();
        assert_eq!((graph.entities.len(), graph.relations.len()), (1, 1));
        fs::write(&path, "{\"type\":\"entity\",\"name\":\"A\"}").unwrap();
        let error = load(&path).unwrap_err().0;
        assert_eq!(
            error,
            format!("{} line 1: not a valid entity", path.display())
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lines_are_written_as_the_original_writes_them() {
        let graph = Graph {
            entities: vec![Entity {
                name: "Ada".into(),
                entity_type: "person".into(),
                observations: vec!["wrote \"notes\"".into()],
            }],
            relations: vec![Relation {
                from: "Ada".into(),
                to: "Engine".into(),
                relation_type: "programmed".into(),
            }],
        };
        assert_eq!(
            to_jsonl(&graph).unwrap(),
            "{\"type\":\"entity\",\"name\":\"Ada\",\"entityType\":\"person\",\"observations\":[\"wrote \\\"notes\\\"\"]}\n\
             {\"type\":\"relation\",\"from\":\"Ada\",\"to\":\"Engine\",\"relationType\":\"programmed\"}"
        );
    }
}
