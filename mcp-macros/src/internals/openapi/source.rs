//! The description's files: read (JSON or YAML), kept by path, and `$ref`s resolved between
//! them. Only local files: a `$ref` to a URL is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

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
    files: BTreeMap<PathBuf, Value>,
}

impl Sources {
    /// Reads the description at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, String> {
        let document = read(path)?;
        let root_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut files = BTreeMap::new();
        files.insert(path.to_path_buf(), document);
        Ok(Self {
            root_dir,
            main: path.to_path_buf(),
            files,
        })
    }

    /// The first file's document.
    pub(crate) fn document(&self) -> &Value {
        &self.files[&self.main]
    }

    /// Every file read, for rebuild tracking.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.files.keys()
    }

    /// How `place` reads in a message: `file` and the pointer.
    pub(crate) fn show(&self, place: &Place) -> String {
        let file = place
            .file
            .strip_prefix(&self.root_dir)
            .unwrap_or(&place.file);
        let pointer = if place.pointer.is_empty() {
            "/"
        } else {
            &place.pointer
        };
        format!("`{}` at `{pointer}`", file.display())
    }

    /// The value at `place`.
    pub(crate) fn get(&self, place: &Place) -> Option<&Value> {
        self.files.get(&place.file)?.pointer(&place.pointer)
    }

    /// Where the `$ref` `reference`, written at `from`, points; reads the file it names.
    pub(crate) fn resolve(&mut self, reference: &str, from: &Place) -> Result<Place, String> {
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
                let document = read(&joined)?;
                self.files.insert(joined.clone(), document);
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
                    place = self
                        .resolve(&reference, &place)
                        .map_err(|e| format!("{}: {e}", self.show(&place)))?;
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
fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let yaml = matches!(extension, "yaml" | "yml");
    if !yaml {
        match serde_json::from_str(&text) {
            Ok(value) => return Ok(value),
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
    yaml_to_json(documents.remove(0)).map_err(|e| format!("`{}`: {e}", path.display()))
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
