//! Putting one server entry into a client's configuration text without disturbing anything
//! else: every other byte of the file stays as it was, in its order, with its comments.
//!
//! Both editors work on a concrete syntax tree, not on a parsed value that is serialized again
//! (which would reflow indentation, escapes, number spellings and comments of entries that are
//! not ours):
//!
//! - JSON (and VS Code's JSONC) through `jsonc-parser`'s CST, the editor Deno and dprint use to
//!   change their own configuration files: a property that is set or appended is laid out in the
//!   file's own indentation and newlines, and the rest of the tree prints exactly as it was read;
//! - TOML (Codex) through `toml_edit`, Cargo's own format-preserving editor.
//!
//! An existing entry is merged into, not replaced: the keys this tool sets (`command`, `args`,
//! `url`, ... as each client names them) take their new values, the maps (`env`, `headers`) gain
//! or change the pairs given and keep the others, and only the keys of the other transport are
//! removed (an entry moved from stdio to HTTP loses its `command`). Keys a user added by hand
//! (a header, Codex's `startup_timeout_sec`, Gemini's `trust`, ...) are kept. When the entry
//! already says what it would be set to, the text is returned unchanged, so a second run
//! writes nothing.

use anyhow::{Context, anyhow, bail};
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::{Map, Value};

/// How strictly a JSON configuration is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonDialect {
    /// Plain JSON: what `JSON.parse` takes.
    Strict,
    /// JSON with comments and trailing commas (VS Code, Gemini CLI).
    WithComments,
}

/// One server entry: the keys to set (in order) and the keys to remove.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// What the entry must say, keys in the order they are written when new. An object value
    /// (`env`, `headers`) is merged into the entry's own: its pairs set, the others kept.
    pub(crate) set: Map<String, Value>,
    /// Keys of the other transport, removed where present.
    pub(crate) remove: &'static [&'static str],
}

/// Sets `servers_key.name` in a JSON configuration to `entry`, creating the file's object and
/// the servers object when missing. Returns the new text: `text` itself when nothing changed.
pub(crate) fn upsert_json(
    text: &str,
    dialect: JsonDialect,
    servers_key: &str,
    name: &str,
    entry: &Entry,
) -> anyhow::Result<String> {
    let options = match dialect {
        JsonDialect::WithComments => ParseOptions {
            allow_comments: true,
            allow_trailing_commas: true,
            ..strict()
        },
        JsonDialect::Strict => strict(),
    };
    let root = CstRootNode::parse(text, &options).map_err(|e| anyhow!("{e}"))?;
    let object = root
        .object_value_or_create()
        .context("the file's top level is not a JSON object")?;
    let servers = object
        .object_value_or_create(servers_key)
        .with_context(|| format!("`{servers_key}` in the file is not an object"))?;
    let mut changed = false;
    match servers.get(name) {
        None => {
            servers.append(name, to_input(&Value::Object(entry.set.clone())));
            changed = true;
        }
        Some(prop) => match prop.object_value() {
            Some(existing) => {
                for (key, wanted) in &entry.set {
                    changed |= merge_json(&existing, key, wanted);
                }
                for key in entry.remove {
                    if let Some(current) = existing.get(key) {
                        current.remove();
                        changed = true;
                    }
                }
            }
            // Not an object: not a server entry any client reads, so it is replaced.
            None => {
                prop.set_value(to_input(&Value::Object(entry.set.clone())));
                changed = true;
            }
        },
    }
    if !changed {
        return Ok(text.to_owned());
    }
    let mut updated = root.to_string();
    // A new file ends with a newline, as an editor would leave it.
    if text.trim().is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    Ok(updated)
}

/// Sets `key` of `object` to `wanted`, an object merged pair by pair into an object that is
/// there. Returns whether anything changed.
fn merge_json(object: &jsonc_parser::cst::CstObject, key: &str, wanted: &Value) -> bool {
    let Some(current) = object.get(key) else {
        object.append(key, to_input(wanted));
        return true;
    };
    if let (Value::Object(pairs), Some(inner)) = (wanted, current.object_value()) {
        let mut changed = false;
        for (name, value) in pairs {
            changed |= merge_json(&inner, name, value);
        }
        return changed;
    }
    let now = current.value().and_then(|v| v.to_serde_value());
    if now.as_ref() == Some(wanted) {
        return false;
    }
    current.set_value(to_input(wanted));
    true
}

/// What plain JSON allows: none of jsonc-parser's extensions.
fn strict() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// A JSON value as the CST inserts it.
fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

/// Sets `servers_key.name` in a TOML configuration to `entry` (a `[servers_key.name]` table,
/// maps as inline tables). Returns the new text: `text` itself when nothing changed.
pub(crate) fn upsert_toml(
    text: &str,
    servers_key: &str,
    name: &str,
    entry: &Entry,
) -> anyhow::Result<String> {
    use toml_edit::{DocumentMut, Item, Table};

    let mut document: DocumentMut = text.parse().context("the file is not valid TOML")?;
    if !document.contains_key(servers_key) {
        // `[mcp_servers.name]` alone, with no empty `[mcp_servers]` header above it.
        let mut servers = Table::new();
        servers.set_implicit(true);
        document.insert(servers_key, Item::Table(servers));
    }
    let servers = document[servers_key]
        .as_table_like_mut()
        .with_context(|| format!("`{servers_key}` in the file is not a table"))?;
    let mut changed = false;
    match servers.get_mut(name).and_then(Item::as_table_like_mut) {
        Some(existing) => {
            for (key, wanted) in &entry.set {
                changed |= merge_toml(existing, key, wanted)?;
            }
            for key in entry.remove {
                changed |= existing.remove(key).is_some();
            }
        }
        None => {
            let mut table = Table::new();
            for (key, value) in &entry.set {
                table.insert(key, json_to_toml(value)?);
            }
            servers.insert(name, Item::Table(table));
            changed = true;
        }
    }
    if !changed {
        return Ok(text.to_owned());
    }
    Ok(document.to_string())
}

/// Sets `key` of `table` to `wanted`, an object merged pair by pair into a table that is
/// there (inline or not). Returns whether anything changed.
fn merge_toml(
    table: &mut dyn toml_edit::TableLike,
    key: &str,
    wanted: &Value,
) -> anyhow::Result<bool> {
    if let Value::Object(pairs) = wanted
        && let Some(item) = table.get_mut(key)
    {
        let inline = item.is_inline_table();
        if let Some(inner) = item.as_table_like_mut() {
            let mut changed = false;
            for (name, value) in pairs {
                changed |= merge_toml(inner, name, value)?;
            }
            // `{ K = "V", L = "W" }`, not the space before `}` left in the middle.
            if changed
                && inline
                && let Some(inner) = item.as_inline_table_mut()
            {
                inner.fmt();
            }
            return Ok(changed);
        }
    }
    if table.get(key).map(toml_to_json).as_ref() == Some(wanted) {
        return Ok(false);
    }
    table.insert(key, json_to_toml(wanted)?);
    Ok(true)
}

/// A JSON value as a TOML item: strings, integers, booleans, arrays and inline tables.
fn json_to_toml(value: &Value) -> anyhow::Result<toml_edit::Item> {
    Ok(toml_edit::Item::Value(json_to_toml_value(value)?))
}

fn json_to_toml_value(value: &Value) -> anyhow::Result<toml_edit::Value> {
    Ok(match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => f.into(),
            _ => bail!("the number {n} has no TOML form"),
        },
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(json_to_toml_value(item)?);
            }
            array.into()
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, value) in map {
                table.insert(key, json_to_toml_value(value)?);
            }
            table.into()
        }
        Value::Null => bail!("TOML has no null"),
    })
}

/// A TOML item as JSON, to compare with what an entry should say.
pub(crate) fn toml_to_json(item: &toml_edit::Item) -> Value {
    use toml_edit::Item;
    match item {
        Item::None => Value::Null,
        Item::Value(value) => toml_value_to_json(value),
        Item::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), toml_to_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(tables) => Value::Array(
            tables
                .iter()
                .map(|t| toml_to_json(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn toml_value_to_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::from(s.value().as_str()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => Value::from(*f.value()),
        T::Boolean(b) => Value::from(*b.value()),
        T::Datetime(d) => Value::from(d.value().to_string()),
        T::Array(items) => Value::Array(items.iter().map(toml_value_to_json).collect()),
        T::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a stdio entry removes: the HTTP keys.
    const HTTP: &[&str] = &["url", "headers"];

    fn entry(value: Value) -> Entry {
        let Value::Object(set) = value else {
            unreachable!()
        };
        Entry { set, remove: HTTP }
    }

    #[test]
    fn a_new_file_gets_the_servers_object_and_the_entry() {
        let out = upsert_json(
            "",
            JsonDialect::Strict,
            "mcpServers",
            "calc",
            &entry(json!({"command": "/bin/calc", "args": ["--x"]})),
        )
        .unwrap();
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed,
            json!({"mcpServers": {"calc": {"command": "/bin/calc", "args": ["--x"]}}})
        );
        assert!(out.ends_with('\n'), "{out:?}");
    }

    #[test]
    fn other_entries_keep_every_byte_and_their_order() {
        let original = "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\", \"args\": [ 1.50, \"\\u00e9\" ]}\n    },\n    \"zzz\": [1,2]\n}\n";
        let out = upsert_json(
            original,
            JsonDialect::Strict,
            "mcpServers",
            "calc",
            &entry(json!({"command": "/bin/calc"})),
        )
        .unwrap();
        assert!(
            out.contains(
                "        \"other\": {\"command\": \"x\", \"args\": [ 1.50, \"\\u00e9\" ]}"
            ),
            "{out}"
        );
        assert!(
            out.starts_with("{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n"),
            "{out}"
        );
        assert!(out.ends_with("    },\n    \"zzz\": [1,2]\n}\n"), "{out}");
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed["mcpServers"]["calc"],
            json!({"command": "/bin/calc"})
        );
        let keys: Vec<_> = parsed["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["other", "calc"]);
        // The second run changes nothing.
        let again = upsert_json(
            &out,
            JsonDialect::Strict,
            "mcpServers",
            "calc",
            &entry(json!({"command": "/bin/calc"})),
        )
        .unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn an_entry_is_updated_in_place_keeping_keys_added_by_hand() {
        let original = r#"{
  "servers": {
    "calc": {
      "type": "stdio",
      "command": "/old/calc",
      "env": {"A": "1"},
      "disabled": false
    },
    "next": {"url": "http://x"}
  }
}
"#;
        let new = Entry {
            set:
                json!({"type": "stdio", "command": "/new/calc", "args": ["-v"], "env": {"B": "2"}})
                    .as_object()
                    .unwrap()
                    .clone(),
            remove: HTTP,
        };
        let out =
            upsert_json(original, JsonDialect::WithComments, "servers", "calc", &new).unwrap();
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed["servers"]["calc"],
            json!({"type": "stdio", "command": "/new/calc", "env": {"A": "1", "B": "2"}, "disabled": false, "args": ["-v"]})
        );
        let keys: Vec<_> = parsed["servers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["calc", "next"]);
        assert!(
            out.contains("    \"next\": {\"url\": \"http://x\"}\n"),
            "{out}"
        );
    }

    #[test]
    fn comments_survive_where_the_dialect_allows_them_and_are_refused_where_not() {
        let original = "{\n  // my servers\n  \"servers\": {\n    \"a\": {\"command\": \"a\"}, // the first\n  },\n}\n";
        let out = upsert_json(
            original,
            JsonDialect::WithComments,
            "servers",
            "calc",
            &entry(json!({"command": "/bin/calc"})),
        )
        .unwrap();
        assert!(out.contains("  // my servers\n"), "{out}");
        assert!(
            out.contains("\"a\": {\"command\": \"a\"}, // the first\n"),
            "{out}"
        );
        let error = upsert_json(
            original,
            JsonDialect::Strict,
            "servers",
            "calc",
            &entry(json!({"command": "/bin/calc"})),
        );
        assert!(error.is_err());
    }

    #[test]
    fn what_is_not_an_object_is_refused_not_overwritten() {
        for text in [
            "[1, 2]",
            "{\"mcpServers\": [1]}",
            "{\"mcpServers\": \"x\"}",
            "{",
        ] {
            let result = upsert_json(
                text,
                JsonDialect::Strict,
                "mcpServers",
                "calc",
                &entry(json!({"command": "c"})),
            );
            assert!(result.is_err(), "{text}");
        }
    }

    #[test]
    fn strings_are_escaped() {
        let out = upsert_json(
            "{}",
            JsonDialect::Strict,
            "mcpServers",
            "calc",
            &entry(json!({"command": "C:\\bin\\\"calc\".exe", "env": {"K": "a\nb"}})),
        )
        .unwrap();
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed["mcpServers"]["calc"]["command"],
            "C:\\bin\\\"calc\".exe"
        );
        assert_eq!(parsed["mcpServers"]["calc"]["env"]["K"], "a\nb");
    }

    #[test]
    fn toml_keeps_other_tables_and_is_idempotent() {
        let original = "model = \"o3\" # mine\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [ \"a\",\"b\" ]\n\n[profiles.fast]\nmodel = \"mini\"\n";
        let new = entry(json!({"command": "/bin/calc", "args": [], "env": {"K": "V"}}));
        let out = upsert_toml(original, "mcp_servers", "calc", &new).unwrap();
        // The new table goes after its sibling; taking it out gives back the file, byte for byte.
        let block =
            "[mcp_servers.calc]\ncommand = \"/bin/calc\"\nargs = []\nenv = { K = \"V\" }\n\n";
        assert!(out.contains(block), "{out}");
        assert_eq!(out.replacen(block, "", 1), original);
        let again = upsert_toml(&out, "mcp_servers", "calc", &new).unwrap();
        assert_eq!(again, out);
        // A new command and a new variable: the other variable and the arguments stay.
        let changed = entry(json!({"command": "/bin/calc2", "env": {"L": "W"}}));
        let updated = upsert_toml(&out, "mcp_servers", "calc", &changed).unwrap();
        let block = "[mcp_servers.calc]\ncommand = \"/bin/calc2\"\nargs = []\nenv = { K = \"V\", L = \"W\" }\n\n";
        assert_eq!(updated.replacen(block, "", 1), original, "{updated}");
        // Moved to HTTP: the stdio keys go.
        let moved = Entry {
            set: json!({"url": "http://h/mcp"}).as_object().unwrap().clone(),
            remove: &["command", "args", "env"],
        };
        let updated = upsert_toml(&out, "mcp_servers", "calc", &moved).unwrap();
        let block = "[mcp_servers.calc]\nurl = \"http://h/mcp\"\n\n";
        assert_eq!(updated.replacen(block, "", 1), original, "{updated}");
    }

    #[test]
    fn toml_in_an_empty_file_has_no_empty_parent_header() {
        let out = upsert_toml(
            "",
            "mcp_servers",
            "calc",
            &entry(json!({"url": "http://h/mcp"})),
        )
        .unwrap();
        assert_eq!(out, "[mcp_servers.calc]\nurl = \"http://h/mcp\"\n");
    }
}
