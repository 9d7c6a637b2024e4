//! `tools/list` and `tools/call` as a client sees them.

use mcp_runtime::testing::Client;
use mcp_runtime::{DefinitionError, Error, ProtocolVersion, SchemaStyle, Server};
use serde_json::{Value, json};

use crate::fixtures::*;

fn all() -> Server {
    Server::builder()
        .tool(add)
        .tool(paint)
        .tool(greet)
        .tool(fail)
        .tool(explode)
        .tool(slow)
        .tool(search)
        .tool(whoami)
        .tool(gallery)
        .tool(noop)
}

async fn tool_named(client: &Client, name: &str) -> Value {
    let tools = client.list_tools().await.unwrap();
    tools
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn validate(schema: &Value, instance: &Value) {
    let validator = jsonschema::draft202012::new(schema).expect("a valid 2020-12 schema");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} does not validate against {schema}: {errors:?}"
    );
}

#[tokio::test]
async fn tools_are_listed_sorted_by_name() {
    let client = Client::connect(all()).await.unwrap();
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 10);
}

#[tokio::test]
async fn descriptions_come_from_doc_comments() {
    let client = Client::connect(all()).await.unwrap();
    let paint = tool_named(&client, "paint").await;
    assert_eq!(
        paint["description"],
        "Quote a paint job.\n\nThe price depends on the wall and the number of coats."
    );
    assert_eq!(paint["title"], "Paint quote");
    let properties = &paint["inputSchema"]["properties"];
    assert_eq!(
        properties["colour"]["description"],
        "The colour to paint with."
    );
    assert_eq!(properties["wall"]["description"], "The wall.");
    // Every schema is self-contained: no $ref, no $defs, no $schema, no type-name titles.
    let text = paint.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert!(paint["inputSchema"].get("title").is_none());
    assert!(
        paint["inputSchema"]["properties"]["wall"]
            .get("title")
            .is_none()
    );
}

#[tokio::test]
async fn required_lists_leave_out_options_and_defaults() {
    let client = Client::connect(all()).await.unwrap();
    let paint = tool_named(&client, "paint").await;
    let schema = &paint["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["colour", "wall"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["coats"]["default"], 2);
    assert_eq!(
        schema["properties"]["customerName"]["examples"],
        json!(["Ada"])
    );
    // Optional means "may be left out", not a union with null.
    assert_eq!(schema["properties"]["customerName"]["type"], "string");
    assert_eq!(
        schema["properties"]["wall"]["properties"]["height"]["type"],
        "number"
    );
    assert_eq!(schema["properties"]["wall"]["required"], json!(["width"]));
    // Documented enum variants keep their descriptions, as `oneOf` of `const`s.
    let variants: Vec<&Value> = schema["properties"]["colour"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["const"])
        .collect();
    assert_eq!(variants, [&json!("red"), &json!("blue")]);
    assert_eq!(
        schema["properties"]["colour"]["oneOf"][0]["description"],
        "Warm."
    );
    let noop = tool_named(&client, "noop").await;
    assert_eq!(
        noop["inputSchema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[tokio::test]
async fn struct_returns_get_an_output_schema_and_structured_content_that_validates() {
    let client = Client::connect(all()).await.unwrap();
    let paint = tool_named(&client, "paint").await;
    let output_schema = &paint["outputSchema"];
    assert_eq!(output_schema["type"], "object");
    assert_eq!(
        output_schema["required"],
        json!(["colour", "area", "litres"])
    );
    let result = client
        .call_tool(
            "paint",
            json!({"colour": "red", "wall": {"width": 4.0}, "customerName": "Ada"}),
        )
        .await
        .unwrap();
    assert!(!result.is_error);
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(
        structured,
        json!({"colour": "red", "area": 10.0, "litres": 2.0, "note": "for Ada"})
    );
    validate(output_schema, &structured);
    let text: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(text, structured);
    // A `None` field is `null`, which the output schema allows.
    let result = client
        .call_tool(
            "paint",
            json!({"colour": "blue", "wall": {"width": 1.0, "height": 1.0}}),
        )
        .await
        .unwrap();
    validate(output_schema, result.structured_content.as_ref().unwrap());
}

/// A reading, with every kind of number and optional fields.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Reading {
    sensor: u8,
    offset: i32,
    total: u64,
    level: f32,
    /// Serialized as `null` when `None`.
    peak: Option<u16>,
    /// Left out when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    previous: Option<Box<Reading>>,
}

/// Read a sensor; `full` fills in the optional fields.
#[mcp_runtime::prelude::tool]
fn read_sensor(full: bool) -> Reading {
    let previous = Reading {
        sensor: 7,
        offset: -3,
        total: u64::MAX,
        level: 0.5,
        peak: None,
        note: None,
        previous: None,
    };
    Reading {
        sensor: 255,
        offset: i32::MIN,
        total: 12,
        level: 1.25,
        peak: full.then_some(u16::MAX),
        note: full.then(|| "calibrated".to_owned()),
        previous: full.then(|| Box::new(previous)),
    }
}

/// Every `type` in a schema is one string, and every `format` one of JSON Schema's own.
fn assert_portable(schema: &Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match key.as_str() {
                    "type" => assert!(value.is_string(), "`type` {value} in {schema}"),
                    "format" => assert!(
                        ["date-time", "email", "uri", "uuid"].contains(&value.as_str().unwrap()),
                        "`format` {value} in {schema}"
                    ),
                    // A property may be named `type`: its schema is checked like any other.
                    _ => assert_portable(value),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(assert_portable),
        _ => {}
    }
}

#[tokio::test]
async fn output_schemas_are_portable_and_real_results_validate_against_them() {
    let client = Client::connect(Server::builder().tool(read_sensor))
        .await
        .unwrap();
    let tool = tool_named(&client, "read_sensor").await;
    let output_schema = &tool["outputSchema"];
    assert_portable(output_schema);
    assert_portable(&tool["inputSchema"]);
    let properties = &output_schema["properties"];
    // What the dropped formats said is kept as bounds.
    assert_eq!(
        properties["sensor"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        properties["offset"],
        json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX})
    );
    assert_eq!(
        properties["total"],
        json!({"type": "integer", "minimum": 0})
    );
    assert_eq!(properties["level"], json!({"type": "number"}));
    // `None` serializes as `null`, so an optional output property stays nullable, as `anyOf`.
    assert_eq!(
        properties["peak"]["anyOf"],
        json!([{"type": "integer", "minimum": 0, "maximum": 65535}, {"type": "null"}])
    );
    for full in [false, true] {
        let result = client
            .call_tool("read_sensor", json!({"full": full}))
            .await
            .unwrap();
        assert!(!result.is_error, "{}", result.text());
        let structured = result.structured_content.unwrap();
        assert_eq!(
            structured["peak"],
            if full { json!(65535) } else { Value::Null }
        );
        assert_eq!(structured.get("note").is_some(), full, "{structured}");
        validate(output_schema, &structured);
    }
    // A value out of the bounds the formats stood for does not validate.
    let validator = jsonschema::draft202012::new(output_schema).unwrap();
    let mut bad = client
        .call_tool("read_sensor", json!({"full": false}))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    bad["sensor"] = json!(256);
    assert!(!validator.is_valid(&bad), "{bad}");
}

#[tokio::test]
async fn scalar_and_vec_returns_are_wrapped_in_result() {
    let client = Client::connect(all()).await.unwrap();
    let add = tool_named(&client, "add").await;
    assert_eq!(
        add["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]})
    );
    let result = client
        .call_tool("add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(result.text(), "42");
    assert_eq!(result.structured_content, Some(json!({"result": 42})));
    validate(&add["outputSchema"], &json!({"result": 42}));
    let search = client
        .call_tool("search", json!({"query": "q", "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        search.structured_content,
        Some(json!({"result": ["q", "q"]}))
    );
    assert_eq!(search.text(), r#"["q","q"]"#);
}

#[tokio::test]
async fn text_and_content_returns_are_sent_as_they_are() {
    let client = Client::connect(all()).await.unwrap();
    assert!(
        tool_named(&client, "greet")
            .await
            .get("outputSchema")
            .is_none()
    );
    let greet = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&greet).unwrap(),
        json!({"content": [{"type": "text", "text": "Hello, Ada!"}]})
    );
    let gallery = client
        .request("tools/call", json!({"name": "gallery"}))
        .await
        .unwrap();
    assert_eq!(
        gallery["content"][0],
        json!({"type": "text", "text": "a picture"})
    );
    assert_eq!(
        gallery["content"][1],
        json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})
    );
    assert_eq!(
        gallery["content"][2],
        json!({"type": "resource_link", "uri": "file:///pic.png", "name": "pic.png"})
    );
    let noop = client
        .request("tools/call", json!({"name": "noop", "arguments": {}}))
        .await
        .unwrap();
    assert_eq!(noop, json!({"content": []}));
}

#[tokio::test]
async fn output_is_shaped_by_the_negotiated_revision() {
    let v = |version| Client::builder().protocol_version(version).connect(all());
    let newest = v(ProtocolVersion::V2025_11_25).await.unwrap();
    let paint = tool_named(&newest, "paint").await;
    assert_eq!(
        paint["icons"],
        json!([{"src": "https://example.com/paint.png", "mimeType": "image/png"}])
    );
    assert_eq!(paint["_meta"], json!({"example.com/tier": "free"}));

    let june = v(ProtocolVersion::V2025_06_18).await.unwrap();
    let paint = tool_named(&june, "paint").await;
    assert!(paint.get("icons").is_none());
    assert!(paint.get("title").is_some() && paint.get("outputSchema").is_some());

    let march = v(ProtocolVersion::V2025_03_26).await.unwrap();
    let paint = tool_named(&march, "paint").await;
    assert!(
        paint.get("title").is_none()
            && paint.get("outputSchema").is_none()
            && paint.get("_meta").is_none()
    );
    let add = tool_named(&march, "add").await;
    assert_eq!(
        add["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    let result = march
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(result, json!({"content": [{"type": "text", "text": "3"}]}));
    let gallery = march
        .request("tools/call", json!({"name": "gallery"}))
        .await
        .unwrap();
    assert_eq!(
        gallery["content"][2],
        json!({"type": "text", "text": "resource: file:///pic.png"})
    );

    let first = v(ProtocolVersion::V2024_11_05).await.unwrap();
    assert!(tool_named(&first, "add").await.get("annotations").is_none());
}

#[tokio::test]
async fn arguments_that_do_not_match_are_tool_errors_naming_the_argument() {
    let client = Client::connect(all()).await.unwrap();
    let cases = [
        (
            "add",
            json!({"a": "x", "b": 1}),
            "invalid value for argument `a`: invalid type: string \"x\", expected an integer",
        ),
        ("add", json!({"a": 1}), "missing required argument `b`"),
        (
            "add",
            json!({"a": 1, "c": 3}),
            "missing required argument `b`; unknown argument `c`; expected one of `a`, `b`",
        ),
        (
            "add",
            json!({"a": 1, "b": 2, "c": 3}),
            "unknown argument `c`; expected one of `a`, `b`",
        ),
        (
            "noop",
            json!({"x": 1}),
            "unknown argument `x`; this tool takes no arguments",
        ),
        (
            "paint",
            json!({"colour": "green", "wall": {"width": 1}}),
            "invalid value for argument `colour`: unknown variant `green`, expected `red` or `blue`",
        ),
        (
            "paint",
            json!({"colour": "red", "wall": {"height": 1}}),
            "invalid value for argument `wall`: missing field `width`",
        ),
        (
            "paint",
            json!({"colour": "red", "wall": {"width": "wide"}}),
            "invalid value for argument `wall.width`: invalid type: string \"wide\", expected a number",
        ),
        ("search", json!({"limit": 3}), "missing field `query`"),
    ];
    for (tool, arguments, expected) in cases {
        let result = client.call_tool(tool, arguments.clone()).await.unwrap();
        assert!(result.is_error, "{tool} {arguments}");
        assert!(
            result.text().contains(expected),
            "{tool} {arguments}: {}",
            result.text()
        );
    }
}

#[tokio::test]
async fn arguments_are_taken_wherever_they_are_and_only_the_others_are_unknown() {
    let client = Client::connect(all()).await.unwrap();
    // Known arguments before, between and after unknown ones.
    let result = client
        .call_tool("add", json!({"z": 0, "b": 2, "y": 1, "a": 1}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("unknown argument `y`, `z`; expected one of `a`, `b`"),
        "{}",
        result.text()
    );
    let answer = client
        .call_tool("add", json!({"b": 2, "a": 40}))
        .await
        .unwrap();
    assert!(!answer.is_error, "{}", answer.text());
    assert_eq!(answer.text(), "42");
    // Maps past 16 arguments are looked up by hashing; one that comes down to 16 as its
    // arguments are taken goes on by position.
    for unknown in [15, 16, 40] {
        let mut arguments = serde_json::Map::new();
        for n in 0..unknown {
            arguments.insert(format!("u{n:02}"), json!(n));
        }
        arguments.insert("a".into(), json!(1));
        arguments.insert("b".into(), json!(2));
        let result = client
            .call_tool("add", serde_json::Value::Object(arguments))
            .await
            .unwrap();
        assert!(result.is_error);
        let expected = format!(
            "unknown argument `u00`, `u01`, `u02`, `u03`, `u04`, `u05`, `u06`, `u07` and {} more; \
             expected one of `a`, `b`",
            unknown - 8
        );
        assert!(result.text().contains(&expected), "{}", result.text());
    }
}

#[tokio::test]
async fn options_defaults_and_renames_are_applied() {
    let client = Client::connect(all()).await.unwrap();
    let result = client
        .call_tool(
            "paint",
            json!({"colour": "red", "wall": {"width": 2.0, "height": 1.0}}),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["litres"], 0.4);
    let result = client
        .call_tool("paint", json!({"colour": "red", "wall": {"width": 2.0, "height": 1.0}, "coats": 5, "customerName": null}))
        .await
        .unwrap();
    let quote = result.structured_content.unwrap();
    assert_eq!(quote["litres"], 1.0);
    assert_eq!(quote["note"], Value::Null);
}

#[tokio::test]
async fn errors_from_the_tool_are_results_with_is_error() {
    let client = Client::connect(all()).await.unwrap();
    let result = client
        .call_tool("fail", json!({"reason": "testing"}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.text(), "failed because testing");
    assert!(result.structured_content.is_none());
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_without_internal_detail() {
    let client = Client::connect(all()).await.unwrap();
    let raw = client
        .request_raw("tools/call", json!({"name": "explode", "arguments": {}}))
        .await
        .unwrap();
    let result = &raw["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"][0]["text"],
        "tool `explode` failed unexpectedly"
    );
    assert!(!raw.to_string().contains("secret"), "{raw}");
    // And the server keeps serving.
    assert_eq!(
        client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap()
            .text(),
        "2"
    );
}

#[tokio::test]
async fn protocol_errors_for_calls() {
    let client = Client::connect(all()).await.unwrap();
    let cases = [
        (json!({"name": "nope"}), "unknown tool `nope`"),
        (
            json!({"arguments": {}}),
            "`tools/call` needs the tool's `name`",
        ),
        (json!({"name": 3}), "`name` must be a string"),
        (
            json!({"name": "add", "arguments": [1, 2]}),
            "`arguments` must be an object",
        ),
    ];
    for (params, message) in cases {
        let error = client
            .request("tools/call", params.clone())
            .await
            .unwrap_err();
        let error = error.rpc().unwrap();
        assert_eq!(error.code, -32602, "{params}");
        assert_eq!(error.message, message);
    }
}

#[tokio::test]
async fn context_parameters_are_injected_and_not_in_the_schema() {
    let client = Client::connect(all()).await.unwrap();
    let whoami = tool_named(&client, "whoami").await;
    assert_eq!(whoami["inputSchema"]["properties"], json!({}));
    let raw = client
        .request_raw("tools/call", json!({"name": "whoami"}))
        .await
        .unwrap();
    let id = &raw["id"];
    assert_eq!(
        raw["result"]["content"][0]["text"],
        format!("mcp-runtime-test-client 2025-11-25 {id}")
    );
}

#[tokio::test]
async fn args_struct_is_the_whole_input_schema() {
    let client = Client::connect(all()).await.unwrap();
    let search = tool_named(&client, "search").await;
    assert_eq!(
        search["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 0, "maximum": 4294967295_u32, "description": "At most this many hits."}
            },
            "required": ["query"],
            "description": "A filter for a search."
        })
    );
}

#[tokio::test]
async fn keep_defs_style_keeps_references() {
    let client = Client::connect(all().schema_style(SchemaStyle::KeepDefs))
        .await
        .unwrap();
    let paint = tool_named(&client, "paint").await;
    assert_eq!(
        paint["inputSchema"]["properties"]["wall"]["$ref"],
        "#/$defs/Wall"
    );
    assert!(paint["inputSchema"]["$defs"]["Wall"].is_object());
}

#[test]
fn duplicate_names_are_refused_with_both_locations() {
    let error = Server::builder()
        .tool(clash::first)
        .tool(clash::second)
        .build()
        .unwrap_err();
    let Error::Definition(problems) = &error else {
        panic!("{error}")
    };
    let [
        DefinitionError::Duplicate {
            kind: "tool name",
            name,
            first,
            second,
        },
    ] = problems.as_slice()
    else {
        panic!("{error}")
    };
    assert_eq!(name, "same");
    assert!(
        first.starts_with("tests/integration/fixtures.rs:") || first.contains("fixtures.rs:"),
        "{first}"
    );
    assert!(
        second.contains("fixtures.rs:") && first != second,
        "{second}"
    );
    let message = error.to_string();
    assert!(message.contains("duplicate tool name `same`"), "{message}");
}

#[test]
fn naming_a_plain_function_is_refused() {
    let error = Server::builder().tool(add).tool(plain).build().unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("fixtures::plain` is not a `#[tool]` function"),
        "{message}"
    );
}

#[test]
fn a_tool_may_be_selected_twice() {
    let service = Server::builder().tool(add).tool(add).build().unwrap();
    assert!(service.capabilities().tools.is_some());
}

#[test]
fn only_scalar_arguments_can_travel_in_headers() {
    use mcp_runtime::tool::{ParamMeta, ToolBuilder};
    let mut builder = ToolBuilder::new("tagged", |_| {
        Box::pin(async { mcp_runtime::CallToolResult::success(["ok"]) })
    });
    builder.argument(&ParamMeta::<Vec<String>> {
        header: Some("Tags"),
        ..ParamMeta::new("tags")
    });
    let error = Server::builder()
        .tool_def(builder.build())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("only string, integer and boolean arguments can travel in a header"),
        "{error}"
    );
}

/// A value whose `Serialize` always fails, so its default and example cannot go in the schema.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
struct Opaque(u8);

impl serde::Serialize for Opaque {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("opaque values do not serialize"))
    }
}

/// A tool whose default and example do not serialize.
#[mcp_runtime::tool]
fn opaque(#[arg(default = Opaque(1), example = Opaque(2))] value: Opaque) -> String {
    value.0.to_string()
}

#[test]
fn a_default_or_example_that_does_not_serialize_is_refused_not_sent_as_null() {
    let error = Server::builder().tool(opaque).build().unwrap_err();
    let Error::Definition(problems) = &error else {
        panic!("{error}")
    };
    let problems: Vec<String> = problems
        .iter()
        .map(|p| match p {
            DefinitionError::Invalid {
                kind: "tool",
                name,
                problem,
                ..
            } if name == "opaque" => problem.clone(),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        problems,
        [
            "argument `value`: the default does not serialize to JSON: opaque values do not serialize",
            "argument `value`: an example does not serialize to JSON: opaque values do not serialize",
        ]
    );
}

/// Label something.
#[mcp_runtime::tool]
async fn label(
    #[arg(default = "untitled")] name: String,
    #[arg(default = "plain")] style: Box<str>,
    #[arg(default = "en")] language: std::borrow::Cow<'static, str>,
) -> String {
    format!("{name}/{style}/{language}")
}

#[tokio::test]
async fn string_literal_defaults_are_in_the_schema_and_applied() {
    let client = Client::connect(Server::builder().tool(label))
        .await
        .unwrap();
    let tool = tool_named(&client, "label").await;
    let properties = &tool["inputSchema"]["properties"];
    assert_eq!(properties["name"]["default"], "untitled");
    assert_eq!(properties["style"]["default"], "plain");
    assert_eq!(properties["language"]["default"], "en");
    assert!(tool["inputSchema"].get("required").is_none(), "{tool}");
    let result = client.call_tool("label", json!({})).await.unwrap();
    assert_eq!(result.text(), "untitled/plain/en");
    let result = client
        .call_tool("label", json!({"name": "x", "language": "fr"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "x/plain/fr");
}

/// A file's text, for the model and for programs.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Note {
    /// The text.
    content: String,
    /// Its lines.
    lines: usize,
}

/// Read the note as text, with its fields for programs.
#[mcp_runtime::tool]
async fn note(indented: bool) -> Result<mcp_runtime::Structured<Note>, mcp_runtime::ToolError> {
    let content = "first\nsecond".to_owned();
    let note = Note {
        lines: content.lines().count(),
        content: content.clone(),
    };
    Ok(if indented {
        mcp_runtime::Structured::indented(note)
    } else {
        mcp_runtime::Structured::with_text(note, content)
    })
}

/// Some primes, counted in words.
#[mcp_runtime::tool]
fn primes() -> mcp_runtime::Structured<Vec<u32>> {
    mcp_runtime::Structured::with_text(vec![2, 3, 5], "three primes")
}

#[tokio::test]
async fn structured_keeps_the_output_schema_and_chooses_the_text_block() {
    let client = Client::connect(Server::builder().tool(note).tool(primes))
        .await
        .unwrap();
    let listed = tool_named(&client, "note").await;
    assert_eq!(
        listed["outputSchema"]["required"],
        json!(["content", "lines"])
    );
    let own = client
        .call_tool("note", json!({"indented": false}))
        .await
        .unwrap();
    assert_eq!(own.text(), "first\nsecond");
    let structured = own.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"content": "first\nsecond", "lines": 2}));
    validate(&listed["outputSchema"], &structured);
    let indented = client
        .call_tool("note", json!({"indented": true}))
        .await
        .unwrap();
    assert_eq!(
        indented.text(),
        "{\n  \"content\": \"first\\nsecond\",\n  \"lines\": 2\n}"
    );
    assert_eq!(indented.structured_content, Some(structured));
    // A list is wrapped as `{"result": ...}`, in the schema and in the result, as when a tool
    // returns the list itself.
    let listed = tool_named(&client, "primes").await;
    assert_eq!(listed["outputSchema"]["required"], json!(["result"]));
    let primes = client.call_tool("primes", json!({})).await.unwrap();
    assert_eq!(primes.text(), "three primes");
    assert_eq!(
        primes.structured_content,
        Some(json!({"result": [2, 3, 5]}))
    );
    validate(&listed["outputSchema"], &json!({"result": [2, 3, 5]}));
}
