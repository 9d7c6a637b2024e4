//! Classifying the difference between two recorded surfaces.
//!
//! Items are matched by identity (a tool or prompt by `name`, a resource by `uri`, a template by
//! `uriTemplate`), so a rename is a removal plus an addition. Schemas are compared with variance
//! in mind: a tool's `inputSchema` is what the server *accepts*, so narrowing it breaks callers
//! and widening it does not; its `outputSchema` is what the server *promises*, so the opposite
//! holds, except that removing a field or changing its type incompatibly breaks either way.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use super::schema::{ChangeKind, Direction, SchemaPair, describe_place, quoted};

/// One difference between a recorded surface and the current one.
///
/// Displays as `breaking: tool "add": argument "c" is now required`, followed by the protocol
/// revisions it concerns when it does not concern all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SurfaceChange {
    /// Breaking or not.
    pub kind: ChangeKind,
    /// What changed, for example `tool "add" removed`.
    pub description: String,
    /// The protocol revisions (wire strings) whose listing shows the change, oldest first.
    pub revisions: Vec<String>,
    /// Whether the change shows in every revision both surfaces record.
    pub all_revisions: bool,
}

impl SurfaceChange {
    /// Whether the change can break an existing client.
    pub fn is_breaking(&self) -> bool {
        self.kind == ChangeKind::Breaking
    }
}

impl fmt::Display for SurfaceChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.description)?;
        if !self.all_revisions && !self.revisions.is_empty() {
            write!(f, " (protocol {})", self.revisions.join(", "))?;
        }
        Ok(())
    }
}

/// Compares two surface documents (as written by [`capture_surface`](super::capture_surface))
/// and lists every difference, breaking ones first.
///
/// A change that shows in several revisions is listed once, with the revisions it concerns. A
/// revision recorded before and no longer served is breaking; a new one is not.
pub fn compare_surfaces(old: &Value, new: &Value) -> Vec<SurfaceChange> {
    let empty = Map::new();
    let revisions = |doc: &Value| doc.get("revisions").and_then(Value::as_object).cloned();
    let old_revisions = revisions(old).unwrap_or_default();
    let new_revisions = revisions(new).unwrap_or_default();
    // description -> (kind, revisions)
    let mut found: BTreeMap<(ChangeKind, String), Vec<String>> = BTreeMap::new();
    let mut order: Vec<(ChangeKind, String)> = Vec::new();
    let mut shared = 0usize;
    for (revision, old_lists) in &old_revisions {
        let Some(new_lists) = new_revisions.get(revision) else {
            let key = (
                ChangeKind::Breaking,
                format!("protocol revision {revision} is no longer recorded"),
            );
            order.push(key.clone());
            found.insert(key, Vec::new());
            continue;
        };
        shared += 1;
        let mut changes = Vec::new();
        compare_lists(
            old_lists.as_object().unwrap_or(&empty),
            new_lists.as_object().unwrap_or(&empty),
            &mut changes,
        );
        for change in changes {
            let key = (change.kind, change.description);
            let entry = found.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                Vec::new()
            });
            entry.push(revision.clone());
        }
    }
    for revision in new_revisions.keys() {
        if !old_revisions.contains_key(revision) {
            let key = (
                ChangeKind::NonBreaking,
                format!("protocol revision {revision} is recorded"),
            );
            order.push(key.clone());
            found.insert(key, Vec::new());
        }
    }
    for field in ["name", "version"] {
        let pointer = format!("/server/{field}");
        let (was, is) = (old.pointer(&pointer), new.pointer(&pointer));
        if was != is {
            let shown = |v: Option<&Value>| v.map_or("nothing".to_owned(), Value::to_string);
            let key = (
                ChangeKind::NonBreaking,
                format!(
                    "`serverInfo.{field}` changed from {} to {}",
                    shown(was),
                    shown(is)
                ),
            );
            order.push(key.clone());
            found.insert(key, Vec::new());
        }
    }
    let mut changes: Vec<SurfaceChange> = order
        .into_iter()
        .map(|key| {
            let revisions = found.remove(&key).unwrap_or_default();
            SurfaceChange {
                all_revisions: revisions.is_empty() || revisions.len() == shared,
                kind: key.0,
                description: key.1,
                revisions,
            }
        })
        .collect();
    // Stable: breaking first, otherwise in the order found.
    changes.sort_by_key(|c| c.kind);
    changes
}

/// A change found in one revision, before merging across revisions.
struct Found {
    kind: ChangeKind,
    description: String,
}

fn push(out: &mut Vec<Found>, kind: ChangeKind, description: String) {
    out.push(Found { kind, description });
}

/// The four lists of one revision: `tools`, `resources`, `resourceTemplates`, `prompts`.
fn compare_lists(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Found>) {
    compare_items(old, new, "tools", "name", "tool", out, compare_tool);
    compare_items(
        old,
        new,
        "resources",
        "uri",
        "resource",
        out,
        compare_resource,
    );
    compare_items(
        old,
        new,
        "resourceTemplates",
        "uriTemplate",
        "resource template",
        out,
        compare_resource,
    );
    compare_items(old, new, "prompts", "name", "prompt", out, compare_prompt);
}

type ItemComparer = fn(&str, &Map<String, Value>, &Map<String, Value>, &mut Vec<Found>);

fn compare_items(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    list: &str,
    key: &str,
    noun: &str,
    out: &mut Vec<Found>,
    compare: ItemComparer,
) {
    let index = |lists: &Map<String, Value>| -> Vec<(String, Map<String, Value>)> {
        lists
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| {
                let item = item.as_object()?;
                let id = item.get(key)?.as_str()?.to_owned();
                Some((id, item.clone()))
            })
            .collect()
    };
    let old_items = index(old);
    let new_items = index(new);
    for (id, old_item) in &old_items {
        let subject = format!("{noun} {}", quoted(id));
        match new_items.iter().find(|(other, _)| other == id) {
            None => push(out, ChangeKind::Breaking, format!("{subject} removed")),
            Some((_, new_item)) => compare(&subject, old_item, new_item, out),
        }
    }
    for (id, _) in &new_items {
        if !old_items.iter().any(|(other, _)| other == id) {
            push(
                out,
                ChangeKind::NonBreaking,
                format!("{noun} {} added", quoted(id)),
            );
        }
    }
}

/// Fields of an item not classified more precisely: any change is non-breaking, but listed.
fn compare_other_fields(
    subject: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    handled: &[&str],
    out: &mut Vec<Found>,
) {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for key in keys {
        if handled.contains(&key.as_str()) {
            continue;
        }
        let description = match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(_), Some(_)) => format!("{subject}: `{key}` changed"),
            (Some(_), None) => format!("{subject}: `{key}` removed"),
            (None, Some(_)) => format!("{subject}: `{key}` added"),
            (None, None) => continue,
        };
        push(out, ChangeKind::NonBreaking, description);
    }
}

/// A tool with [`portable_formats`](crate::schema::portable_formats) applied to its schemas.
fn with_portable_formats(tool: &Map<String, Value>) -> Map<String, Value> {
    let mut tool = tool.clone();
    for key in ["inputSchema", "outputSchema"] {
        if let Some(Value::Object(schema)) = tool.get_mut(key) {
            crate::schema::portable_formats(schema);
        }
    }
    tool
}

fn compare_tool(
    subject: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    out: &mut Vec<Found>,
) {
    // A surface recorded before schemas dropped non-standard formats (`"format": "int64"`)
    // compares as written today: the format gone, the bounds it stood for kept.
    let (old, new) = (&with_portable_formats(old), &with_portable_formats(new));
    if let (Some(old_input), Some(new_input)) = (old.get("inputSchema"), new.get("inputSchema")) {
        let mut findings = Vec::new();
        SchemaPair::new(old_input, new_input).compare(old_input, new_input, &[], &mut findings);
        for finding in findings {
            let kind = finding.effect.kind(Direction::Input);
            let place = describe_place("argument", &finding.path);
            push(
                out,
                kind,
                format!("{subject}: {}", finding.describe(&place, "argument")),
            );
        }
    }
    match (old.get("outputSchema"), new.get("outputSchema")) {
        (Some(old_output), Some(new_output)) => {
            let mut findings = Vec::new();
            SchemaPair::new(old_output, new_output).compare(
                old_output,
                new_output,
                &[],
                &mut findings,
            );
            for finding in findings {
                let kind = finding.effect.kind(Direction::Output);
                let place = describe_place("output field", &finding.path);
                push(
                    out,
                    kind,
                    format!("{subject}: {}", finding.describe(&place, "output field")),
                );
            }
        }
        (Some(_), None) => push(
            out,
            ChangeKind::Breaking,
            format!("{subject}: `outputSchema` removed (no more structured output)"),
        ),
        (None, Some(_)) => push(
            out,
            ChangeKind::NonBreaking,
            format!("{subject}: `outputSchema` added"),
        ),
        (None, None) => {}
    }
    compare_other_fields(subject, old, new, &["inputSchema", "outputSchema"], out);
}

fn compare_resource(
    subject: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    out: &mut Vec<Found>,
) {
    let old_mime = old.get("mimeType");
    let new_mime = new.get("mimeType");
    if old_mime.is_some() && old_mime != new_mime {
        let shown = |v: Option<&Value>| v.and_then(Value::as_str).map_or("none".into(), quoted);
        push(
            out,
            ChangeKind::Breaking,
            format!(
                "{subject}: `mimeType` changed from {} to {}",
                shown(old_mime),
                shown(new_mime)
            ),
        );
    } else if old_mime.is_none() && new_mime.is_some() {
        push(
            out,
            ChangeKind::NonBreaking,
            format!("{subject}: `mimeType` added"),
        );
    }
    compare_other_fields(subject, old, new, &["mimeType"], out);
}

fn compare_prompt(
    subject: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    out: &mut Vec<Found>,
) {
    let arguments = |item: &Map<String, Value>| -> Vec<(String, bool, Value)> {
        item.get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|arg| {
                let name = arg.get("name")?.as_str()?.to_owned();
                let required = arg.get("required").and_then(Value::as_bool) == Some(true);
                Some((name, required, arg.clone()))
            })
            .collect()
    };
    let old_args = arguments(old);
    let new_args = arguments(new);
    for (name, was_required, old_arg) in &old_args {
        let arg = format!("argument {}", quoted(name));
        match new_args.iter().find(|(other, ..)| other == name) {
            None => push(
                out,
                ChangeKind::Breaking,
                format!("{subject}: {arg} removed"),
            ),
            Some((_, required, new_arg)) => {
                if *required && !was_required {
                    push(
                        out,
                        ChangeKind::Breaking,
                        format!("{subject}: {arg} is now required"),
                    );
                } else if !required && *was_required {
                    push(
                        out,
                        ChangeKind::NonBreaking,
                        format!("{subject}: {arg} is now optional"),
                    );
                }
                if let (Some(a), Some(b)) = (old_arg.as_object(), new_arg.as_object()) {
                    compare_other_fields(&format!("{subject}: {arg}"), a, b, &["required"], out);
                }
            }
        }
    }
    for (name, required, _) in &new_args {
        if !old_args.iter().any(|(other, ..)| other == name) {
            let (kind, adjective) = if *required {
                (ChangeKind::Breaking, "required")
            } else {
                (ChangeKind::NonBreaking, "optional")
            };
            push(
                out,
                kind,
                format!("{subject}: new {adjective} argument {}", quoted(name)),
            );
        }
    }
    compare_other_fields(subject, old, new, &["arguments"], out);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A surface with one revision holding `lists`.
    fn surface(lists: Value) -> Value {
        json!({"server": {"name": "s", "version": "1.0.0"}, "revisions": {"2025-11-25": lists}})
    }

    fn tool(name: &str, properties: Value, required: Value) -> Value {
        json!({
            "name": name,
            "inputSchema": {"type": "object", "properties": properties, "required": required}
        })
    }

    fn changes(old: Value, new: Value) -> Vec<String> {
        compare_surfaces(&surface(old), &surface(new))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn add_tool() -> Value {
        tool(
            "add",
            json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
            json!(["a", "b"]),
        )
    }

    #[test]
    fn a_new_server_version_is_listed() {
        let old = surface(json!({"tools": [add_tool()]}));
        let mut new = old.clone();
        new["server"]["version"] = json!("1.1.0");
        let found: Vec<String> = compare_surfaces(&old, &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [r#"non-breaking: `serverInfo.version` changed from "1.0.0" to "1.1.0""#]
        );
    }

    #[test]
    fn identical_surfaces_have_no_changes() {
        let lists = json!({"tools": [add_tool()], "prompts": []});
        assert!(changes(lists.clone(), lists).is_empty());
    }

    #[test]
    fn a_renamed_tool_is_a_removal_and_an_addition() {
        let mut renamed = add_tool();
        renamed["name"] = json!("sum");
        assert_eq!(
            changes(json!({"tools": [add_tool()]}), json!({"tools": [renamed]})),
            [
                r#"breaking: tool "add" removed"#,
                r#"non-breaking: tool "sum" added"#
            ]
        );
    }

    #[test]
    fn a_new_required_argument_breaks_and_a_new_optional_one_does_not() {
        let mut new = add_tool();
        new["inputSchema"]["properties"]["c"] = json!({"type": "integer"});
        new["inputSchema"]["properties"]["d"] = json!({"type": "integer"});
        new["inputSchema"]["required"] = json!(["a", "b", "c"]);
        assert_eq!(
            changes(json!({"tools": [add_tool()]}), json!({"tools": [new]})),
            [
                r#"breaking: tool "add": new required argument "c""#,
                r#"non-breaking: tool "add": new optional argument "d""#
            ]
        );
    }

    #[test]
    fn an_argument_that_becomes_required_breaks() {
        let old = tool(
            "add",
            json!({"a": {"type": "integer"}, "c": {"type": "integer"}}),
            json!(["a"]),
        );
        let new = tool(
            "add",
            json!({"a": {"type": "integer"}, "c": {"type": "integer"}}),
            json!(["a", "c"]),
        );
        assert_eq!(
            changes(
                json!({"tools": [old.clone()]}),
                json!({"tools": [new.clone()]})
            ),
            [r#"breaking: tool "add": argument "c" is now required"#]
        );
        assert_eq!(
            changes(json!({"tools": [new]}), json!({"tools": [old]})),
            [r#"non-breaking: tool "add": argument "c" is now optional"#]
        );
    }

    #[test]
    fn types_narrowed_or_changed_break_and_widened_do_not() {
        let with = |t: Value| tool("f", json!({"x": {"type": t}}), json!(["x"]));
        let tools = |t: Value| json!({"tools": [with(t)]});
        assert_eq!(
            changes(tools(json!("integer")), tools(json!("string"))),
            [r#"breaking: tool "f": argument "x": type changed from integer to string"#]
        );
        assert_eq!(
            changes(tools(json!("integer")), tools(json!("number"))),
            [r#"non-breaking: tool "f": argument "x": type widened from integer to number"#]
        );
        assert_eq!(
            changes(tools(json!("number")), tools(json!("integer"))),
            [r#"breaking: tool "f": argument "x": type narrowed from number to integer"#]
        );
        assert_eq!(
            changes(tools(json!(["string", "null"])), tools(json!("string"))),
            [r#"breaking: tool "f": argument "x": type narrowed from null | string to string"#]
        );
    }

    #[test]
    fn a_surface_recorded_with_non_standard_formats_compares_as_portable() {
        let output = |field: Value| {
            let mut tool = tool("f", json!({}), json!([]));
            tool["outputSchema"] = json!({"type": "object", "properties": {"n": field}});
            json!({"tools": [tool]})
        };
        let input = |field: Value| json!({"tools": [tool("f", json!({"n": field}), json!([]))]});
        // The format is gone, and what it stood for is kept as bounds.
        let old = json!({"type": "integer", "format": "uint32", "minimum": 0});
        let new = json!({"type": "integer", "minimum": 0, "maximum": 4294967295_u32});
        assert!(changes(output(old.clone()), output(new.clone())).is_empty());
        assert!(changes(input(old), input(new)).is_empty());
        let old = json!({"type": ["number", "null"], "format": "double", "description": "N."});
        let new = json!({"anyOf": [{"type": "number"}, {"type": "null"}], "description": "N."});
        assert!(changes(output(old), output(new)).is_empty());
        // A standard format still counts.
        let old = json!({"type": "string", "format": "date-time"});
        assert_eq!(
            changes(output(old), output(json!({"type": "string"}))),
            [r#"breaking: tool "f": output field "n": `format` changed from "date-time" to none"#]
        );
    }

    #[test]
    fn removed_enum_values_break_and_added_ones_do_not() {
        let with = |values: Value| json!({"tools": [tool("f", json!({"unit": {"type": "string", "enum": values}}), json!([]))]});
        assert_eq!(
            changes(with(json!(["c", "f", "k"])), with(json!(["c", "f"]))),
            [r#"breaking: tool "f": argument "unit": enum value "k" removed"#]
        );
        assert_eq!(
            changes(with(json!(["c", "f"])), with(json!(["c", "f", "k"]))),
            [r#"non-breaking: tool "f": argument "unit": enum value "k" added"#]
        );
    }

    #[test]
    fn enums_written_as_one_of_consts_compare_by_value() {
        let with = |values: &[&str]| {
            let branches: Vec<Value> = values
                .iter()
                .map(|v| json!({"type": "string", "const": v, "description": "a style"}))
                .collect();
            json!({"tools": [tool("f", json!({"style": {"oneOf": branches}}), json!(["style"]))]})
        };
        assert_eq!(
            changes(with(&["brief", "detailed"]), with(&["brief"])),
            [r#"breaking: tool "f": argument "style": enum value "detailed" removed"#]
        );
    }

    #[test]
    fn nested_fields_and_refs_are_followed() {
        let with = |city: Value| {
            json!({"tools": [{
                "name": "f",
                "inputSchema": {
                    "type": "object",
                    "properties": {"place": {"$ref": "#/$defs/Place"}},
                    "required": ["place"],
                    "$defs": {"Place": {"type": "object", "properties": {"city": city}, "required": ["city"]}}
                }
            }]})
        };
        assert_eq!(
            changes(
                with(json!({"type": "string"})),
                with(json!({"type": "integer"}))
            ),
            [r#"breaking: tool "f": argument "place.city": type changed from string to integer"#]
        );
    }

    #[test]
    fn tighter_bounds_break_inputs() {
        let with = |max: u64| json!({"tools": [tool("f", json!({"n": {"type": "integer", "maximum": max}}), json!(["n"]))]});
        assert_eq!(
            changes(with(255), with(10)),
            [r#"breaking: tool "f": argument "n": `maximum` tightened from 255 to 10"#]
        );
        assert_eq!(
            changes(with(10), with(255)),
            [r#"non-breaking: tool "f": argument "n": `maximum` relaxed from 10 to 255"#]
        );
    }

    fn output_tool(properties: Value, required: Value) -> Value {
        json!({"tools": [{
            "name": "forecast",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": properties, "required": required}
        }]})
    }

    #[test]
    fn output_fields_removed_or_retyped_break_and_newly_required_ones_do_not() {
        let old = output_tool(
            json!({"city": {"type": "string"}, "temp": {"type": "number"}, "note": {"type": "string"}}),
            json!(["city", "temp"]),
        );
        let new = output_tool(
            json!({"city": {"type": "integer"}, "note": {"type": "string"}, "wind": {"type": "number"}}),
            json!(["city", "note"]),
        );
        assert_eq!(
            changes(old, new),
            [
                r#"breaking: tool "forecast": output field "city": type changed from string to integer"#,
                r#"breaking: tool "forecast": output field "temp" removed"#,
                r#"non-breaking: tool "forecast": output field "note" is now required"#,
                r#"non-breaking: tool "forecast": new optional output field "wind""#,
            ]
        );
    }

    #[test]
    fn output_fields_that_may_be_absent_or_wider_break() {
        let old = output_tool(json!({"n": {"type": "integer"}}), json!(["n"]));
        let new = output_tool(json!({"n": {"type": "number"}}), json!([]));
        assert_eq!(
            changes(old, new),
            [
                r#"breaking: tool "forecast": output field "n" may now be absent"#,
                r#"breaking: tool "forecast": output field "n": type widened from integer to number"#,
            ]
        );
    }

    #[test]
    fn dropping_structured_output_breaks() {
        let old = output_tool(json!({"n": {"type": "integer"}}), json!(["n"]));
        let mut new = old.clone();
        new["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("outputSchema");
        assert_eq!(
            changes(old, new),
            [r#"breaking: tool "forecast": `outputSchema` removed (no more structured output)"#]
        );
    }

    #[test]
    fn documentation_changes_do_not_break() {
        let mut new = add_tool();
        new["description"] = json!("Adds.");
        new["inputSchema"]["properties"]["a"]["description"] = json!("The first.");
        assert_eq!(
            changes(json!({"tools": [add_tool()]}), json!({"tools": [new]})),
            [
                r#"non-breaking: tool "add": argument "a": `description` changed"#,
                r#"non-breaking: tool "add": `description` added"#,
            ]
        );
    }

    #[test]
    fn prompt_arguments() {
        let prompt = |args: Value| json!({"prompts": [{"name": "review", "arguments": args}]});
        let old = prompt(json!([
            {"name": "code", "required": true},
            {"name": "language"},
            {"name": "tone"}
        ]));
        let new = prompt(json!([
            {"name": "code", "required": true},
            {"name": "language", "required": true},
            {"name": "focus", "required": true},
            {"name": "audience"}
        ]));
        assert_eq!(
            changes(old, new),
            [
                r#"breaking: prompt "review": argument "language" is now required"#,
                r#"breaking: prompt "review": argument "tone" removed"#,
                r#"breaking: prompt "review": new required argument "focus""#,
                r#"non-breaking: prompt "review": new optional argument "audience""#,
            ]
        );
    }

    #[test]
    fn resources_and_templates() {
        let old = json!({
            "resources": [{"uri": "notes://all", "name": "all", "mimeType": "application/json"}],
            "resourceTemplates": [{"uriTemplate": "notes://{id}", "name": "note"}]
        });
        let new = json!({
            "resources": [{"uri": "notes://all", "name": "all", "mimeType": "text/plain"}],
            "resourceTemplates": [{"uriTemplate": "notes/{id}", "name": "note"}]
        });
        assert_eq!(
            changes(old, new),
            [
                r#"breaking: resource "notes://all": `mimeType` changed from "application/json" to "text/plain""#,
                r#"breaking: resource template "notes://{id}" removed"#,
                r#"non-breaking: resource template "notes/{id}" added"#,
            ]
        );
    }

    #[test]
    fn changes_are_merged_across_revisions() {
        let lists = |tools: Value| json!({"tools": tools});
        let old = json!({"revisions": {
            "2025-03-26": lists(json!([add_tool()])),
            "2025-11-25": lists(json!([add_tool(), {"name": "t", "title": "T", "inputSchema": {}}])),
        }});
        let new = json!({"revisions": {
            "2025-03-26": lists(json!([])),
            "2025-11-25": lists(json!([{"name": "t", "title": "Tee", "inputSchema": {}}])),
            "2026-07-28": lists(json!([])),
        }});
        let found: Vec<String> = compare_surfaces(&old, &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                r#"breaking: tool "add" removed"#,
                r#"non-breaking: tool "t": `title` changed (protocol 2025-11-25)"#,
                "non-breaking: protocol revision 2026-07-28 is recorded",
            ]
        );
    }
}
