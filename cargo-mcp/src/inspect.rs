//! `inspect`, `call`, `read` and `prompt`: connect, ask, print.
//!
//! Exit codes: 0 when the request succeeded; 1 when the server answered it with a tool error
//! (`isError: true`) or a JSON-RPC error; 2 when `cargo mcp` could not get an answer at all (the
//! build failed, the server did not start, the arguments are not JSON).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use crate::cli::{CallArgs, ConnectArgs, InspectArgs, PromptArgs, ReadArgs};
use crate::connect::{Answer, Connection};
use crate::install::header_pair;
use crate::project::Project;

/// The endpoint a server on a Unix domain socket is asked at when `--http` names none.
const UNIX_ENDPOINT: &str = "http://localhost/mcp";

/// Runs `job` on a connection made as `args` say, closing it after.
fn with_connection<T>(
    args: &ConnectArgs,
    job: impl AsyncFnOnce(&Connection) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    // Built before the runtime starts: cargo's output goes to the terminal as usual.
    let binary = match (&args.http, &args.unix) {
        (Some(_), _) | (_, Some(_)) => None,
        (None, None) => {
            let project = Project::find(&args.target)?;
            let profile = if args.release { "release" } else { "dev" };
            Some(project.build(&args.target, profile)?.executable)
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let headers = args
            .headers
            .iter()
            .map(|h| header_pair(h))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let connection = match (&args.http, &binary) {
            _ if args.unix.is_some() => {
                let url = args.http.as_deref().unwrap_or(UNIX_ENDPOINT);
                Connection::http(url, args.unix.as_deref(), &headers, timeout).await?
            }
            (Some(url), _) => Connection::http(url, None, &headers, timeout).await?,
            (None, Some(binary)) => {
                Connection::stdio(binary, &args.target.server_args, timeout).await?
            }
            (None, None) => unreachable!("a binary is built whenever no URL is given"),
        };
        let outcome = job(&connection).await;
        connection.close().await;
        outcome
    })
}

/// A JSON object from the command line (`None` is `{}`).
fn object_argument(text: Option<&str>, what: &str) -> anyhow::Result<Value> {
    let Some(text) = text else {
        return Ok(json!({}));
    };
    let value: Value =
        serde_json::from_str(text).with_context(|| format!("the {what} are not JSON: {text}"))?;
    if !value.is_object() {
        bail!("the {what} must be a JSON object, like '{{\"a\": 1}}'");
    }
    Ok(value)
}

/// Prints a JSON-RPC error and returns exit code 1.
fn rpc_error(method: &str, error: &Value) -> ExitCode {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    eprintln!("{method} failed: {message} ({code})");
    if let Some(data) = error.get("data") {
        eprintln!("{data}");
    }
    ExitCode::from(1)
}

pub(crate) fn inspect(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let surface = with_connection(&args.connect, async |connection| {
        let init = connection.initialize_result();
        let capabilities = init.get("capabilities").cloned().unwrap_or(json!({}));
        let has = |name: &str| capabilities.get(name).is_some();
        let mut surface = Map::new();
        for key in [
            "protocolVersion",
            "serverInfo",
            "capabilities",
            "instructions",
        ] {
            if let Some(value) = init.get(key) {
                surface.insert(key.into(), value.clone());
            }
        }
        let lists: [(&str, &str, &str, bool); 4] = [
            ("tools/list", "tools", "tools", has("tools")),
            ("resources/list", "resources", "resources", has("resources")),
            (
                "resources/templates/list",
                "resourceTemplates",
                "resourceTemplates",
                has("resources"),
            ),
            ("prompts/list", "prompts", "prompts", has("prompts")),
        ];
        for (method, key, field, offered) in lists {
            let items = if offered {
                connection.list_all(method, key).await?
            } else {
                Vec::new()
            };
            surface.insert(field.into(), Value::Array(items));
        }
        Ok(Value::Object(surface))
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&surface)?);
    } else {
        print!("{}", render_surface(&surface));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn call(args: &CallArgs) -> anyhow::Result<ExitCode> {
    let arguments = object_argument(args.arguments.as_deref(), "arguments")?;
    let params = json!({"name": args.tool, "arguments": arguments});
    let answer = with_connection(&args.connect, async |c| {
        c.request("tools/call", params).await
    })?;
    let result = match answer {
        Answer::Result(result) => result,
        Answer::Error(error) => return Ok(rpc_error("tools/call", &error)),
    };
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        let text = render_content(result.get("content"));
        if is_error {
            eprintln!("tool error: {text}");
        } else {
            println!("{text}");
        }
    }
    Ok(if is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn read(args: &ReadArgs) -> anyhow::Result<ExitCode> {
    let params = json!({"uri": args.uri});
    let answer = with_connection(&args.connect, async |c| {
        c.request("resources/read", params).await
    })?;
    let result = match answer {
        Answer::Result(result) => result,
        Answer::Error(error) => return Ok(rpc_error("resources/read", &error)),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let several = contents.len() > 1;
    for content in &contents {
        if several {
            println!("--- {}", text_of(content, "uri"));
        }
        println!("{}", render_resource_contents(content));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn prompt(args: &PromptArgs) -> anyhow::Result<ExitCode> {
    let arguments = object_argument(args.arguments.as_deref(), "arguments")?;
    let params = json!({"name": args.name, "arguments": arguments});
    let answer = with_connection(&args.connect, async |c| {
        c.request("prompts/get", params).await
    })?;
    let result = match answer {
        Answer::Result(result) => result,
        Answer::Error(error) => return Ok(rpc_error("prompts/get", &error)),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(description) = result.get("description").and_then(Value::as_str) {
        println!("{description}\n");
    }
    for message in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = text_of(message, "role");
        let content = message.get("content").map(|c| json!([c]));
        println!("[{role}] {}", render_content(content.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// `value[key]` as text, empty when it is not a string.
fn text_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Content blocks as a reader sees them: text as it is, other blocks described.
fn render_content(content: Option<&Value>) -> String {
    let blocks = content
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for block in &blocks {
        out.push(match text_of(block, "type") {
            "text" => text_of(block, "text").to_owned(),
            "image" | "audio" => format!(
                "[{} {}, {} bytes of base64]",
                text_of(block, "type"),
                text_of(block, "mimeType"),
                text_of(block, "data").len()
            ),
            "resource_link" => format!(
                "[link {} {}]",
                text_of(block, "uri"),
                text_of(block, "name")
            ),
            "resource" => block
                .get("resource")
                .map(render_resource_contents)
                .unwrap_or_default(),
            other => format!("[{other} block]"),
        });
    }
    out.join("\n")
}

fn render_resource_contents(content: &Value) -> String {
    if let Some(text) = content.get("text").and_then(Value::as_str) {
        return text.to_owned();
    }
    format!(
        "[blob {} of {}, {} bytes of base64]",
        text_of(content, "uri"),
        text_of(content, "mimeType"),
        text_of(content, "blob").len()
    )
}

/// The `inspect` tables.
fn render_surface(surface: &Value) -> String {
    let mut out = String::new();
    let info = &surface["serverInfo"];
    let _ = writeln!(
        out,
        "{} {}{}  (protocol {})",
        text_of(info, "name"),
        text_of(info, "version"),
        match info.get("title").and_then(Value::as_str) {
            Some(title) => format!(" \"{title}\""),
            None => String::new(),
        },
        text_of(surface, "protocolVersion")
    );
    if let Some(description) = info.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{description}");
    }
    let capabilities: Vec<String> = surface["capabilities"]
        .as_object()
        .map(|caps| {
            caps.iter()
                .map(|(name, value)| match value.get("listChanged") {
                    Some(Value::Bool(true)) => format!("{name} (listChanged)"),
                    _ => name.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(out, "capabilities: {}", capabilities.join(", "));
    if let Some(instructions) = surface.get("instructions").and_then(Value::as_str) {
        let _ = writeln!(out, "instructions: {instructions}");
    }

    let tools = surface["tools"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(out, "\nTools ({})", tools.len());
    for tool in &tools {
        let mut notes = annotations(tool);
        if tool.get("outputSchema").is_some() {
            notes.push("structured output".into());
        }
        let _ = writeln!(
            out,
            "  {}{}",
            text_of(tool, "name"),
            if notes.is_empty() {
                String::new()
            } else {
                format!("  [{}]", notes.join(", "))
            }
        );
        if let Some(description) = first_line(tool.get("description")) {
            let _ = writeln!(out, "      {description}");
        }
        let rows = arguments(&tool["inputSchema"]);
        out.push_str(&table(&rows, "      "));
    }

    let resources = surface["resources"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(out, "\nResources ({})", resources.len());
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                text_of(r, "uri").to_owned(),
                text_of(r, "mimeType").to_owned(),
                first_line(r.get("description")).unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&table(&rows, "  "));

    let templates = surface["resourceTemplates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let _ = writeln!(out, "\nResource templates ({})", templates.len());
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                text_of(t, "uriTemplate").to_owned(),
                text_of(t, "mimeType").to_owned(),
                first_line(t.get("description")).unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&table(&rows, "  "));

    let prompts = surface["prompts"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(out, "\nPrompts ({})", prompts.len());
    for prompt in &prompts {
        let _ = writeln!(out, "  {}", text_of(prompt, "name"));
        if let Some(description) = first_line(prompt.get("description")) {
            let _ = writeln!(out, "      {description}");
        }
        let rows: Vec<Vec<String>> = prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| {
                let required = a.get("required").and_then(Value::as_bool) == Some(true);
                vec![
                    text_of(a, "name").to_owned(),
                    if required { "required" } else { "optional" }.to_owned(),
                    first_line(a.get("description")).unwrap_or_default(),
                ]
            })
            .collect();
        out.push_str(&table(&rows, "      "));
    }
    out
}

/// A tool's annotations as words.
fn annotations(tool: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    let annotations = &tool["annotations"];
    let flag = |key: &str| annotations.get(key).and_then(Value::as_bool);
    if let Some(title) = annotations.get("title").and_then(Value::as_str) {
        notes.push(format!("\"{title}\""));
    }
    if flag("readOnlyHint") == Some(true) {
        notes.push("read-only".into());
    }
    match flag("destructiveHint") {
        Some(true) => notes.push("destructive".into()),
        Some(false) => notes.push("not destructive".into()),
        None => {}
    }
    if flag("idempotentHint") == Some(true) {
        notes.push("idempotent".into());
    }
    match flag("openWorldHint") {
        Some(true) => notes.push("open world".into()),
        Some(false) => notes.push("closed world".into()),
        None => {}
    }
    if let Some(support) = tool["execution"].get("taskSupport").and_then(Value::as_str) {
        notes.push(format!("task {support}"));
    }
    notes
}

/// One row per property of an input schema: name, type, required or default, description.
fn arguments(schema: &Value) -> Vec<Vec<String>> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| {
            let presence = if required.contains(&name.as_str()) {
                "required".to_owned()
            } else if let Some(default) = property.get("default") {
                format!("default {default}")
            } else {
                "optional".to_owned()
            };
            vec![
                name.clone(),
                type_of(property),
                presence,
                first_line(property.get("description")).unwrap_or_default(),
            ]
        })
        .collect()
}

/// A schema's type in a few words: `integer`, `string | null`, `one of "a", "b"`,
/// `array of number`, `object`.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    if let Some(value) = schema.get("const") {
        return format!("= {value}");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let types: Vec<String> = options.iter().map(type_of).collect();
            return types.join(" | ");
        }
    }
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "array" => match schema.get("items") {
            Some(items) => format!("array of {}", type_of(items)),
            None => "array".to_owned(),
        },
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_owned(),
    }
}

/// The first line of a description.
fn first_line(text: Option<&Value>) -> Option<String> {
    let text = text?.as_str()?.trim();
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// Rows as aligned columns, each line indented; the last column is not padded.
fn table(rows: &[Vec<String>], indent: &str) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = indent.to_owned();
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths[c].saturating_sub(cell.chars().count()) + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_reads_as_its_arguments_and_annotations() {
        let surface = json!({
            "protocolVersion": "2025-11-25",
            "serverInfo": {"name": "calc", "version": "1.0.0"},
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "tools": [{
                "name": "add",
                "description": "Add two integers.\n\nMore text.",
                "annotations": {"readOnlyHint": true, "idempotentHint": true},
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "description": "The first addend."},
                        "b": {"type": "integer", "default": 0},
                        "unit": {"enum": ["c", "f"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                    },
                    "required": ["a"]
                },
                "outputSchema": {"type": "object"}
            }],
            "resources": [], "resourceTemplates": [{"uriTemplate": "notes://{id}", "mimeType": "text/plain"}],
            "prompts": [{"name": "review", "arguments": [{"name": "code", "required": true}]}]
        });
        let text = render_surface(&surface);
        assert!(
            text.starts_with("calc 1.0.0  (protocol 2025-11-25)\n"),
            "{text}"
        );
        assert!(
            text.contains("capabilities: tools (listChanged), logging"),
            "{text}"
        );
        assert!(
            text.contains(
                "  add  [read-only, idempotent, structured output]\n      Add two integers.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(concat!(
                "      a     integer          required   The first addend.\n",
                "      b     integer          default 0\n",
                "      unit  one of \"c\", \"f\"  optional\n",
                "      tags  array of string  optional\n",
                "      note  string | null    optional\n",
            )),
            "{text}"
        );
        assert!(text.contains("  notes://{id}  text/plain\n"), "{text}");
        assert!(text.contains("  review\n      code  required\n"), "{text}");
    }

    #[test]
    fn content_blocks_print_as_text() {
        let content = json!([
            {"type": "text", "text": "3"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "a://b", "text": "inner"}}
        ]);
        assert_eq!(
            render_content(Some(&content)),
            "3\n[image image/png, 4 bytes of base64]\ninner"
        );
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(object_argument(None, "arguments").unwrap(), json!({}));
        assert!(object_argument(Some("[1]"), "arguments").is_err());
        assert!(object_argument(Some("{"), "arguments").is_err());
    }
}
