//! Comparing two JSON Schemas with variance in mind: what a change does to the set of values a
//! schema allows (narrowed, widened, incompatible, documentation only), found property by
//! property through local `$ref`s, nullable wrappers, nested objects and array items. Whether that
//! breaks a client depends on the direction data flows ([`Direction`]).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// Whether a change can break an existing client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// An existing client may stop working: something it used is gone, it must now send
    /// something it did not, or it may now receive something it cannot read.
    Breaking,
    /// Existing clients keep working: additions, wider inputs, new descriptions.
    NonBreaking,
}

impl ChangeKind {
    /// `"breaking"` or `"non-breaking"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Breaking => "breaking",
            Self::NonBreaking => "non-breaking",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way data flows through a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// The client sends it (a tool's arguments): narrowing breaks.
    Input,
    /// The client receives it (structured output): widening breaks.
    Output,
}

/// What a schema change does to the set of values the schema allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Fewer values allowed.
    Narrowed,
    /// More values allowed.
    Widened,
    /// Some allowed values gone and others new, or something gone entirely: breaks both ways.
    Incompatible,
    /// Documentation only.
    Neutral,
}

impl Effect {
    pub(super) fn kind(self, direction: Direction) -> ChangeKind {
        match (self, direction) {
            (Self::Incompatible, _)
            | (Self::Narrowed, Direction::Input)
            | (Self::Widened, Direction::Output) => ChangeKind::Breaking,
            _ => ChangeKind::NonBreaking,
        }
    }
}

/// One schema difference, at a path of property names (`"[]"` for array items).
#[derive(Debug)]
pub(super) struct Finding {
    pub(super) effect: Effect,
    pub(super) path: Vec<String>,
    what: What,
}

#[derive(Debug)]
enum What {
    /// A property is gone.
    Removed,
    /// A property is new; whether the new schema requires it.
    Added { required: bool },
    /// Newly in `required`.
    NowRequired,
    /// No longer in `required`.
    NowOptional,
    /// Anything else, already worded.
    Other(String),
}

impl Finding {
    /// The wording after `tool "x": `.
    pub(super) fn describe(&self, place: &str, noun: &str) -> String {
        match &self.what {
            What::Removed => format!("{place} removed"),
            What::Added { required } => {
                let adjective = if *required { "required" } else { "optional" };
                let last = self.path.last().map_or(String::new(), |p| quoted(p));
                let parent = &self.path[..self.path.len().saturating_sub(1)];
                if parent.is_empty() {
                    format!("new {adjective} {noun} {last}")
                } else {
                    let parent = describe_place(noun, parent);
                    format!("{parent}: new {adjective} field {last}")
                }
            }
            What::NowRequired => format!("{place} is now required"),
            What::NowOptional if noun == "output field" => format!("{place} may now be absent"),
            What::NowOptional => format!("{place} is now optional"),
            What::Other(text) if self.path.is_empty() => format!("{noun}s: {text}"),
            What::Other(text) => format!("{place}: {text}"),
        }
    }
}

/// `argument "a.b[]"`.
pub(super) fn describe_place(noun: &str, path: &[String]) -> String {
    let mut joined = String::new();
    for part in path {
        if part != "[]" && !joined.is_empty() {
            joined.push('.');
        }
        joined.push_str(part);
    }
    format!("{noun} {}", quoted(&joined))
}

pub(super) fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// The two root schemas, for resolving local `$ref`s.
pub(super) struct SchemaPair<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
}

const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];
const EXACT: &[&str] = &["format", "pattern", "multipleOf", "contentEncoding"];
const DOCUMENTATION: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "$comment",
];
/// Keywords the comparison understands; a change to any other is listed as neutral.
const HANDLED: &[&str] = &[
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "properties",
    "required",
    "additionalProperties",
    "items",
];

/// How deep nested schemas are followed (recursive types end somewhere).
const MAX_DEPTH: usize = 24;

impl<'a> SchemaPair<'a> {
    pub(super) fn new(old_root: &'a Value, new_root: &'a Value) -> Self {
        Self { old_root, new_root }
    }

    pub(super) fn compare(
        &self,
        old: &Value,
        new: &Value,
        path: &[String],
        out: &mut Vec<Finding>,
    ) {
        if path.len() > MAX_DEPTH {
            return;
        }
        // Nullability shows in the types of the whole schema; the rest compares what is inside.
        let (old_whole, new_whole) = (resolve(self.old_root, old), resolve(self.new_root, new));
        let (old, new) = (unwrap_nullable(old_whole), unwrap_nullable(new_whole));
        let finding = |effect, text: String| Finding {
            effect,
            path: path.to_vec(),
            what: What::Other(text),
        };

        // Types.
        match (
            types(self.old_root, old_whole),
            types(self.new_root, new_whole),
        ) {
            (None, Some(new_types)) => out.push(finding(
                Effect::Narrowed,
                format!("type narrowed from any to {}", show_types(&new_types)),
            )),
            (Some(old_types), None) => out.push(finding(
                Effect::Widened,
                format!("type widened from {} to any", show_types(&old_types)),
            )),
            (Some(old_types), Some(new_types)) => {
                let lost = old_types.iter().any(|t| !type_covered(t, &new_types));
                let gained = new_types.iter().any(|t| !type_covered(t, &old_types));
                let text = |verb| {
                    format!(
                        "type {verb} from {} to {}",
                        show_types(&old_types),
                        show_types(&new_types)
                    )
                };
                match (lost, gained) {
                    (true, true) => out.push(finding(Effect::Incompatible, text("changed"))),
                    (true, false) => out.push(finding(Effect::Narrowed, text("narrowed"))),
                    (false, true) => out.push(finding(Effect::Widened, text("widened"))),
                    (false, false) => {}
                }
            }
            (None, None) => {}
        }

        // Enumerations.
        match (enum_values(old_whole), enum_values(new_whole)) {
            (None, Some(values)) => out.push(finding(
                Effect::Narrowed,
                format!("now restricted to {}", show_values(&values)),
            )),
            (Some(_), None) => out.push(finding(
                Effect::Widened,
                "no longer restricted to fixed values".to_owned(),
            )),
            (Some(old_values), Some(new_values)) => {
                let removed: BTreeSet<String> =
                    old_values.difference(&new_values).cloned().collect();
                let added: BTreeSet<String> = new_values.difference(&old_values).cloned().collect();
                if !removed.is_empty() {
                    out.push(finding(
                        Effect::Narrowed,
                        format!("{} removed", show_enum(&removed)),
                    ));
                }
                if !added.is_empty() {
                    out.push(finding(
                        Effect::Widened,
                        format!("{} added", show_enum(&added)),
                    ));
                }
            }
            (None, None) => {}
        }

        // Bounds and exact constraints.
        let (empty_a, empty_b) = (Map::new(), Map::new());
        let old_map = old.as_object().unwrap_or(&empty_a);
        let new_map = new.as_object().unwrap_or(&empty_b);
        for (keys, lower) in [(LOWER_BOUNDS, true), (UPPER_BOUNDS, false)] {
            for key in keys {
                let a = old_map.get(*key).and_then(Value::as_f64);
                let b = new_map.get(*key).and_then(Value::as_f64);
                let tighter = match (a, b) {
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (Some(a), Some(b)) if a == b => continue,
                    (Some(a), Some(b)) => (b > a) == lower,
                    (None, None) => continue,
                };
                let shown = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
                let (effect, verb) = if tighter {
                    (Effect::Narrowed, "tightened")
                } else {
                    (Effect::Widened, "relaxed")
                };
                out.push(finding(
                    effect,
                    format!("`{key}` {verb} from {} to {}", shown(a), shown(b)),
                ));
            }
        }
        for key in EXACT {
            let (a, b) = (old_map.get(*key), new_map.get(*key));
            let effect = match (a, b) {
                (None, Some(_)) => Effect::Narrowed,
                (Some(_), None) => Effect::Widened,
                (Some(a), Some(b)) if a != b => Effect::Incompatible,
                _ => continue,
            };
            let shown = |v: Option<&Value>| v.map_or("none".to_owned(), Value::to_string);
            out.push(finding(
                effect,
                format!("`{key}` changed from {} to {}", shown(a), shown(b)),
            ));
        }
        for key in DOCUMENTATION {
            if path.is_empty() && *key == "title" {
                continue;
            }
            if old_map.get(*key) != new_map.get(*key) && !path.is_empty() {
                out.push(finding(Effect::Neutral, format!("`{key}` changed")));
            }
        }
        let others: BTreeSet<&String> = old_map
            .keys()
            .chain(new_map.keys())
            .filter(|k| {
                let k = k.as_str();
                !HANDLED.contains(&k)
                    && !LOWER_BOUNDS.contains(&k)
                    && !UPPER_BOUNDS.contains(&k)
                    && !EXACT.contains(&k)
                    && !DOCUMENTATION.contains(&k)
            })
            .collect();
        for key in others {
            if old_map.get(key) != new_map.get(key) {
                out.push(finding(Effect::Neutral, format!("`{key}` changed")));
            }
        }

        // Objects.
        let closed =
            |m: &Map<String, Value>| m.get("additionalProperties") == Some(&Value::Bool(false));
        match (closed(old_map), closed(new_map)) {
            (false, true) => out.push(finding(
                Effect::Narrowed,
                "no longer accepts unknown fields".to_owned(),
            )),
            (true, false) => out.push(finding(
                Effect::Widened,
                "now accepts unknown fields".to_owned(),
            )),
            _ => {}
        }
        let required = |m: &Map<String, Value>| -> BTreeSet<String> {
            m.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let (old_required, new_required) = (required(old_map), required(new_map));
        let (empty_c, empty_d) = (Map::new(), Map::new());
        let old_props = properties(old_map).unwrap_or(&empty_c);
        let new_props = properties(new_map).unwrap_or(&empty_d);
        let at = |name: &str| {
            let mut path = path.to_vec();
            path.push(name.to_owned());
            path
        };
        for (name, old_prop) in old_props {
            match new_props.get(name) {
                None => out.push(Finding {
                    effect: Effect::Incompatible,
                    path: at(name),
                    what: What::Removed,
                }),
                Some(new_prop) => {
                    let (was, is) = (old_required.contains(name), new_required.contains(name));
                    if is && !was {
                        out.push(Finding {
                            effect: Effect::Narrowed,
                            path: at(name),
                            what: What::NowRequired,
                        });
                    } else if was && !is {
                        out.push(Finding {
                            effect: Effect::Widened,
                            path: at(name),
                            what: What::NowOptional,
                        });
                    }
                    self.compare(old_prop, new_prop, &at(name), out);
                }
            }
        }
        for name in new_props.keys() {
            if !old_props.contains_key(name) {
                let required = new_required.contains(name);
                out.push(Finding {
                    // A new required argument narrows the input; a new output field is an
                    // addition clients ignore.
                    effect: if required {
                        Effect::Narrowed
                    } else {
                        Effect::Neutral
                    },
                    path: at(name),
                    what: What::Added { required },
                });
            }
        }

        // Arrays.
        if let (Some(old_items), Some(new_items)) = (old_map.get("items"), new_map.get("items")) {
            self.compare(old_items, new_items, &at("[]"), out);
        }
    }
}

fn properties(schema: &Map<String, Value>) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

/// Follows local `$ref`s (`#/$defs/Name`, `#/definitions/Name`) against `root`.
fn resolve<'v>(root: &'v Value, mut schema: &'v Value) -> &'v Value {
    for _ in 0..8 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            break;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// `anyOf`/`oneOf` of one schema and `{"type": "null"}` (an `Option<T>`) compares as that
/// schema, with the keywords beside the `anyOf` (its `description`); its nullability still shows
/// in [`types`].
fn unwrap_nullable(schema: &Value) -> Cow<'_, Value> {
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null_schema(b)).collect();
            if non_null.len() == 1 && branches.len() == 2 && enum_values(schema).is_none() {
                let (Value::Object(outer), Value::Object(inner)) = (schema, non_null[0]) else {
                    return Cow::Borrowed(non_null[0]);
                };
                if outer.len() == 1 {
                    return Cow::Borrowed(non_null[0]);
                }
                let mut merged = inner.clone();
                for (k, v) in outer {
                    if k != key {
                        merged.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                return Cow::Owned(Value::Object(merged));
            }
        }
    }
    Cow::Borrowed(schema)
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// The JSON types a schema allows; `None` means any.
fn types(root: &Value, schema: &Value) -> Option<BTreeSet<String>> {
    types_at(root, schema, 0)
}

fn types_at(root: &Value, schema: &Value, depth: usize) -> Option<BTreeSet<String>> {
    if depth > 8 {
        return None;
    }
    let schema = resolve(root, schema);
    let mut out = BTreeSet::new();
    match schema.get("type") {
        Some(Value::String(t)) => {
            out.insert(t.clone());
            return Some(out);
        }
        Some(Value::Array(list)) => {
            out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
            return Some(out);
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                out.extend(types_at(root, branch, depth + 1)?);
            }
            return Some(out);
        }
    }
    let values = schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| schema.get("const").map(|c| vec![c.clone()]))?;
    Some(values.iter().map(json_type).map(str::to_owned).collect())
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether type `t` is allowed by `set` (an `integer` is a `number`).
fn type_covered(t: &str, set: &BTreeSet<String>) -> bool {
    set.contains(t) || (t == "integer" && set.contains("number"))
}

/// The fixed values a schema allows (`enum`, `const`, or `oneOf`/`anyOf` of those), as JSON
/// text; `None` when it is not restricted to fixed values.
fn enum_values(schema: &Value) -> Option<BTreeSet<String>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.iter().map(Value::to_string).collect());
    }
    if let Some(value) = schema.get("const") {
        return Some(BTreeSet::from([value.to_string()]));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let mut out = BTreeSet::new();
            for branch in branches {
                if is_null_schema(branch) {
                    out.insert("null".to_owned());
                    continue;
                }
                out.extend(enum_values(branch)?);
            }
            return Some(out);
        }
    }
    None
}

fn show_types(types: &BTreeSet<String>) -> String {
    types.iter().cloned().collect::<Vec<_>>().join(" | ")
}

fn show_values(values: &BTreeSet<String>) -> String {
    values.iter().cloned().collect::<Vec<_>>().join(", ")
}

fn show_enum(values: &BTreeSet<String>) -> String {
    let noun = if values.len() == 1 { "value" } else { "values" };
    format!("enum {noun} {}", show_values(values))
}
