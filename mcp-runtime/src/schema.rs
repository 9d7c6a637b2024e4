//! JSON Schemas as clients accept them.
//!
//! schemars emits correct JSON Schema 2020-12, but real clients reject parts of it: Gemini and Zed
//! refuse `$ref` and `["T", "null"]` type unions, and VS Code drops a tool whose `$schema` URL it
//! cannot fetch. [`SchemaStyle::Portable`], the default, therefore makes every tool schema
//! self-contained: `$ref`s are inlined (unless a type is recursive, where inlining cannot end),
//! `$schema` is left out (2020-12 is the dialect when none is named), the type-name `title`s
//! schemars adds are dropped, and an optional property is expressed by leaving it out of
//! `required` rather than by a union with `null`. [`SchemaStyle::KeepDefs`] keeps `$defs` and
//! `$ref`s for clients that handle them.
//!
//! The portable profile also answers two validators:
//!
//! - **Formats**: schemars writes `format` values of its own for numbers (`uint`, `uint8` to
//!   `uint64`, `int8` to `int64`, `float`, `double`), which are not in JSON Schema 2020-12's
//!   format vocabulary and which ajv (the TypeScript SDK's validator) warns about. They are
//!   dropped, in both styles; the standard ones (`date-time`, `date`, `time`, `duration`,
//!   `email`, `hostname`, `ipv4`, `ipv6`, `uri`, `uuid`, `regex`, ..) are kept. What an integer
//!   format said stays as bounds: `minimum: 0` for every unsigned type, and `minimum`/`maximum`
//!   for 8-, 16- and 32-bit ones (64-bit bounds are past the 2^53 a JSON number carries exactly
//!   in most clients, so `i64` gets none and `u64` only its `minimum`).
//! - **Nullable values**: an output property of type `Option<T>` may be `null` (that is how
//!   `None` serializes unless the field says `skip_serializing_if`), so it stays nullable, but
//!   as `{"anyOf": [{"type": "number"}, {"type": "null"}]}` rather than the `type` array
//!   `["number", "null"]`, which several clients read wrongly and the Inspector's `--strict`
//!   flags. No portable schema has a `type` array. (An optional input property has no `null`
//!   at all: absent is how a client leaves it out.)
//!
//! # Where it sits
//!
//! The ground floor beside `protocol`: it imports no other module of the crate.

use std::collections::BTreeSet;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// How tool schemas are written on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaStyle {
    /// Self-contained schemas: `$ref`s inlined, no `$schema`, no type-name titles, no `null`
    /// unions on optional input properties, no `type` arrays (a nullable output value is an
    /// `anyOf` with `{"type": "null"}`), only standard `format`s. What every client accepts.
    #[default]
    Portable,
    /// Keep `$defs` and `$ref`s as schemars writes them (titles, `$schema` and non-standard
    /// `format`s still dropped).
    KeepDefs,
}

/// The schema generator every tool schema is made with: JSON Schema 2020-12, without the
/// `$schema` keyword, which no schema on the wire carries.
pub(crate) fn generator() -> SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.into_generator()
}

/// The schema of `T` as a JSON object, with `$ref`s into `generator`'s definitions.
pub(crate) fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Map<String, Value> {
    into_object(generator.subschema_for::<T>().to_value())
}

/// The root schema of `T`, its definitions under `$defs`.
pub(crate) fn root_schema<T: JsonSchema>() -> Map<String, Value> {
    into_object(generator().into_root_schema_for::<T>().to_value())
}

pub(crate) fn into_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        // `true` accepts anything: the empty schema.
        Value::Bool(true) => Map::new(),
        // `false` accepts nothing.
        _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
    }
}

/// Whether the instances of a root schema are objects, as its portable form says: its own
/// `type`, or, when a `$ref` stands in for it (a newtype struct), the `type` inlined from there.
pub(crate) fn is_object(root: &Map<String, Value>) -> bool {
    match root.get("type") {
        // Inlining never overrides a keyword the schema has.
        Some(kind) => kind == "object",
        None if root.contains_key("$ref") => {
            let portable = finish(root.clone(), SchemaStyle::Portable, Direction::Output);
            portable.get("type").is_some_and(|kind| kind == "object")
        }
        None => false,
    }
}

/// The values of an enum-like type: a `string` schema with `enum`, or `oneOf`/`anyOf` of
/// `const`s. `None` for anything else.
pub(crate) fn enum_values<T: JsonSchema>() -> Option<Vec<String>> {
    let schema = finish(root_schema::<T>(), SchemaStyle::Portable, Direction::Output);
    let strings = |items: &Vec<Value>, key: Option<&str>| -> Option<Vec<String>> {
        items
            .iter()
            .map(|item| match key {
                Some(key) => item.get(key).and_then(Value::as_str).map(str::to_owned),
                None => item.as_str().map(str::to_owned),
            })
            .collect()
    };
    if let Some(Value::Array(values)) = schema.get("enum") {
        return strings(values, None);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            return strings(branches, Some("const"));
        }
    }
    None
}

/// Removes the `null` a schema lets through: from a type array (`["integer", "null"]` becomes
/// `"integer"`), or the null branch of an `anyOf` / `oneOf` (a single remaining branch is merged
/// into the schema).
pub(crate) fn strip_null(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".to_owned(), only);
        }
        return;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = schema.get_mut(key) else {
            continue;
        };
        branches.retain(|branch| branch.get("type").is_none_or(|t| t != "null"));
        if branches.len() == 1 {
            let Some(Value::Object(only)) = branches.pop() else {
                return;
            };
            schema.remove(key);
            for (k, v) in only {
                schema.entry(k).or_insert(v);
            }
        }
        return;
    }
}

/// Which side of a tool a schema describes. Optional input properties lose their `null` branch
/// in portable schemas; output properties keep it (as an `anyOf`), because `None` serializes as
/// `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Input,
    Output,
}

/// Rewrites a root schema for the wire in `style`.
pub(crate) fn finish(
    mut root: Map<String, Value>,
    style: SchemaStyle,
    direction: Direction,
) -> Map<String, Value> {
    root.remove("$schema");
    root.remove("title");
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut root = match style {
        SchemaStyle::KeepDefs => {
            let mut defs = defs;
            for def in defs.values_mut() {
                if let Value::Object(def) = def {
                    def.remove("title");
                }
            }
            if !defs.is_empty() {
                root.insert("$defs".to_owned(), Value::Object(defs));
            }
            root
        }
        SchemaStyle::Portable => {
            let recursive = recursive_defs(&defs);
            let mut inliner = Inliner {
                defs: &defs,
                recursive: &recursive,
                stack: Vec::new(),
            };
            inliner.walk_map(&mut root);
            if direction == Direction::Input {
                portable_optionals(&mut root);
            }
            if !recursive.is_empty() {
                let mut kept = Map::new();
                for name in &recursive {
                    if let Some(Value::Object(def)) = defs.get(name) {
                        let mut def = def.clone();
                        def.remove("title");
                        let mut inliner = Inliner {
                            defs: &defs,
                            recursive: &recursive,
                            stack: Vec::new(),
                        };
                        inliner.walk_map(&mut def);
                        if direction == Direction::Input {
                            portable_optionals(&mut def);
                        }
                        kept.insert(name.clone(), Value::Object(def));
                    }
                }
                root.insert("$defs".to_owned(), Value::Object(kept));
            }
            root
        }
    };
    portable_formats(&mut root);
    if style == SchemaStyle::Portable {
        split_type_unions(&mut root);
    }
    root
}

/// The `format` values of JSON Schema 2020-12's format vocabulary; any other (schemars writes
/// `uint8`, `int64`, `double`, ..) is dropped, since validators such as ajv warn about, or
/// refuse, a format they do not know.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The bounds schemars' integer `format`s stand for, as `(minimum, maximum)`. A 64- or 128-bit
/// bound is beyond the integers a JSON number carries exactly in most clients (2^53), so only
/// an unsigned type's `minimum: 0` is given for those.
fn integer_bounds(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    let bounds = match format {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint" | "uint64" | "uint128" => (Some(0), None),
        "int" | "int64" | "int128" => (None, None),
        _ => return None,
    };
    Some(bounds)
}

/// The keywords that hold data, not subschemas: never walked.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "default", "examples"];

/// The keywords whose value maps names to subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Calls `each` on every subschema below `schema` (not on `schema` itself).
fn for_each_subschema(
    schema: &mut Map<String, Value>,
    each: &mut impl FnMut(&mut Map<String, Value>),
) {
    for (key, value) in schema.iter_mut() {
        if DATA_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        match value {
            Value::Object(child) if SCHEMA_MAPS.contains(&key.as_str()) => {
                for sub in child.values_mut() {
                    if let Value::Object(sub) = sub {
                        each(sub);
                    }
                }
            }
            Value::Object(child) => each(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(item) = item {
                        each(item);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Drops every `format` outside [`STANDARD_FORMATS`], keeping what an integer format says as
/// `minimum`/`maximum` (added when schemars left them out).
pub(crate) fn portable_formats(schema: &mut Map<String, Value>) {
    let format = match schema.get("format") {
        Some(Value::String(format)) if !STANDARD_FORMATS.contains(&format.as_str()) => {
            Some(format.clone())
        }
        _ => None,
    };
    if let Some(format) = format {
        let integer = match schema.get("type") {
            Some(Value::String(kind)) => kind == "integer",
            Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "integer"),
            _ => false,
        };
        let (minimum, maximum) = integer_bounds(&format)
            .filter(|_| integer)
            .unwrap_or((None, None));
        let missing = |keyword: &str, exclusive: &str, value: Option<i64>| {
            value
                .filter(|_| !schema.contains_key(keyword) && !schema.contains_key(exclusive))
                .map(|value| (keyword.to_owned(), Value::from(value)))
        };
        let bounds: Vec<(String, Value)> = [
            missing("minimum", "exclusiveMinimum", minimum),
            missing("maximum", "exclusiveMaximum", maximum),
        ]
        .into_iter()
        .flatten()
        .collect();
        // The bounds take the format's place, every other keyword keeps its own.
        let mut bounds = Some(bounds);
        *schema = std::mem::take(schema)
            .into_iter()
            .flat_map(|(keyword, value)| match keyword.as_str() {
                "format" => bounds.take().unwrap_or_default(),
                _ => vec![(keyword, value)],
            })
            .collect();
    }
    for_each_subschema(schema, &mut portable_formats);
}

/// The keywords that apply to instances of one JSON type only.
fn applies_to(keyword: &str, kind: &str) -> bool {
    match kind {
        "integer" | "number" => matches!(
            keyword,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
        ),
        "string" => matches!(
            keyword,
            "minLength"
                | "maxLength"
                | "pattern"
                | "format"
                | "contentEncoding"
                | "contentMediaType"
                | "contentSchema"
        ),
        "array" => matches!(
            keyword,
            "items"
                | "prefixItems"
                | "minItems"
                | "maxItems"
                | "uniqueItems"
                | "contains"
                | "minContains"
                | "maxContains"
                | "unevaluatedItems"
        ),
        "object" => matches!(
            keyword,
            "properties"
                | "required"
                | "additionalProperties"
                | "patternProperties"
                | "propertyNames"
                | "minProperties"
                | "maxProperties"
                | "dependentRequired"
                | "dependentSchemas"
                | "unevaluatedProperties"
        ),
        _ => false,
    }
}

/// Rewrites every `type` array (`["number", "null"]`, what schemars writes for an `Option<T>`
/// that may serialize as `null`) as an `anyOf` of single-type branches, each with the keywords
/// that apply to its type: `{"anyOf": [{"type": "number"}, {"type": "null"}]}`. The array form
/// is valid JSON Schema, but several clients read `type` as one string, and the Inspector's
/// strict mode flags it. Everything else (description, default, enum) stays beside the `anyOf`.
fn split_type_unions(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(kinds)) = schema.get("type") {
        let kinds: Vec<String> = kinds
            .iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect();
        if let [only] = kinds.as_slice() {
            schema.insert("type".to_owned(), Value::String(only.clone()));
        } else if !kinds.is_empty() {
            let branches: Vec<Value> = kinds
                .iter()
                .map(|kind| {
                    let mut branch = Map::new();
                    branch.insert("type".to_owned(), Value::String(kind.clone()));
                    for (keyword, value) in schema.iter() {
                        if applies_to(keyword, kind) {
                            branch.insert(keyword.clone(), value.clone());
                        }
                    }
                    Value::Object(branch)
                })
                .collect();
            let mut union = Some(Value::Array(branches));
            let beside_any_of = schema.contains_key("anyOf");
            let mut rebuilt = Map::new();
            // The `anyOf` takes the place of `type`; the keywords moved into it leave theirs.
            for (keyword, value) in std::mem::take(schema) {
                if kinds.iter().any(|kind| applies_to(&keyword, kind)) {
                    continue;
                }
                match keyword.as_str() {
                    "type" if !beside_any_of => {
                        if let Some(union) = union.take() {
                            rebuilt.insert("anyOf".to_owned(), union);
                        }
                    }
                    "type" => {}
                    _ => {
                        rebuilt.insert(keyword, value);
                    }
                }
            }
            if let Some(union) = union {
                // Beside an `anyOf` of its own, both must hold.
                let all = rebuilt
                    .entry("allOf")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(all) = all {
                    all.push(serde_json::json!({ "anyOf": union }));
                }
            }
            *schema = rebuilt;
        }
    }
    for_each_subschema(schema, &mut split_type_unions);
}

fn def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// Definitions that reach themselves through `$ref`s: these stay as references.
fn recursive_defs(defs: &Map<String, Value>) -> BTreeSet<String> {
    fn refs(value: &Value, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = def_name(r)
                {
                    out.insert(name.to_owned());
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let edges: Vec<(String, BTreeSet<String>)> = defs
        .iter()
        .map(|(name, def)| {
            let mut out = BTreeSet::new();
            refs(def, &mut out);
            (name.clone(), out)
        })
        .collect();
    let mut recursive = BTreeSet::new();
    for (start, _) in &edges {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = vec![start];
        while let Some(node) = stack.pop() {
            let Some((_, next)) = edges.iter().find(|(n, _)| n == node) else {
                continue;
            };
            for n in next {
                if n == start {
                    recursive.insert(start.clone());
                }
                if seen.insert(n.clone()) {
                    stack.push(n);
                }
            }
        }
    }
    recursive
}

struct Inliner<'a> {
    defs: &'a Map<String, Value>,
    recursive: &'a BTreeSet<String>,
    stack: Vec<String>,
}

impl Inliner<'_> {
    fn walk(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => self.walk_map(map),
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v)),
            _ => {}
        }
    }

    fn walk_map(&mut self, map: &mut Map<String, Value>) {
        let target = match map.get("$ref") {
            Some(Value::String(r)) => def_name(r).map(str::to_owned),
            _ => None,
        };
        if let Some(name) = target
            && !self.recursive.contains(&name)
            && !self.stack.contains(&name)
            && let Some(Value::Object(def)) = self.defs.get(&name)
        {
            let mut def = def.clone();
            def.remove("title");
            self.stack.push(name);
            self.walk_map(&mut def);
            self.stack.pop();
            map.remove("$ref");
            // Keywords beside the `$ref` (a property's description) win over the
            // definition's own.
            for (k, v) in def {
                map.entry(k).or_insert(v);
            }
            return;
        }
        for value in map.values_mut() {
            self.walk(value);
        }
    }
}

/// In every object schema, an optional property loses its `null` branch: leaving it out of
/// `required` already says it may be absent, and a missing value deserializes to `None`.
fn portable_optionals(schema: &mut Map<String, Value>) {
    let required: BTreeSet<String> = match schema.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if let Value::Object(property) = property
                && !required.contains(name)
            {
                strip_null(property);
            }
        }
    }
    for (key, value) in schema.iter_mut() {
        match (key.as_str(), value) {
            ("enum" | "const" | "default" | "examples", _) => {}
            (_, Value::Object(child)) => {
                if key == "properties" || key == "$defs" || key == "patternProperties" {
                    for sub in child.values_mut() {
                        if let Value::Object(sub) = sub {
                            portable_optionals(sub);
                        }
                    }
                } else {
                    portable_optionals(child);
                }
            }
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(item) = item {
                        portable_optionals(item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Address {
        street: String,
        city: Option<String>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Person {
        name: String,
        home: Address,
        work: Option<Address>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Tree>,
    }

    #[test]
    fn portable_schemas_inline_refs_and_drop_null_unions() {
        let schema = finish(
            root_schema::<Person>(),
            SchemaStyle::Portable,
            Direction::Input,
        );
        assert_eq!(
            Value::Object(schema),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "home": {
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                        "required": ["street"]
                    },
                    "work": {
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                        "required": ["street"]
                    }
                },
                "required": ["name", "home"]
            })
        );
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Forest {
        trees: Vec<Tree>,
    }

    #[test]
    fn recursive_types_keep_their_definition() {
        let portable = |root| Value::Object(finish(root, SchemaStyle::Portable, Direction::Input));
        let schema = portable(root_schema::<Forest>());
        assert_eq!(
            schema["properties"]["trees"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        let tree = &schema["$defs"]["Tree"];
        assert_eq!(tree["properties"]["label"], json!({"type": "string"}));
        assert_eq!(
            tree["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
        // A type that is its own root refers to the root.
        let root = portable(root_schema::<Tree>());
        assert_eq!(
            root["properties"]["children"]["items"],
            json!({"$ref": "#"})
        );
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Home(Address);

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Grove(Tree);

    #[test]
    fn object_roots_are_told_apart_as_their_portable_form_says() {
        fn check<T: JsonSchema>(expected: bool) {
            let root = root_schema::<T>();
            let portable = finish(root.clone(), SchemaStyle::Portable, Direction::Output);
            let name = std::any::type_name::<T>();
            assert_eq!(is_object(&root), expected, "{name}");
            assert_eq!(
                portable.get("type") == Some(&json!("object")),
                expected,
                "{name}"
            );
        }
        check::<Person>(true);
        check::<Tree>(true);
        check::<Home>(true);
        check::<std::collections::BTreeMap<String, i64>>(true);
        check::<i64>(false);
        check::<Option<Person>>(false);
        check::<Vec<Person>>(false);
        check::<Value>(false);
        // A `$ref` to a recursive definition stays a reference: no `type` to read.
        check::<Grove>(false);
    }

    #[test]
    fn keep_defs_leaves_references() {
        let schema = Value::Object(finish(
            root_schema::<Person>(),
            SchemaStyle::KeepDefs,
            Direction::Input,
        ));
        assert_eq!(
            schema["properties"]["home"],
            json!({"$ref": "#/$defs/Address"})
        );
        assert!(schema["$defs"]["Address"].get("title").is_none());
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Sizes {
        tiny: u8,
        small: i16,
        count: usize,
        big: u64,
        signed: i64,
        ratio: f32,
        maybe: Option<u32>,
        nested: Vec<Option<i8>>,
    }

    #[test]
    fn non_standard_formats_are_dropped_and_integer_bounds_kept() {
        for style in [SchemaStyle::Portable, SchemaStyle::KeepDefs] {
            let schema = Value::Object(finish(root_schema::<Sizes>(), style, Direction::Output));
            assert!(!schema.to_string().contains("format"), "{schema}");
            let properties = &schema["properties"];
            assert_eq!(
                properties["tiny"],
                json!({"type": "integer", "minimum": 0, "maximum": 255})
            );
            assert_eq!(
                properties["small"],
                json!({"type": "integer", "minimum": -32768, "maximum": 32767})
            );
            assert_eq!(
                properties["count"],
                json!({"type": "integer", "minimum": 0})
            );
            assert_eq!(properties["big"], json!({"type": "integer", "minimum": 0}));
            assert_eq!(properties["signed"], json!({"type": "integer"}));
            assert_eq!(properties["ratio"], json!({"type": "number"}));
        }
    }

    #[test]
    fn standard_formats_are_kept() {
        let root = into_object(json!({
            "type": "object",
            "properties": {
                "at": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "format": "uuid"},
                "home": {"type": "string", "format": "uri"},
                // A property named like a keyword is a property, not a keyword.
                "format": {"type": "string", "format": "email"},
            },
        }));
        let schema = finish(root.clone(), SchemaStyle::Portable, Direction::Output);
        assert_eq!(schema, root);
    }

    #[test]
    fn type_unions_become_any_of_in_portable_schemas() {
        let output = Value::Object(finish(
            root_schema::<Sizes>(),
            SchemaStyle::Portable,
            Direction::Output,
        ));
        // An optional output property may be `null` (that is how `None` serializes): the union
        // stays, spelled as an `anyOf` with the bounds on the integer branch.
        assert_eq!(
            output["properties"]["maybe"],
            json!({"anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 4294967295_u32},
                {"type": "null"},
            ]})
        );
        assert_eq!(
            output["properties"]["nested"]["items"],
            json!({"anyOf": [
                {"type": "integer", "minimum": -128, "maximum": 127},
                {"type": "null"},
            ]})
        );
        assert!(!output.to_string().contains("\"type\":["), "{output}");
        // Keywords for every type stay beside the `anyOf`.
        let root = into_object(json!({
            "type": ["string", "null"],
            "description": "A choice.",
            "enum": ["a", "b", null],
            "maxLength": 1,
        }));
        let schema = finish(root, SchemaStyle::Portable, Direction::Output);
        assert_eq!(
            Value::Object(schema),
            json!({
                "description": "A choice.",
                "enum": ["a", "b", null],
                "anyOf": [{"type": "string", "maxLength": 1}, {"type": "null"}],
            })
        );
        // Beside an `anyOf` of its own, the union is one more condition.
        let root = into_object(json!({
            "type": ["string", "null"],
            "anyOf": [{"const": "a"}, {"const": null}],
        }));
        assert_eq!(
            Value::Object(finish(root, SchemaStyle::Portable, Direction::Output)),
            json!({
                "anyOf": [{"const": "a"}, {"const": null}],
                "allOf": [{"anyOf": [{"type": "string"}, {"type": "null"}]}],
            })
        );
        // An optional input property loses the `null` altogether.
        let input = Value::Object(finish(
            root_schema::<Sizes>(),
            SchemaStyle::Portable,
            Direction::Input,
        ));
        assert_eq!(
            input["properties"]["maybe"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295_u32})
        );
    }
}
