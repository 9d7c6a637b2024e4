//! OpenAPI schema objects as JSON Schema 2020-12, the dialect tool schemas speak.
//!
//! 3.1 schemas are 2020-12 already; 3.0's differ in a few keywords, rewritten here: `nullable`
//! becomes a `null` type (or an `anyOf` with one), boolean `exclusiveMinimum`/`exclusiveMaximum`
//! their numeric form, `example` an `examples` list. Keywords that say nothing to a validator
//! (`discriminator`, `xml`, `externalDocs`, `x-` extensions) are dropped, and so are `$id` and
//! `$schema` (every `$ref` is resolved here) and 2020-12's dynamic references (`$dynamicRef`,
//! not followed: the schema there accepts any value). A `$ref` to a schema
//! under `components/schemas` becomes `{"$ref": "#/$defs/<name>"}` and the schema one of the
//! definitions the runtime attaches (and, in the portable style, inlines); any other `$ref` is
//! inlined here.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::source::{Place, Sources};

/// Converts schemas, collecting the component schemas they refer to.
pub(crate) struct Converter<'s> {
    pub(crate) sources: &'s mut Sources,
    /// OpenAPI 3.0 (not 3.1).
    pub(crate) v30: bool,
    /// The converted definitions, by name.
    pub(crate) defs: BTreeMap<String, Value>,
    pending: Vec<(String, Place)>,
    stack: Vec<Place>,
}

impl<'s> Converter<'s> {
    pub(crate) fn new(sources: &'s mut Sources, v30: bool) -> Self {
        Self {
            sources,
            v30,
            defs: BTreeMap::new(),
            pending: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Converts every definition referred to so far, and those they refer to.
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        while let Some((name, place)) = self.pending.pop() {
            let value = self
                .sources
                .get(&place)
                .cloned()
                .ok_or_else(|| format!("{} is missing", self.sources.show(&place)))?;
            let converted = self.schema(&value, &place)?;
            self.defs.insert(name, converted);
        }
        Ok(())
    }

    /// The schema at `place`, with `$ref`s to other places followed, converted.
    pub(crate) fn schema_at(&mut self, place: &Place) -> Result<Value, String> {
        let value = self
            .sources
            .get(place)
            .cloned()
            .ok_or_else(|| format!("{} is missing", self.sources.show(place)))?;
        self.schema(&value, place)
    }

    /// Converts the schema `value`, found at `place`.
    pub(crate) fn schema(&mut self, value: &Value, place: &Place) -> Result<Value, String> {
        let Value::Object(map) = value else {
            return match value {
                Value::Bool(_) => Ok(value.clone()),
                _ => Err(format!(
                    "{}: a schema is an object",
                    self.sources.show(place)
                )),
            };
        };
        if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(format!("{}: `$ref` is a string", self.sources.show(place)));
            };
            let target = self.sources.resolve(reference, place)?;
            let resolved = self.reference(target)?;
            // 3.0 ignores a `$ref`'s siblings; 3.1 applies them too.
            let siblings: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| *k != "$ref")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if self.v30 || siblings.is_empty() {
                return Ok(resolved);
            }
            let Value::Object(mut out) = self.schema(&Value::Object(siblings), place)? else {
                return Ok(resolved);
            };
            match resolved {
                Value::Object(r) if r.contains_key("$ref") && !out.contains_key("$ref") => {
                    out.extend(r);
                }
                other => {
                    out.insert("allOf".to_owned(), Value::Array(vec![other]));
                }
            }
            return Ok(Value::Object(out));
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = place.join(key);
            match key.as_str() {
                "nullable" if self.v30 => {}
                "discriminator" | "xml" | "externalDocs" => {}
                // `$ref`s are resolved here, so a base URI has nothing left to change; a dynamic
                // reference is not followed (the schema there accepts any value).
                "$id" | "$schema" | "$comment" | "$dynamicRef" | "$dynamicAnchor"
                | "$recursiveRef" | "$recursiveAnchor" => {}
                k if k.starts_with("x-") => {}
                "example" => {
                    if !map.contains_key("examples") {
                        out.insert("examples".to_owned(), Value::Array(vec![value.clone()]));
                    }
                }
                "examples" if !value.is_array() => {}
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {}
                "properties" | "patternProperties" | "dependentSchemas" => {
                    let Value::Object(schemas) = value else {
                        return Err(format!(
                            "{}: `{key}` is an object",
                            self.sources.show(place)
                        ));
                    };
                    let mut converted = Map::new();
                    for (name, schema) in schemas {
                        converted.insert(name.clone(), self.schema(schema, &here.join(name))?);
                    }
                    out.insert(key.clone(), Value::Object(converted));
                }
                "items"
                | "additionalProperties"
                | "not"
                | "contains"
                | "propertyNames"
                | "if"
                | "then"
                | "else"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "additionalItems"
                    if value.is_object() =>
                {
                    out.insert(key.clone(), self.schema(value, &here)?);
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                    let Value::Array(schemas) = value else {
                        return Err(format!("{}: `{key}` is a list", self.sources.show(place)));
                    };
                    let mut converted = Vec::with_capacity(schemas.len());
                    for (i, schema) in schemas.iter().enumerate() {
                        converted.push(self.schema(schema, &here.join(&i.to_string()))?);
                    }
                    out.insert(key.clone(), Value::Array(converted));
                }
                "type" if value == "file" => {
                    return Err(format!(
                        "{}: unsupported construct: `type: file` (OpenAPI 2.0); describe the \
                         body with a media type instead",
                        self.sources.show(place)
                    ));
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        if self.v30 {
            for (flag, bound) in [
                ("exclusiveMinimum", "minimum"),
                ("exclusiveMaximum", "maximum"),
            ] {
                if map.get(flag) == Some(&Value::Bool(true))
                    && let Some(limit) = out.remove(bound)
                {
                    out.insert(flag.to_owned(), limit);
                }
            }
            if map.get("nullable") == Some(&Value::Bool(true)) {
                return Ok(nullable(out));
            }
        }
        Ok(Value::Object(out))
    }

    /// A `$ref` to `target`: a definition's reference, or the schema there, inlined.
    fn reference(&mut self, target: Place) -> Result<Value, String> {
        let parts: Vec<&str> = target.pointer.split('/').collect();
        if let ["", "components", "schemas", name] = parts.as_slice() {
            let name = name.replace("~1", "/").replace("~0", "~");
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            {
                return Err(format!(
                    "{}: unsupported construct: a schema name outside `A-Z a-z 0-9 . - _`",
                    self.sources.show(&target)
                ));
            }
            let name = if target.file == self.sources.main {
                name
            } else {
                let stem = target
                    .file
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("file")
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
                format!("{stem}.{name}")
            };
            if !self.defs.contains_key(&name) && !self.pending.iter().any(|(n, _)| *n == name) {
                // Reserved, so a cycle through it ends here.
                self.defs.insert(name.clone(), Value::Bool(true));
                self.pending.push((name.clone(), target));
            }
            return Ok(Value::Object(Map::from_iter([(
                "$ref".to_owned(),
                Value::String(format!("#/$defs/{name}")),
            )])));
        }
        if self.stack.contains(&target) {
            return Err(format!(
                "{}: unsupported construct: a recursive `$ref` outside `components/schemas`",
                self.sources.show(&target)
            ));
        }
        self.stack.push(target.clone());
        let converted = self.schema_at(&target);
        self.stack.pop();
        converted
    }
}

/// A 3.0 `nullable: true` schema as 2020-12 says it: `null` added to its `type` (and `enum`), or
/// an `anyOf` with `{"type": "null"}` when it has no single type.
fn nullable(mut schema: Map<String, Value>) -> Value {
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match schema.get_mut("type") {
        Some(Value::String(kind)) => {
            let kind = std::mem::take(kind);
            schema.insert(
                "type".to_owned(),
                Value::Array(vec![Value::String(kind), Value::from("null")]),
            );
            Value::Object(schema)
        }
        Some(Value::Array(kinds)) => {
            if !kinds.iter().any(|k| k == "null") {
                kinds.push(Value::from("null"));
            }
            Value::Object(schema)
        }
        _ => {
            let null = Value::Object(Map::from_iter([("type".to_owned(), Value::from("null"))]));
            Value::Object(Map::from_iter([(
                "anyOf".to_owned(),
                Value::Array(vec![Value::Object(schema), null]),
            )]))
        }
    }
}
