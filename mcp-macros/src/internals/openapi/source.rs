//! The description's files: read (JSON or YAML), kept by path, and `$ref`s resolved between
//! them. Only local files: a `$ref` to a URL is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

use super::locate::{Position, locate};

/// A place in one of the description's files: the file (relative to the first, for messages)
/// and a JSON pointer in it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    pub(crate) file: PathBuf,
    pub(crate) pointer: String,
}

impl Place {
    /// The place of `key` under this one.
    pub(crate) fn join(&self, key: &str) -> Self {
        Self {
            file: self.file.clone(),
            pointer: format!("{}/{}", self.pointer, escape(key)),
        }
    }
}

/// A JSON pointer's escape of one key: `~` as `~0`, `/` as `~1`.
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Every file read, by absolute path.
pub(crate) struct Sources {
    /// The first file's directory, which names in messages are relative to.
    root_dir: PathBuf,
    pub(crate) main: PathBuf,
    files: BTreeMap<PathBuf, File>,
    /// Where the `$ref` in the object at each place is written, once a message needed it.
    positions: BTreeMap<Place, Option<Position>>,
}

/// One file read.
struct File {
    document: Value,
    /// Read as YAML (else JSON), for finding where a place is written.
    yaml: bool,
}

impl Sources {
    /// Reads the description at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, String> {
        let file = read(path)?;
        let root_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut files = BTreeMap::new();
        files.insert(path.to_path_buf(), file);
        Ok(Self {
            root_dir,
            main: path.to_path_buf(),
            files,
            positions: BTreeMap::new(),
        })
    }

    /// The first file's document.
    pub(crate) fn document(&self) -> &Value {
        &self.files[&self.main].document
    }

    /// The document of `file`, when it has been read.
    pub(crate) fn document_of(&self, file: &Path) -> Option<&Value> {
        self.files.get(file).map(|f| &f.document)
    }

    /// Every file read, for rebuild tracking.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.files.keys()
    }

    /// How `place` reads in a message: `file` and the pointer.
    pub(crate) fn show(&self, place: &Place) -> String {
        format!(
            "`{}` at `{}`",
            self.file_name(&place.file),
            shown_pointer(place)
        )
    }

    /// Finds where the `$ref` in the object at each of `places` is written, reading each file
    /// again (once), for messages.
    pub(crate) fn find_references(&mut self, places: &[Place]) {
        let mut by_file: BTreeMap<&PathBuf, Vec<&Place>> = BTreeMap::new();
        for place in places {
            by_file.entry(&place.file).or_default().push(place);
        }
        for (path, places) in by_file {
            let pointers: Vec<String> = places
                .iter()
                .map(|place| format!("{}/$ref", place.pointer))
                .collect();
            let pointers: Vec<&str> = pointers.iter().map(String::as_str).collect();
            let text = std::fs::read_to_string(path).ok();
            let found = match (self.files.get(path), text) {
                (Some(file), Some(text)) => locate(&text, file.yaml, &pointers),
                _ => vec![None; places.len()],
            };
            for (place, position) in places.into_iter().zip(found) {
                self.positions.insert(place.clone(), position);
            }
        }
    }

    /// How the `$ref` written in the object at `place` reads in a message: `file:line:column`,
    /// where its key is written, and the pointer.
    pub(crate) fn show_reference(&mut self, place: &Place) -> String {
        if !self.positions.contains_key(place) {
            self.find_references(std::slice::from_ref(place));
        }
        match self.positions.get(place).copied().flatten() {
            Some(at) => format!(
                "`{}:{}:{}` at `{}`",
                self.file_name(&place.file),
                at.line,
                at.column,
                shown_pointer(place)
            ),
            None => self.show(place),
        }
    }

    /// A file's name in messages: relative to the first file's directory.
    fn file_name(&self, file: &Path) -> String {
        file.strip_prefix(&self.root_dir)
            .unwrap_or(file)
            .display()
            .to_string()
    }

    /// The value at `place`.
    pub(crate) fn get(&self, place: &Place) -> Option<&Value> {
        self.files
            .get(&place.file)?
            .document
            .pointer(&place.pointer)
    }

    /// Where the `$ref` `reference`, written in the object at `from`, points; reads the file it
    /// names. The error is the whole message, naming where the `$ref` is written.
    pub(crate) fn resolve(&mut self, reference: &str, from: &Place) -> Result<Place, String> {
        match self.target(reference, from) {
            Ok(place) => Ok(place),
            Err(e) => Err(format!("{}: {e}", self.show_reference(from))),
        }
    }

    /// As [`resolve`](Self::resolve), with an error that does not say where the `$ref` is.
    pub(crate) fn target(&mut self, reference: &str, from: &Place) -> Result<Place, String> {
        let (file_part, fragment) = match reference.split_once('#') {
            Some((file, fragment)) => (file, fragment),
            None => (reference, ""),
        };
        if file_part.contains("://") || file_part.starts_with("//") {
            return Err(format!(
                "the `$ref` `{reference}` names a URL; only local files are read (save it beside \
                 the description and refer to the file)"
            ));
        }
        let file = if file_part.is_empty() {
            from.file.clone()
        } else {
            let dir = from.file.parent().unwrap_or(Path::new(""));
            let joined = normalize(&dir.join(percent_decode(file_part)));
            if !self.files.contains_key(&joined) {
                let file = read(&joined)?;
                self.files.insert(joined.clone(), file);
            }
            joined
        };
        let pointer = percent_decode(fragment);
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "the `$ref` `{reference}` has a fragment that is not a JSON pointer"
            ));
        }
        let place = Place { file, pointer };
        if self.get(&place).is_none() {
            return Err(format!("the `$ref` `{reference}` points at nothing"));
        }
        Ok(place)
    }

    /// Follows `$ref`s from the value at `place` (a chain of them) to an object that is not one.
    pub(crate) fn deref(&mut self, mut place: Place) -> Result<(Place, Value), String> {
        for _ in 0..32 {
            let value = self
                .get(&place)
                .cloned()
                .ok_or_else(|| format!("{} is missing", self.show(&place)))?;
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    let reference = reference.to_owned();
                    place = self.resolve(&reference, &place)?;
                }
                None => return Ok((place, value)),
            }
        }
        Err(format!(
            "{}: a `$ref` chain that does not end",
            self.show(&place)
        ))
    }
}

/// A place's pointer in messages: `/` for the whole file.
fn shown_pointer(place: &Place) -> &str {
    if place.pointer.is_empty() {
        "/"
    } else {
        &place.pointer
    }
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One file as JSON: by its extension (`.yaml`/`.yml` YAML, `.json` JSON), else JSON first.
fn read(path: &Path) -> Result<File, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let yaml = matches!(extension, "yaml" | "yml");
    if !yaml {
        match serde_json::from_str(&text) {
            Ok(document) => {
                return Ok(File {
                    document,
                    yaml: false,
                });
            }
            Err(e) if extension == "json" => {
                return Err(format!("`{}` is not JSON: {e}", path.display()));
            }
            Err(_) => {}
        }
    }
    let mut documents = YamlLoader::load_from_str(&text)
        .map_err(|e| format!("`{}` is not YAML: {e}", path.display()))?;
    if documents.len() != 1 {
        return Err(format!(
            "`{}` holds {} YAML documents; a description is one",
            path.display(),
            documents.len()
        ));
    }
    let document =
        yaml_to_json(documents.remove(0)).map_err(|e| format!("`{}`: {e}", path.display()))?;
    Ok(File {
        document,
        yaml: true,
    })
}

fn yaml_to_json(yaml: Yaml) -> Result<Value, String> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(Number::from(i)),
        Yaml::Real(text) => {
            let parsed: f64 = text
                .parse()
                .map_err(|_| format!("`{text}` is not a number JSON can hold"))?;
            Number::from_f64(parsed)
                .map(Value::Number)
                .ok_or_else(|| format!("`{text}` is not a number JSON can hold"))?
        }
        Yaml::String(text) => Value::String(text),
        Yaml::Array(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let key = match key {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Real(r) => r,
                    Yaml::Null => "null".to_owned(),
                    other => return Err(format!("a mapping key that is not a scalar: {other:?}")),
                };
                map.insert(key, yaml_to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) => return Err("an alias that does not resolve".to_owned()),
        Yaml::BadValue => return Err("a value that is not YAML".to_owned()),
    })
}
