//! Existing HTTP APIs as MCP tools: the runtime side of [`openapi!`](macro@crate::openapi).
//!
//! `openapi!("api.yaml", ..)` reads an OpenAPI 3.0 or 3.1 description when the crate compiles
//! and writes, for each selected operation, what a user could have written by hand: a typed
//! `async fn` that calls the operation, and a tool built from an [`Operation`] (its name,
//! descriptions, annotations and schemas, taken from the description) registered like a
//! `#[tool]`'s. Both go through one [`Api`], the `static API` the macro declares beside them,
//! which holds the run-time half: the [`Upstream`] (base URL, credentials, bounds) and the
//! description's shared schemas.
//!
//! A call takes the tool's arguments apart by the operation's parameters (path, query and
//! header, in their OpenAPI styles) and request body, sends one request with `reqwest` over
//! rustls, and answers:
//!
//! - a 2xx: the body as text, and as `structuredContent` when the operation's success response
//!   has a JSON schema (wrapped as `{"result": ..}` when that schema is not an object's, as a
//!   hand-written tool's scalar output is);
//! - any other status: a tool error (`isError: true`) with the method, the path, the status and
//!   the API's error body, trimmed to [`Upstream::max_error_bytes`], for the model to read;
//! - arguments that do not fit (a missing required one, an unknown one, a value of the wrong
//!   JSON type): a tool error naming each, before anything is sent;
//! - a timeout, a refused connection or a body past [`Upstream::max_response_bytes`]: a tool
//!   error saying which.
//!
//! Nothing an upstream API sends is kept past the call, and nothing it sends can make the
//! server allocate more than the response bound.
//!
//! # Where it sits
//!
//! Beside the items: it makes [`ToolDef`]s, so it may import `tool`,
//! `context` and `protocol`; nothing in the runtime imports it.

mod call;
mod upstream;

use std::sync::OnceLock;

use serde::Serialize;

pub use self::call::Response;
pub use self::upstream::{Authorize, ConfigError, Upstream};
use crate::context::Context;
use crate::tool::{
    BoxFuture, CallToolResult, ToolAnnotations, ToolBuilder, ToolCall, ToolDef, ToolError,
};
pub use serde_json::{Map, Value};

/// One described API: where its operations are sent and the schemas they share. `openapi!`
/// declares one as `pub static API: Api`; configure it once, before serving, with
/// [`Api::configure`].
pub struct Api {
    source: &'static str,
    default_base_url: Option<&'static str>,
    definitions: &'static str,
    upstream: OnceLock<Upstream>,
    parsed: OnceLock<Map<String, Value>>,
}

impl Api {
    /// An API described in `source` (the file, for messages), sent to `default_base_url` (the
    /// description's first server, when it is an absolute URL) until configured otherwise.
    /// `definitions` is a JSON object: the description's schemas that operations refer to with
    /// `{"$ref": "#/$defs/<name>"}`.
    pub const fn new(
        source: &'static str,
        default_base_url: Option<&'static str>,
        definitions: &'static str,
    ) -> Self {
        Self {
            source,
            default_base_url,
            definitions,
            upstream: OnceLock::new(),
            parsed: OnceLock::new(),
        }
    }

    /// Sets where and how the API is called. Once: a second call is an error, as is a call
    /// after the first request went out with the default.
    pub fn configure(&self, upstream: Upstream) -> Result<(), ConfigError> {
        self.upstream.set(upstream).map_err(|_| {
            ConfigError::new(format!(
                "the API of `{}` is configured already",
                self.source
            ))
        })
    }

    /// The upstream calls go to: the configured one, else the description's server.
    pub fn upstream(&self) -> Result<&Upstream, ToolError> {
        if let Some(upstream) = self.upstream.get() {
            return Ok(upstream);
        }
        let Some(url) = self.default_base_url else {
            return Err(ToolError::new(format!(
                "the API of `{}` has no base URL: its description names no absolute server URL, \
                 and `API.configure(Upstream::new(url)?)` was not called",
                self.source
            )));
        };
        let upstream = Upstream::new(url).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(self.upstream.get_or_init(|| upstream))
    }

    /// Calls `operation` with `arguments` (the tool's arguments object) for the request of
    /// `context`: what the generated functions and tools do.
    pub async fn call(
        &self,
        context: &Context,
        operation: &'static Operation,
        arguments: Map<String, Value>,
    ) -> Result<Response, ToolError> {
        let upstream = self.upstream()?;
        call::send(upstream, context, operation, arguments).await
    }

    /// The tool of `operation`: its name, description, annotations and schemas from the
    /// description; its calls go through [`Api::call`].
    pub fn tool(&'static self, operation: &'static Operation) -> ToolDef {
        let mut builder = ToolBuilder::new(
            operation.tool,
            move |mut call: ToolCall| -> BoxFuture<CallToolResult> {
                let arguments = call.take_arguments();
                let context = call.context().clone();
                Box::pin(async move {
                    match self.call(&context, operation, arguments).await {
                        Ok(response) => response.into_tool_result(operation),
                        Err(error) => CallToolResult::error(error.to_string()),
                    }
                })
            },
        );
        if let Some(description) = operation.description {
            builder.description(description);
        }
        builder.annotations(ToolAnnotations {
            title: None,
            read_only_hint: Some(operation.hints.read_only),
            destructive_hint: Some(operation.hints.destructive),
            idempotent_hint: Some(operation.hints.idempotent),
            open_world_hint: Some(true),
        });
        let input = self.schema(operation.input_schema);
        let output = operation.output_schema.map(|schema| self.schema(schema));
        builder.described_schemas(input, output);
        builder.build()
    }

    /// A schema of the macro's (JSON text it wrote, so it parses), with the definitions it
    /// refers to, directly or through others, under `$defs`.
    fn schema(&self, text: &'static str) -> Map<String, Value> {
        let mut schema = match serde_json::from_str(text) {
            Ok(Value::Object(schema)) => schema,
            _ => Map::new(),
        };
        let definitions =
            self.parsed
                .get_or_init(|| match serde_json::from_str(self.definitions) {
                    Ok(Value::Object(definitions)) => definitions,
                    _ => Map::new(),
                });
        let mut needed = Vec::new();
        collect_refs(&Value::Object(schema.clone()), &mut needed);
        let mut defs = Map::new();
        while let Some(name) = needed.pop() {
            if defs.contains_key(&name) {
                continue;
            }
            if let Some(definition) = definitions.get(&name) {
                collect_refs(definition, &mut needed);
                defs.insert(name, definition.clone());
            }
        }
        if !defs.is_empty() {
            match schema.get_mut("$defs") {
                // A schema's own `$defs` stay; a name in both is the schema's.
                Some(Value::Object(own)) => {
                    for (name, definition) in defs {
                        own.entry(name).or_insert(definition);
                    }
                }
                _ => {
                    schema.insert("$defs".to_owned(), Value::Object(defs));
                }
            }
        }
        schema
    }
}

/// The names of the `#/$defs/<name>` references in `value`.
fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix("#/$defs/") {
                            out.push(name.to_owned());
                        }
                    }
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, out)),
        _ => {}
    }
}

/// One operation of a description, as `openapi!` read it.
#[derive(Debug)]
pub struct Operation {
    /// The tool's name.
    pub tool: &'static str,
    /// The HTTP method, upper case.
    pub method: &'static str,
    /// The path template, `{name}` for each path parameter.
    pub path: &'static str,
    /// The tool's description: the operation's summary and description.
    pub description: Option<&'static str>,
    /// The parameters (path, query, header).
    pub parameters: &'static [Parameter],
    /// The request body, when the operation takes one.
    pub body: Option<Body>,
    /// The tool's `inputSchema`, as JSON text.
    pub input_schema: &'static str,
    /// The tool's `outputSchema`, as JSON text: the success response's schema (wrapped when
    /// [`Operation::wrap_output`]).
    pub output_schema: Option<&'static str>,
    /// The success response's schema is not an object's: its JSON goes in `{"result": ..}`.
    pub wrap_output: bool,
    /// The annotations, from the method.
    pub hints: Hints,
}

/// The annotations of an operation's tool, from its HTTP method (every one is `openWorld`).
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    /// `GET`, `HEAD`, `OPTIONS`.
    pub read_only: bool,
    /// `PUT`, `PATCH`, `DELETE`.
    pub destructive: bool,
    /// Every method but `POST` and `PATCH`.
    pub idempotent: bool,
}

/// One parameter of an operation.
#[derive(Debug)]
pub struct Parameter {
    /// The name the API knows it by.
    pub name: &'static str,
    /// The tool argument that carries it (the same name).
    pub argument: &'static str,
    /// Where it goes.
    pub location: Location,
    /// How its value is written.
    pub style: Style,
    /// The JSON type its schema says, when it says one.
    pub kind: Kind,
    /// Whether the tool call must give it.
    pub required: bool,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A `{name}` of the path.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
}

/// How a parameter's value is written (OpenAPI's `style` and `explode`, or `content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `simple`: a list joined with `,` (path and header parameters).
    Simple,
    /// `form` with `explode: true` (the query default): `a=1&a=2`, an object's properties as
    /// parameters of their own.
    FormExplode,
    /// `form` with `explode: false`: `a=1,2`.
    Form,
    /// `spaceDelimited`: `a=1%202`.
    SpaceDelimited,
    /// `pipeDelimited`: `a=1|2`.
    PipeDelimited,
    /// `deepObject`: `a[key]=value`.
    DeepObject,
    /// `content: application/json`: the value's JSON text.
    Json,
}

/// The JSON type of an argument, as its schema says, checked before a request goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `array`.
    Array,
    /// `object`.
    Object,
    /// No single type (none said, several, or a composition).
    Any,
}

/// An operation's request body.
#[derive(Debug)]
pub struct Body {
    /// The media type sent.
    pub content_type: &'static str,
    /// How the body is encoded.
    pub encoding: Encoding,
    /// Whether the operation needs one.
    pub required: bool,
    /// Which arguments make it.
    pub shape: BodyShape,
}

/// How a request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// JSON (`application/json` and `+json` types).
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// The argument's text, as it is (`text/*`, `application/octet-stream`).
    Text,
}

/// Which arguments make a request body.
#[derive(Debug)]
pub enum BodyShape {
    /// One argument is the whole body.
    Whole(&'static str),
    /// The body is an object, and each of its properties is an argument of its own.
    Properties {
        /// The properties.
        names: &'static [&'static str],
        /// Those the body needs.
        required: &'static [&'static str],
    },
}

/// The arguments object of a call built from typed values: what the functions `openapi!`
/// generates pass to [`Api::call`]. `None` (any value that serializes to `null`) leaves the
/// argument out.
#[derive(Debug, Default)]
pub struct Arguments(Map<String, Value>);

impl Arguments {
    /// No arguments.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value` as the argument `name`.
    pub fn with<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value)
            .map_err(|e| ToolError::new(format!("argument `{name}` does not serialize: {e}")))?;
        if !value.is_null() {
            self.0.insert(name.to_owned(), value);
        }
        Ok(self)
    }

    /// The arguments object.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}
