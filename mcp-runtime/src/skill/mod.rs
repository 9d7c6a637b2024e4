//! Agent skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): directories of a
//! `SKILL.md` and files, each file a resource at `skill://<skill-path>/<file-path>`, listed by
//! `skills/list` with a SHA-256 digest and size over the exact bytes served.
//!
//! Skills come embedded at compile time (`skills!("dir")`, checked by the macro), from a
//! directory read when the server is built ([`Skills::from_dir`], the same checks as startup
//! errors), or built in code ([`Skill::new`]).
//!
//! It may import the items (`resource`, `tool`, `completion`), `context`, `protocol`, `schema`,
//! `metadata` and `error`; the server imports it.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use crate::protocol::ResourceContents;
use crate::resource::{ResourceBuilder, ResourceDef};

pub use mcp_skill_format::{MAX_BYTES, MAX_ENTRIES};

/// The extension's identifier under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// A skill embedded by `skills!`: what the macro expands to. Not for hand-written code.
#[doc(hidden)]
pub struct EmbeddedSkill {
    pub path: &'static str,
    pub files: &'static [EmbeddedFile],
}

/// One file of an [`EmbeddedSkill`].
#[doc(hidden)]
pub struct EmbeddedFile {
    pub path: &'static str,
    pub bytes: &'static [u8],
}

/// The skills a server serves; add them with `Server::skills`.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    pub(crate) skills: Vec<Skill>,
    /// What was found wrong, reported by the server build.
    pub(crate) problems: Vec<(String, String)>,
}

impl Skills {
    /// No skills yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What `skills!("dir")` expands to: skills the macro has read and checked.
    #[doc(hidden)]
    pub fn embedded(skills: &'static [EmbeddedSkill]) -> Self {
        let mut out = Self::new();
        for embedded in skills {
            let manifest = embedded
                .files
                .iter()
                .find(|f| f.path == "SKILL.md")
                .map(|f| String::from_utf8_lossy(f.bytes).into_owned())
                .unwrap_or_default();
            let mut skill = Skill::new(embedded.path, manifest);
            skill.files.clear();
            for file in embedded.files {
                skill.push(file.path, Cow::Borrowed(file.bytes));
            }
            out = out.skill(skill);
        }
        out
    }

    /// Reads the skills directory `root` now (for content that changes without a rebuild): the
    /// checks of `skills!`, as errors. A symbolic link leaving `root` is refused.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Self, crate::Error> {
        let root = root.as_ref();
        let invalid = |path: &str, problem: String| {
            crate::Error::Definition(vec![crate::DefinitionError::Invalid {
                kind: "skill",
                name: path.to_owned(),
                location: root.display().to_string(),
                problem,
            }])
        };
        // A fault on a line of a file is located at `file:line`, as a compiler would.
        let found = mcp_skill_format::scan(root).map_err(|e| match e.line {
            Some(line) => crate::Error::Definition(vec![crate::DefinitionError::Invalid {
                kind: "skill",
                name: e.path.clone(),
                location: format!("{}:{line}", root.join(&e.path).display()),
                problem: e.message,
            }]),
            None => invalid(&e.path, e.message),
        })?;
        let mut out = Self::new();
        for skill in found {
            let mut built = Skill {
                path: skill.skill_path.clone(),
                frontmatter: yaml_to_json(&skill.frontmatter),
                files: Vec::new(),
                dynamic: false,
                problems: Vec::new(),
            };
            for file in &skill.files {
                let bytes = std::fs::read(&file.path).map_err(|e| {
                    invalid(
                        &format!("{}/{}", skill.skill_path, file.relative),
                        format!("cannot read: {e}"),
                    )
                })?;
                built.push(&file.relative, Cow::Owned(bytes));
            }
            let total: u64 = built.files.iter().map(|f| f.bytes.len() as u64).sum();
            if total > MAX_BYTES {
                return Err(invalid(
                    &skill.skill_path,
                    format!("the skill's files add up to {total} bytes, over 16 MiB"),
                ));
            }
            out = out.skill(built);
        }
        Ok(out)
    }

    /// Adds a skill built in code.
    pub fn skill(mut self, skill: Skill) -> Self {
        for problem in &skill.problems {
            self.problems.push((skill.path.clone(), problem.clone()));
        }
        self.skills.push(skill);
        self
    }

    /// Adds every skill of `other`.
    pub fn extend(&mut self, other: Skills) {
        self.skills.extend(other.skills);
        self.problems.extend(other.problems);
    }

    /// Whether there is no skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}

/// One skill: its `SKILL.md` and files.
#[derive(Debug, Clone)]
pub struct Skill {
    pub(crate) path: String,
    pub(crate) frontmatter: Value,
    pub(crate) files: Vec<SkillFile>,
    pub(crate) dynamic: bool,
    problems: Vec<String>,
}

/// A file of a skill, with its digest computed once.
#[derive(Debug, Clone)]
pub(crate) struct SkillFile {
    pub(crate) relative: String,
    pub(crate) bytes: Arc<Cow<'static, [u8]>>,
    pub(crate) digest: String,
    pub(crate) mime_type: &'static str,
}

impl Skill {
    /// A skill at `skill://<skill_path>/SKILL.md` whose `SKILL.md` is `manifest`. The checks of
    /// `skills!` apply (frontmatter, name rules, the name equal to the last path segment); a
    /// failed one fails the server build.
    pub fn new(skill_path: impl Into<String>, manifest: impl Into<String>) -> Self {
        let path = skill_path.into();
        let manifest = manifest.into();
        let mut problems = Vec::new();
        let segments_ok = !path.is_empty()
            && path.split('/').all(|s| {
                !s.is_empty()
                    && s != "."
                    && s != ".."
                    && s.bytes().all(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
                    })
            });
        if !segments_ok {
            problems.push(format!("`{path}` is not a skill path (`a/b`, no `..`)"));
        }
        let dir_name = path.rsplit('/').next().unwrap_or_default();
        let frontmatter = match mcp_skill_format::check_manifest(&manifest, dir_name) {
            Ok(yaml) => yaml_to_json(&yaml),
            Err(problem) => {
                problems.push(format!("SKILL.md:{}: {}", problem.line, problem.message));
                Value::Object(Map::new())
            }
        };
        let mut skill = Self {
            path,
            frontmatter,
            files: Vec::new(),
            dynamic: false,
            problems,
        };
        skill.push("SKILL.md", Cow::Owned(manifest.into_bytes()));
        skill
    }

    /// Adds the file `relative` (`references/forms.md`) with `bytes`.
    pub fn file(mut self, relative: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        let relative = relative.into();
        let ok = relative
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
        if !ok || relative.starts_with('/') {
            self.problems
                .push(format!("`{relative}` is not a path inside the skill"));
            return self;
        }
        if self.files.iter().any(|f| f.relative == relative) {
            self.problems.push(format!("`{relative}` is added twice"));
            return self;
        }
        self.push(&relative, Cow::Owned(bytes.into()));
        if self.files.len() > MAX_ENTRIES {
            self.problems.push(format!("more than {MAX_ENTRIES} files"));
        }
        self
    }

    /// Lists the skill's resources as `"dynamic"`: its files are not enumerated (they may be
    /// served by a resource template), only `SKILL.md` is.
    pub fn dynamic(mut self) -> Self {
        self.dynamic = true;
        self
    }

    fn push(&mut self, relative: &str, bytes: Cow<'static, [u8]>) {
        let digest = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
        self.files.push(SkillFile {
            relative: relative.to_owned(),
            mime_type: mcp_skill_format::mime_type(relative),
            bytes: Arc::new(bytes),
            digest,
        });
    }

    fn uri(&self, relative: &str) -> String {
        format!("skill://{}/{relative}", self.path)
    }

    fn name(&self) -> &str {
        self.frontmatter["name"].as_str().unwrap_or_default()
    }

    fn description(&self) -> &str {
        self.frontmatter["description"].as_str().unwrap_or_default()
    }

    /// The skill entry of `skills/list` and `skills/get`.
    fn entry(&self) -> Value {
        let resources = if self.dynamic {
            Value::from("dynamic")
        } else {
            self.files
                .iter()
                .map(|f| {
                    json!({"uri": self.uri(&f.relative), "digest": f.digest, "size": f.bytes.len()})
                })
                .collect()
        };
        json!({
            "uri": self.uri("SKILL.md"),
            "frontmatter": self.frontmatter,
            "resources": resources,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn yaml_to_json(yaml: &mcp_skill_format::Yaml) -> Value {
    use mcp_skill_format::Yaml;
    match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Int(i) => Value::from(*i),
        Yaml::Float(f) => Value::from(*f),
        Yaml::Str(s) => Value::from(s.as_str()),
        Yaml::Seq(items) => items.iter().map(yaml_to_json).collect(),
        Yaml::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), yaml_to_json(v)))
                .collect(),
        ),
    }
}

/// The skills of a built server: entries serialized once, and the directory tree for
/// `resources/directory/read`.
#[derive(Debug, Default)]
pub(crate) struct SkillCatalog {
    /// Each skill's entry, serialized, in path order.
    entries: Vec<String>,
    /// The entry of each skill by its `SKILL.md` URI.
    by_uri: HashMap<String, Value>,
    /// Each directory's children (Resource objects, serialized), by the directory's URI.
    directories: BTreeMap<String, Vec<String>>,
}

impl SkillCatalog {
    /// The catalogue and one static resource per file; `problems` gets every definition error.
    pub(crate) fn build(
        skills: Skills,
        problems: &mut Vec<(String, String)>,
    ) -> (Self, Vec<ResourceDef>) {
        let Skills {
            mut skills,
            problems: found,
        } = skills;
        problems.extend(found);
        skills.sort_by(|a, b| a.path.cmp(&b.path));
        for pair in skills.windows(2) {
            if pair[0].path == pair[1].path {
                problems.push((pair[0].path.clone(), "two skills at the same path".into()));
            }
        }
        let mut catalog = Self::default();
        let mut resources = Vec::new();
        // Every file once, with the skill that owns it most closely (nested skills' files are
        // also their parents').
        let mut files: BTreeMap<String, (Value, &Skill, &SkillFile)> = BTreeMap::new();
        for skill in &skills {
            let entry = skill.entry();
            catalog.entries.push(entry.to_string());
            catalog.by_uri.insert(skill.uri("SKILL.md"), entry);
            for file in &skill.files {
                let uri = skill.uri(&file.relative);
                let mut resource = json!({
                    "uri": uri,
                    "name": file.relative,
                    "mimeType": file.mime_type,
                    "size": file.bytes.len(),
                });
                if file.relative == "SKILL.md" {
                    resource["name"] = Value::from(skill.name());
                    resource["description"] = Value::from(skill.description());
                }
                // The deepest skill comes last in path order and wins.
                files.insert(uri, (resource, skill, file));
            }
        }
        for (uri, (resource, skill, file)) in &files {
            resources.push(file_resource(uri, skill, file));
            let path = &uri["skill://".len()..];
            let mut parent = String::from("skill://");
            let segments: Vec<&str> = path.split('/').collect();
            for (i, segment) in segments.iter().enumerate() {
                let child = if i == 0 {
                    format!("skill://{segment}")
                } else {
                    format!("{parent}/{segment}")
                };
                if i > 0 {
                    let children = catalog.directories.entry(parent.clone()).or_default();
                    let item = if i + 1 == segments.len() {
                        resource.to_string()
                    } else {
                        json!({"uri": child, "name": segment, "mimeType": "inode/directory"})
                            .to_string()
                    };
                    if !children.contains(&item) {
                        children.push(item);
                    }
                }
                parent = child;
            }
        }
        (catalog, resources)
    }

    /// Whether any skill is served.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The serialized entries of `skills/list`.
    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<&Value> {
        self.by_uri.get(uri)
    }

    /// The children of the directory at `uri` (no trailing slash), serialized.
    pub(crate) fn children(&self, uri: &str) -> Option<&[String]> {
        self.directories.get(uri).map(Vec::as_slice)
    }
}

/// The static resource serving one skill file.
fn file_resource(uri: &str, skill: &Skill, file: &SkillFile) -> ResourceDef {
    let bytes = Arc::clone(&file.bytes);
    let mime = file.mime_type;
    let served = uri.to_owned();
    let text = mcp_skill_format::is_text(mime)
        .then(|| std::str::from_utf8(&bytes).ok().map(str::to_owned))
        .flatten()
        .map(Arc::<str>::from);
    let name = if file.relative == "SKILL.md" {
        skill.name().to_owned()
    } else {
        file.relative.clone()
    };
    let mut builder = ResourceBuilder::new(uri.to_owned(), name, move |_call| {
        let contents = match &text {
            Some(text) => ResourceContents::text(served.clone(), mime, &**text),
            None => ResourceContents::blob(served.clone(), mime, &**bytes),
        };
        Box::pin(std::future::ready(Ok(vec![contents])))
    });
    builder.mime_type(mime).size(file.bytes.len() as u64);
    if file.relative == "SKILL.md" {
        builder.description(skill.description().to_owned());
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_carry_digests_of_the_bytes() {
        let skill = Skill::new("pdf", "---\nname: pdf\ndescription: PDFs\n---\nBody\n")
            .file("references/a.md", "abc");
        let entry = skill.entry();
        assert_eq!(entry["uri"], "skill://pdf/SKILL.md");
        assert_eq!(
            entry["frontmatter"],
            json!({"name": "pdf", "description": "PDFs"})
        );
        assert_eq!(
            entry["resources"][1],
            json!({"uri": "skill://pdf/references/a.md", "size": 3,
                   "digest": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"})
        );
    }

    #[test]
    fn code_skills_are_checked() {
        let skills = Skills::new()
            .skill(Skill::new("pdf", "---\nname: other\ndescription: x\n---\n"))
            .skill(Skill::new("a/../b", "---\nname: b\ndescription: x\n---\n").file("../x", "1"));
        let problems: Vec<_> = skills.problems.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("differs"));
    }
}
