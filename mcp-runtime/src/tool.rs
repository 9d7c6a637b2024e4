//! The runtime side of tools: definitions, calls, results and tool errors.
//!
//! `#[tool]` turns a function into a [`ToolDef`]: its name, descriptions, schemas and a handler
//! that takes the call's arguments apart parameter by parameter. Everything that can be computed
//! from the types (the input and output schemas, which shape the output takes) is computed once,
//! when the server is built; a call costs the argument conversion, the function and the result.
//!
//! # Where it sits
//!
//! An item: it may import `completion`, `context`, `protocol`, `schema`, `metadata` and `error`.
//! The other items, the server and everything above import it; it never imports them.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::{DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Context;
pub use crate::metadata::SourceLocation;
use crate::metadata::{Metadata, item_setters};
use crate::protocol::{
    Audio, Content, EmbeddedResource, ErrorObject, Icon, Image, LISTED, MESSAGE_MAX, Object,
    ProtocolVersion, RequestId, ResourceLink, Text, bounded, echo,
};

/// How many unknown arguments an argument error names.
const UNKNOWN_LISTED: usize = 8;
use crate::schema::{self, Direction, SchemaStyle};

pub use crate::context::BoxFuture;

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks, for the model to read.
    pub content: Vec<Content>,
    /// The same result as JSON that validates against the tool's `outputSchema` (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed. A failed call is still a result, so the model can read why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn success(content: impl IntoIterator<Item = impl Into<Content>>) -> Self {
        Self {
            content: content.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// A failed result whose one text block says why.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            ..Self::default()
        }
    }

    /// The text of every text block, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The result as `version` can carry it: no `structuredContent` before 2025-06-18, and content
    /// blocks a revision lacks turned into text.
    pub fn for_version(mut self, version: ProtocolVersion) -> Self {
        if !version.has_structured_output() {
            self.structured_content = None;
            self.meta = None;
        }
        if version < ProtocolVersion::V2025_06_18 {
            self.content = self
                .content
                .into_iter()
                .map(|c| c.for_version(version))
                .collect();
        }
        self
    }
}

/// The response to a `tools/call` whose result is `result`: what
/// [`encode_response`](crate::protocol::encode_response) writes, byte for byte, written directly
/// when every content block is plain text (no annotations, no `_meta`), as most tools' results
/// are; serde's walk of the internally tagged content blocks costs more than the rest of the
/// response. Any other result goes through serde.
pub(crate) fn encode_tool_response(id: &RequestId, reply: &ToolReply) -> Vec<u8> {
    let result = match reply {
        ToolReply::Result(result) => result,
        ToolReply::Json(json) => return json.encode(id),
    };
    let mut texts = 0;
    for block in &result.content {
        match block {
            Content::Text(Text {
                text,
                annotations: None,
                meta: None,
            }) => texts += text.len() + 32,
            _ => return crate::protocol::encode_response(id, result),
        }
    }
    let mut out = Vec::with_capacity(96 + texts);
    let written = (|| -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut out, id)?;
        out.extend_from_slice(br#","result":{"content":["#);
        for (n, block) in result.content.iter().enumerate() {
            if let Content::Text(text) = block {
                if n > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(br#"{"type":"text","text":"#);
                serde_json::to_writer(&mut out, &text.text)?;
                out.push(b'}');
            }
        }
        out.push(b']');
        if let Some(structured) = &result.structured_content {
            out.extend_from_slice(br#","structuredContent":"#);
            serde_json::to_writer(&mut out, structured)?;
        }
        if result.is_error {
            out.extend_from_slice(br#","isError":true"#);
        }
        if let Some(meta) = &result.meta {
            out.extend_from_slice(br#","_meta":"#);
            serde_json::to_writer(&mut out, meta)?;
        }
        out.extend_from_slice(b"}}");
        Ok(())
    })();
    match written {
        Ok(()) => out,
        Err(_) => crate::protocol::encode_response(id, result),
    }
}

/// An error a tool reports to the model: the call becomes a result with `isError: true` and this
/// message as its text. Any `Err(e)` with `e: Display` does the same; this type is a convenience.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// An error from any error type, keeping its message.
    pub fn from_error(error: impl std::error::Error) -> Self {
        Self::new(error.to_string())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

/// A failed request to the client (sampling, elicitation, roots) becomes a tool error, so a tool
/// can `?` it. It lives here rather than in `context` so `context` depends on nothing about items.
impl From<crate::context::ClientRequestError> for ToolError {
    fn from(error: crate::context::ClientRequestError) -> Self {
        ToolError::new(error.to_string())
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// Take a tool's whole input as one type: `Args(x): Args<T>` makes `T`'s own schema the
/// `inputSchema`, and the arguments object is deserialized into `T`.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Search {
///     /// What to look for.
///     query: String,
///     /// At most this many hits.
///     limit: Option<u32>,
/// }
///
/// /// Search the catalogue.
/// #[tool]
/// async fn search(Args(search): Args<Search>) -> Vec<String> {
///     vec![search.query; search.limit.unwrap_or(1) as usize]
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

/// A type a tool can return as it is: content blocks, a whole [`CallToolResult`], text.
///
/// Returning a `T: Serialize + JsonSchema` instead gives the tool an `outputSchema` and
/// `structuredContent`; implement this trait for a type of your own to control its content
/// ([`Structured`] keeps the `outputSchema` and lets you choose the text block).
pub trait IntoCallToolResult {
    /// Converts the value into the call's result.
    fn into_call_tool_result(self) -> CallToolResult;

    /// What a `#[tool]` returning this type declares beyond its content: by default nothing
    /// (no `outputSchema`). Not public API.
    #[doc(hidden)]
    fn declare_output(_builder: &mut ToolBuilder)
    where
        Self: Sized,
    {
    }

    /// The result of a `#[tool]` call returning this value, shaped as the tool's definition
    /// says. Not public API.
    #[doc(hidden)]
    fn into_result_of(self, _call: &ToolCall) -> CallToolResult
    where
        Self: Sized,
    {
        self.into_call_tool_result()
    }
}

/// A structured result with the text block of your choice: the tool's `outputSchema` is `T`'s
/// and `structuredContent` is the value, as when a tool returns `T` itself, while the text
/// block, which clients that ignore `structuredContent` show the model, is compact JSON
/// ([`Structured::new`], what returning `T` sends), JSON indented by two spaces
/// ([`Structured::indented`]), or a text of your own ([`Structured::with_text`]).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// A file's text.
/// #[derive(Serialize, JsonSchema)]
/// struct FileText {
///     /// The whole text.
///     content: String,
/// }
///
/// /// Read a note.
/// #[tool]
/// async fn read_note() -> Structured<FileText> {
///     let content = "line 1\nline 2".to_owned();
///     // The model reads the text itself; a program reads `{"content": ...}`.
///     Structured::with_text(FileText { content: content.clone() }, content)
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use mcp_runtime::testing::Client;
/// # use serde_json::json;
/// # let client = Client::connect(Server::builder().tool(read_note)).await?;
/// # let tools = client.list_tools().await?;
/// # assert_eq!(tools[0]["outputSchema"]["required"], json!(["content"]));
/// # let result = client.call_tool("read_note", json!({})).await?;
/// # assert_eq!(result.text(), "line 1\nline 2");
/// # assert_eq!(result.structured_content, Some(json!({"content": "line 1\nline 2"})));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T> {
    value: T,
    text: StructuredText,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum StructuredText {
    Compact,
    Indented,
    Given(String),
}

impl<T> Structured<T> {
    /// The value, with its compact JSON as the text block (what returning `T` sends).
    pub fn new(value: T) -> Self {
        Self {
            value,
            text: StructuredText::Compact,
        }
    }

    /// The value, with its JSON indented by two spaces as the text block.
    pub fn indented(value: T) -> Self {
        Self {
            value,
            text: StructuredText::Indented,
        }
    }

    /// The value, with `text` as the text block.
    pub fn with_text(value: T, text: impl Into<String>) -> Self {
        Self {
            value,
            text: StructuredText::Given(text.into()),
        }
    }

    /// The value.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Serialize + JsonSchema> Structured<T> {
    fn into_result(self, tool: &str, output: OutputShape) -> CallToolResult {
        let text = self.text;
        let serialized = serde_json::to_value(self.value).and_then(|json| {
            let text = match text {
                StructuredText::Compact => serde_json::to_string(&json)?,
                StructuredText::Indented => serde_json::to_string_pretty(&json)?,
                StructuredText::Given(text) => text,
            };
            Ok((json, text))
        });
        match serialized {
            Ok((json, text)) => shaped_result(json, text, output),
            Err(error) => unserializable(tool, &error),
        }
    }
}

impl<T: Serialize + JsonSchema> IntoCallToolResult for Structured<T> {
    /// Outside a `#[tool]`, the shape comes from `T`'s schema: an object is `structuredContent`
    /// as it is, anything else is wrapped as `{"result": ...}`.
    fn into_call_tool_result(self) -> CallToolResult {
        let output = if schema::is_object(&schema::root_schema::<T>()) {
            OutputShape::Object
        } else {
            OutputShape::Wrapped
        };
        self.into_result("", output)
    }

    fn declare_output(builder: &mut ToolBuilder) {
        builder.structured_output::<T>();
    }

    fn into_result_of(self, call: &ToolCall) -> CallToolResult {
        self.into_result(&call.tool, call.output)
    }
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoCallToolResult for () {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::default()
    }
}

impl IntoCallToolResult for String {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self)])
    }
}

impl IntoCallToolResult for &str {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self)])
    }
}

impl IntoCallToolResult for Cow<'_, str> {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self.into_owned())])
    }
}

impl IntoCallToolResult for Vec<Content> {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

macro_rules! block_into_result {
    ($($ty:ty),*) => {$(
        impl IntoCallToolResult for $ty {
            fn into_call_tool_result(self) -> CallToolResult {
                CallToolResult::success([Content::from(self)])
            }
        }
    )*};
}

block_into_result!(Content, Text, Image, Audio, ResourceLink, EmbeddedResource);

/// Hints about what a tool does. Clients treat them as untrusted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// How a structured return value is put on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputShape {
    /// The handler builds its own result (content blocks, text).
    Content,
    /// The value's JSON is an object: it is the `structuredContent` as it is.
    Object,
    /// Anything else (a number, an array): wrapped as `{"result": value}`.
    Wrapped,
}

/// A tool's handler.
#[derive(Clone)]
pub(crate) enum ToolHandler {
    /// One given to [`ToolBuilder::new`]: it builds its result.
    Results(Arc<dyn Fn(ToolCall) -> BoxFuture<CallToolResult> + Send + Sync>),
    /// A `#[tool]` function's, which may answer with its return value already written as JSON.
    Replies(Arc<dyn Fn(ToolCall) -> BoxFuture<ToolReply> + Send + Sync>),
}

/// What a tool's handler answers with: a result, or a typed return value written once as JSON.
/// Not public API: a `#[tool]` function returns its own type, a [`ToolBuilder::new`] handler a
/// [`CallToolResult`].
#[doc(hidden)]
pub enum ToolReply {
    Result(CallToolResult),
    Json(JsonReply),
}

/// A typed return value, serialized once: its compact JSON is the text block and the
/// `structuredContent` (wrapped as `{"result": ...}` when the tool's output schema is not an
/// object), written into the response as it is. Building a `Value` first, then writing it out,
/// costs a typed result more than the rest of its response. Only a call whose response is
/// written straight from its result gets one ([`ToolCall`]'s `direct`); any other gets the
/// [`CallToolResult`], which [`ToolReply::into_result`] also makes from this.
#[doc(hidden)]
pub struct JsonReply {
    json: String,
    wrapped: bool,
    /// Whether `structuredContent` goes out (2025-06-18 on).
    structured: bool,
}

impl JsonReply {
    /// The response to the call `id`: what [`encode_response`](crate::protocol::encode_response)
    /// writes for the same result, byte for byte.
    fn encode(&self, id: &RequestId) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + 2 * self.json.len());
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        // An id is a string or a number: serializing it cannot fail.
        let _ = serde_json::to_writer(&mut out, id);
        out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
        let _ = serde_json::to_writer(&mut out, &self.json);
        out.push(b'}');
        out.push(b']');
        if self.structured {
            out.extend_from_slice(br#","structuredContent":"#);
            if self.wrapped {
                out.extend_from_slice(br#"{"result":"#);
            }
            out.extend_from_slice(self.json.as_bytes());
            if self.wrapped {
                out.push(b'}');
            }
        }
        out.extend_from_slice(b"}}");
        out
    }
}

impl ToolReply {
    pub(crate) fn is_error(&self) -> bool {
        match self {
            Self::Result(result) => result.is_error,
            Self::Json(_) => false,
        }
    }

    /// What a client of `version` gets: see [`CallToolResult::for_version`].
    pub(crate) fn for_version(self, version: ProtocolVersion) -> Self {
        match self {
            Self::Result(result) => Self::Result(result.for_version(version)),
            Self::Json(mut json) => {
                json.structured &= version.has_structured_output();
                Self::Json(json)
            }
        }
    }

    /// The result as a [`CallToolResult`].
    pub(crate) fn into_result(self) -> CallToolResult {
        let json = match self {
            Self::Result(result) => return result,
            Self::Json(json) => json,
        };
        let structured = match json.structured {
            false => None,
            // The server's own compact JSON; only nesting past serde_json's limit (128) fails.
            true => match serde_json::from_str::<Value>(&json.json) {
                Ok(value) if json.wrapped => {
                    let mut wrapped = Map::with_capacity(1);
                    wrapped.insert("result".to_owned(), value);
                    Some(Value::Object(wrapped))
                }
                Ok(value) => Some(value),
                Err(error) => return unserializable("", &error),
            },
        };
        CallToolResult {
            content: vec![Content::text(json.json)],
            structured_content: structured,
            is_error: false,
            meta: None,
        }
    }
}

/// A handler that may answer a call with a JSON-RPC error instead of a result: a proxied tool
/// relays its upstream's errors as they were.
pub(crate) type RelayHandler =
    Arc<dyn Fn(ToolCall) -> BoxFuture<Result<CallToolResult, ErrorObject>> + Send + Sync>;

/// A call's future: a tool's result, or (a relayed tool only) the JSON-RPC error to answer
/// with. An enum rather than one more box, so an ordinary tool's call costs what it did.
pub(crate) enum ToolFuture {
    Plain(BoxFuture<CallToolResult>),
    Replied(BoxFuture<ToolReply>),
    Relayed(BoxFuture<Result<CallToolResult, ErrorObject>>),
}

impl Future for ToolFuture {
    type Output = Result<ToolReply, ErrorObject>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.get_mut() {
            Self::Plain(future) => future.as_mut().poll(cx).map(|r| Ok(ToolReply::Result(r))),
            Self::Replied(future) => future.as_mut().poll(cx).map(Ok),
            Self::Relayed(future) => future.as_mut().poll(cx).map(|r| r.map(ToolReply::Result)),
        }
    }
}

/// A tool: what `tools/list` shows of it and the handler `tools/call` runs.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) name: Cow<'static, str>,
    pub(crate) metadata: Metadata,
    pub(crate) input_schema: Map<String, Value>,
    pub(crate) output_schema: Option<Map<String, Value>>,
    pub(crate) output: OutputShape,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) handler: ToolHandler,
    pub(crate) takes_args_struct: bool,
    pub(crate) argument_names: Arc<[&'static str]>,
    /// The input schema was given verbatim: sent as it is, never rewritten.
    pub(crate) raw_input_schema: bool,
    /// The arguments mirrored in `Mcp-Param-*` headers, found once when the tool is built.
    pub(crate) header_params: Arc<[(String, Vec<String>)]>,
    /// Whether a call may, or must, run as a task.
    pub(crate) task_support: TaskSupport,
    /// The output schema was given verbatim (a proxied tool's): sent as it is.
    pub(crate) raw_output_schema: bool,
    /// Set for a relayed tool: called instead of `handler`, it may answer with an error.
    pub(crate) relay: Option<RelayHandler>,
    /// Its own middleware (`ToolDef::layer`, `#[tool(layer = ..)]`).
    pub(crate) layer: Option<crate::metadata::ItemLayer>,
    /// Its handler may read the request's context: false only for a `#[tool]` none of whose
    /// parameters is a context parameter, whose calls are given none.
    pub(crate) reads_context: bool,
}

/// Whether a tool's calls run as tasks: `#[tool(task = "optional")]` or `task = "required"`.
///
/// A task-capable call returns a task handle at once to a client that declared the tasks
/// extension (2026-07-28) or asked with `params.task` (2025-11-25); the client then polls it,
/// answers its questions and reads its result. A `required` tool refuses other clients (-32021);
/// an `optional` one runs as an ordinary call for them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client can take one, otherwise an ordinary call.
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// The name on the wire (`execution.taskSupport`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> Option<&str> {
        self.metadata.description.as_deref()
    }

    /// The hints `tools/list` gives about it (`read_only`, `idempotent`, ...).
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.annotations
    }

    /// Whether its calls run as tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// Where the tool was defined, when it came from `#[tool]`.
    pub fn location(&self) -> Option<SourceLocation> {
        self.metadata.location
    }

    /// Runs the tool on `arguments` in `context` (`None` for a tool that reads none), through
    /// its relay handler when it has one: the one place a [`ToolCall`] is put together, so a
    /// dispatcher hands over what the request carried and gets the result's future back. `tool` is the registry's shared copy
    /// of the name, so a call allocates nothing for it. `direct`: the response is written
    /// straight from the result (see [`JsonReply`]).
    pub(crate) fn invoke(
        &self,
        tool: Arc<str>,
        arguments: Object,
        context: Option<Context>,
        direct: bool,
    ) -> ToolFuture {
        let call = ToolCall {
            tool,
            arguments,
            context,
            output: self.output,
            taken: 0,
            errors: Vec::new(),
            takes_args_struct: self.takes_args_struct,
            argument_names: Arc::clone(&self.argument_names),
            direct,
        };
        match (&self.relay, &self.handler) {
            (Some(relay), _) => ToolFuture::Relayed(relay(call)),
            (None, ToolHandler::Results(handler)) => ToolFuture::Plain(handler(call)),
            (None, ToolHandler::Replies(handler)) => ToolFuture::Replied(handler(call)),
        }
    }

    /// The `Tool` object of `tools/list` as `version` knows it, with schemas in `style`.
    pub(crate) fn to_wire(&self, version: ProtocolVersion, style: SchemaStyle) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), Value::from(&*self.name));
        self.metadata.write_names(&mut tool, version);
        let input = if self.raw_input_schema {
            self.input_schema.clone()
        } else {
            schema::finish(self.input_schema.clone(), style, Direction::Input)
        };
        tool.insert("inputSchema".into(), Value::Object(input));
        if version.has_structured_output()
            && let Some(output) = &self.output_schema
        {
            let output = if self.raw_output_schema {
                output.clone()
            } else {
                schema::finish(output.clone(), style, Direction::Output)
            };
            tool.insert("outputSchema".into(), Value::Object(output));
        }
        if version.has_tool_annotations() && !self.annotations.is_empty() {
            let mut annotations = self.annotations.clone();
            if !version.has_titles() {
                annotations.title = None;
            }
            match serde_json::to_value(annotations) {
                Ok(value) => {
                    tool.insert("annotations".into(), value);
                }
                // Strings and booleans: this cannot happen; were it to, the annotations
                // are left out and said so.
                Err(error) => {
                    tracing::error!(tool = %self.name, %error, "the annotations could not be serialized");
                }
            }
        }
        if self.task_support != TaskSupport::Forbidden && version >= ProtocolVersion::V2025_11_25 {
            tool.insert(
                "execution".into(),
                serde_json::json!({ "taskSupport": self.task_support.as_str() }),
            );
        }
        self.metadata.write_extras(&mut tool, version);
        Value::Object(tool)
    }
}

/// What a tool handler receives: the arguments, the request's context, and where argument
/// errors collect.
pub struct ToolCall {
    pub(crate) tool: Arc<str>,
    pub(crate) arguments: Object,
    /// Which entries of `arguments` a parameter has taken, by position: their values are left
    /// `null` (see [`take_argument`]).
    taken: u32,
    /// `None` for a `#[tool]` that reads no context ([`ToolDef::reads_context`]).
    pub(crate) context: Option<Context>,
    pub(crate) output: OutputShape,
    pub(crate) errors: Vec<String>,
    pub(crate) takes_args_struct: bool,
    pub(crate) argument_names: Arc<[&'static str]>,
    /// The response is written straight from the result: a typed return value may come back
    /// as its JSON ([`JsonReply`]).
    pub(crate) direct: bool,
}

impl ToolCall {
    /// The request's context.
    pub fn context(&self) -> &Context {
        self.context.as_ref().unwrap_or_else(|| Context::detached())
    }

    /// Takes the call's arguments as they came (for tools built with a raw input schema).
    pub fn take_arguments(&mut self) -> Map<String, Value> {
        if self.taken != 0 {
            let mut at = 0;
            let taken = self.taken;
            self.arguments.retain(|_, _| {
                at += 1;
                !is_taken(taken, at - 1)
            });
            self.taken = 0;
        }
        std::mem::take(&mut self.arguments).into_map()
    }

    pub(crate) fn record(&mut self, error: String) {
        self.errors.push(error);
    }

    /// Whether every argument converted and none was unknown; records the unknown ones.
    pub(crate) fn arguments_ok(&mut self) -> bool {
        let untaken = self.arguments.len() - self.taken.count_ones() as usize;
        if !self.takes_args_struct && untaken > 0 {
            let expected = &self.argument_names;
            let mut unknown: Vec<&str> = self
                .arguments
                .iter()
                .map(|(key, _)| key)
                .enumerate()
                .filter(|&(at, _)| !is_taken(self.taken, at))
                .map(|(_, key)| key)
                .collect();
            unknown.sort();
            // Named, each cut to a bound, the first few: the keys are the client's.
            let mut list = unknown
                .iter()
                .take(UNKNOWN_LISTED)
                .map(|k| format!("`{}`", echo(k)))
                .collect::<Vec<_>>()
                .join(", ");
            if unknown.len() > UNKNOWN_LISTED {
                list.push_str(&format!(" and {} more", unknown.len() - UNKNOWN_LISTED));
            }
            let message = if expected.is_empty() {
                format!("unknown argument {list}; this tool takes no arguments")
            } else {
                let expected = expected
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("unknown argument {list}; expected one of {expected}")
            };
            self.errors.push(message);
        }
        self.errors.is_empty()
    }

    /// The tool error that reports every recorded argument problem (cut at 4 KiB: the
    /// problems repeat the client's values).
    pub(crate) fn argument_error(&self) -> CallToolResult {
        let text = format!(
            "invalid arguments for tool `{}`: {}",
            self.tool,
            self.errors.join("; ")
        );
        CallToolResult::error(bounded(&text, MESSAGE_MAX).into_owned())
    }
}

/// Turns serde's "expected i64" into words a model (and a JSON Schema reader) knows.
pub(crate) fn describe_deserialize_error(error: &serde_json::Error) -> String {
    // serde's message quotes the value it could not take: the client's, of any length.
    let text = error.to_string();
    let text = echo(&text).into_owned();
    let Some((head, expected)) = text.rsplit_once("expected ") else {
        return text;
    };
    let word = match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" | "bool" => "a boolean",
        "a string" | "String" | "string" => "a string",
        other => return format!("{head}expected {other}"),
    };
    format!("{head}expected {word}")
}

/// The arguments mirrored in `Mcp-Param-*` headers: each header name with the path of its
/// property, reached through `properties` only (SEP-2243).
fn header_params(input_schema: &Map<String, Value>) -> Arc<[(String, Vec<String>)]> {
    fn walk<'a>(
        schema: &'a Map<String, Value>,
        path: &mut Vec<&'a str>,
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (key, property) in properties {
            let Value::Object(property) = property else {
                continue;
            };
            path.push(key);
            if let Some(Value::String(header)) = property.get(X_MCP_HEADER) {
                let path = path.iter().map(|&k| k.to_owned()).collect();
                out.push((header.clone(), path));
            }
            walk(property, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(input_schema, &mut Vec::new(), &mut out);
    if out.is_empty() {
        // Shared and unallocated, unlike an `Arc` made from an empty `Vec`.
        return Arc::default();
    }
    out.into()
}

/// The schema keyword that mirrors an argument in an `Mcp-Param-*` header (SEP-2243).
pub(crate) const X_MCP_HEADER: &str = "x-mcp-header";

/// A value for an argument's schema (a default, an example) as JSON, or why it does not serialize.
pub type SchemaJson = Result<Value, String>;

/// How one argument parameter is declared: its wire name and what `#[arg(..)]` and `///` said.
pub struct ParamMeta<T> {
    /// The name in the arguments object.
    pub name: &'static str,
    /// The property's description, from `///` on the parameter.
    pub description: Option<&'static str>,
    /// The value used when the argument is absent.
    pub default: Option<fn() -> T>,
    /// The default as JSON, for the schema, or why it does not serialize.
    pub default_json: Option<fn() -> SchemaJson>,
    /// `examples` for the schema, each as JSON or why it does not serialize.
    pub examples: Option<fn() -> Vec<SchemaJson>>,
    /// The HTTP header that mirrors this argument (`Mcp-Param-{header}`, 2026-07-28), declared
    /// in the schema as `x-mcp-header`. Only string, integer and boolean arguments qualify.
    pub header: Option<&'static str>,
}

impl<T> ParamMeta<T> {
    /// A parameter called `name` with nothing else said about it.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            description: None,
            default: None,
            default_json: None,
            examples: None,
            header: None,
        }
    }
}

item_setters!(ToolBuilder, "tool", def.metadata);

impl ToolBuilder {
    /// The definition's metadata, for setters kept in other modules (`app`).
    pub(crate) fn metadata_mut(&mut self) -> &mut Metadata {
        &mut self.def.metadata
    }
}

/// Builds a [`ToolDef`]; what `#[tool]` expands to drives it.
pub struct ToolBuilder {
    def: ToolDef,
    generator: schemars::SchemaGenerator,
    properties: Map<String, Value>,
    /// The argument names, in declaration order.
    names: Vec<&'static str>,
    required: Vec<Value>,
    args_struct: Option<Map<String, Value>>,
}

impl ToolBuilder {
    /// Starts a tool called `name`, served by `handler`.
    pub fn new<F>(name: impl Into<Cow<'static, str>>, handler: F) -> Self
    where
        F: Fn(ToolCall) -> BoxFuture<CallToolResult> + Send + Sync + 'static,
    {
        Self::with_handler(name.into(), ToolHandler::Results(Arc::new(handler)))
    }

    /// Starts a tool called `name`, served by `handler`: a `#[tool]` function's.
    pub(crate) fn with_handler(name: Cow<'static, str>, handler: ToolHandler) -> Self {
        Self {
            def: ToolDef {
                name,
                metadata: Metadata::default(),
                input_schema: Map::new(),
                output_schema: None,
                output: OutputShape::Content,
                annotations: ToolAnnotations::default(),
                handler,
                takes_args_struct: false,
                argument_names: Arc::default(),
                raw_input_schema: false,
                header_params: Arc::default(),
                task_support: TaskSupport::Forbidden,
                raw_output_schema: false,
                relay: None,
                layer: None,
                reads_context: true,
            },
            generator: schema::generator(),
            properties: Map::new(),
            names: Vec::new(),
            required: Vec::new(),
            args_struct: None,
        }
    }

    /// Whether the handler may read the request's context (see [`ToolDef::reads_context`]):
    /// a `#[tool]` starts without, and each context parameter says it does.
    pub(crate) fn reads_context(&mut self, reads: bool) -> &mut Self {
        self.def.reads_context = reads;
        self
    }

    /// Sets the annotations.
    pub fn annotations(&mut self, annotations: ToolAnnotations) -> &mut Self {
        self.def.annotations = annotations;
        self
    }

    /// Lets (or makes) its calls run as tasks: what `#[tool(task = "...")]` sets.
    pub fn task_support(&mut self, support: TaskSupport) -> &mut Self {
        self.def.task_support = support;
        self
    }

    /// Declares an argument parameter of type `T`.
    pub fn argument<T: JsonSchema + DeserializeOwned>(&mut self, meta: &ParamMeta<T>) -> &mut Self {
        let mut property = schema::subschema::<T>(&mut self.generator);
        let optional = meta.default.is_some() || from_null::<T>().is_some();
        if optional {
            schema::strip_null(&mut property);
        } else {
            self.required.push(Value::from(meta.name));
        }
        if let Some(description) = meta.description {
            property.insert("description".into(), Value::from(description));
        }
        if let Some(default) = meta.default_json {
            match default() {
                Ok(default) => {
                    property.insert("default".into(), default);
                }
                Err(problem) => self
                    .def
                    .metadata
                    .problems
                    .push(format!("argument `{}`: {problem}", meta.name)),
            }
        }
        if let Some(examples) = meta.examples {
            match examples().into_iter().collect::<Result<Vec<_>, _>>() {
                Ok(examples) => {
                    property.insert("examples".into(), Value::Array(examples));
                }
                Err(problem) => self
                    .def
                    .metadata
                    .problems
                    .push(format!("argument `{}`: {problem}", meta.name)),
            }
        }
        if let Some(header) = meta.header {
            let kind = property.get("type").and_then(Value::as_str);
            if !matches!(kind, Some("string" | "integer" | "boolean")) {
                self.def.metadata.problems.push(format!(
                    "argument `{}` has `header = \"{header}\"`, but only string, integer and \
                     boolean arguments can travel in a header",
                    meta.name
                ));
            }
            property.insert(X_MCP_HEADER.into(), Value::from(header));
        }
        if self
            .properties
            .insert(meta.name.to_owned(), Value::Object(property))
            .is_some()
        {
            self.def.metadata.problems.push(format!(
                "two parameters take the argument name `{}`",
                meta.name
            ));
        } else {
            self.names.push(meta.name);
        }
        self
    }

    /// Sets the input schema verbatim (it must have `"type": "object"`); it is sent exactly as
    /// given, and the handler reads the arguments with [`ToolCall::take_arguments`].
    pub fn raw_input_schema(&mut self, schema: Value) -> &mut Self {
        match schema {
            Value::Object(schema)
                if schema.get("type").and_then(Value::as_str) == Some("object") =>
            {
                self.def.input_schema = schema;
                self.def.raw_input_schema = true;
                self.def.takes_args_struct = true;
            }
            _ => self
                .def
                .metadata
                .problems
                .push("a raw input schema is an object with `\"type\": \"object\"`".to_owned()),
        }
        self
    }

    /// Sets the output schema verbatim: sent exactly as given, never rewritten (a proxied
    /// tool's, as its upstream lists it).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn raw_output_schema(&mut self, schema: Map<String, Value>) -> &mut Self {
        self.def.output_schema = Some(schema);
        self.def.raw_output_schema = true;
        self
    }

    /// Serves the calls with `relay`, which may answer with a JSON-RPC error, instead of the
    /// handler given to [`new`](Self::new).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn relay(&mut self, relay: RelayHandler) -> &mut Self {
        self.def.relay = Some(relay);
        self
    }

    /// Declares that the whole arguments object is one `T` (`Args<T>`).
    pub fn args_struct<T: JsonSchema>(&mut self) -> &mut Self {
        if self.args_struct.is_some() {
            self.def
                .metadata
                .problems
                .push("a tool takes at most one `Args<T>` parameter".to_owned());
        }
        self.args_struct = Some(schema::root_schema::<T>());
        self
    }

    /// The input and output schemas of a tool described elsewhere (an OpenAPI operation): the
    /// input taken like an `Args<T>`'s (the handler reads the arguments whole), the output an
    /// object's; both made portable on the wire like every other tool's.
    #[cfg(feature = "openapi")]
    pub(crate) fn described_schemas(
        &mut self,
        input: Map<String, Value>,
        output: Option<Map<String, Value>>,
    ) -> &mut Self {
        self.args_struct = Some(input);
        if let Some(output) = output {
            self.def.output = OutputShape::Object;
            self.def.output_schema = Some(output);
        }
        self
    }

    /// The return type's JSON is the output: record its schema and shape.
    pub fn structured_output<T: JsonSchema>(&mut self) -> &mut Self {
        let mut root = schema::root_schema::<T>();
        root.remove("title");
        if schema::is_object(&root) {
            self.def.output = OutputShape::Object;
            self.def.output_schema = Some(root);
        } else {
            let defs = root.remove("$defs");
            let mut wrapper = Map::with_capacity(4);
            wrapper.insert("type".into(), Value::from("object"));
            let result = Map::from_iter([("result".to_owned(), Value::Object(root))]);
            wrapper.insert("properties".into(), Value::Object(result));
            wrapper.insert("required".into(), Value::Array(vec![Value::from("result")]));
            if let Some(defs) = defs {
                wrapper.insert("$defs".into(), defs);
            }
            self.def.output = OutputShape::Wrapped;
            self.def.output_schema = Some(wrapper);
        }
        self
    }

    /// Finishes the definition.
    pub fn build(mut self) -> ToolDef {
        if !self.def.raw_input_schema {
            self.finish_input_schema();
        }
        self.def.header_params = header_params(&self.def.input_schema);
        self.def
    }

    fn finish_input_schema(&mut self) {
        if let Some(args) = self.args_struct.take() {
            if !self.properties.is_empty() {
                self.def
                    .metadata
                    .problems
                    .push("`Args<T>` must be the tool's only argument parameter".to_owned());
            }
            if args.get("type").and_then(Value::as_str) != Some("object") {
                self.def
                    .metadata
                    .problems
                    .push("the `T` of `Args<T>` must have an object schema (a struct)".to_owned());
            }
            self.def.input_schema = args;
            self.def.takes_args_struct = true;
        } else {
            let mut input = Map::with_capacity(5);
            input.insert("type".into(), Value::from("object"));
            self.def.argument_names = self.names.as_slice().into();
            input.insert(
                "properties".into(),
                Value::Object(std::mem::take(&mut self.properties)),
            );
            if !self.required.is_empty() {
                input.insert(
                    "required".into(),
                    Value::Array(std::mem::take(&mut self.required)),
                );
            }
            input.insert("additionalProperties".into(), Value::Bool(false));
            let defs = self.generator.take_definitions(true);
            if !defs.is_empty() {
                input.insert("$defs".into(), Value::Object(defs));
            }
            self.def.input_schema = input;
        }
    }
}

/// Converts one argument of a call; errors are recorded on the call and `None` returned.
pub(crate) fn extract_argument<T: DeserializeOwned>(
    call: &mut ToolCall,
    meta: &ParamMeta<T>,
) -> Option<T> {
    let value = match take_argument(call, meta.name) {
        None => match meta.default {
            Some(default) => return Some(default()),
            None => match from_null::<T>() {
                Some(value) => return Some(value),
                None => {
                    call.record(format!("missing required argument `{}`", meta.name));
                    return None;
                }
            },
        },
        Some(Value::Null) if meta.default.is_some() => return meta.default.map(|d| d()),
        Some(value) => value,
    };
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(value) => Some(value),
        Err(error) => {
            let path = error.path().to_string();
            let inner = describe_deserialize_error(error.inner());
            let at = if path == "." {
                format!("`{}`", meta.name)
            } else {
                format!("`{}.{path}`", meta.name)
            };
            call.record(format!("invalid value for argument {at}: {inner}"));
            None
        }
    }
}

// The positions taken in a list of arguments fit in `ToolCall::taken`.
const _: () = assert!(LISTED <= 32);

/// The argument `name`, taken out of the call's arguments. A tool has a few parameters, and a
/// few name comparisons cost less than hashing the name: the value is taken where it is,
/// `null` left in its place and its position marked taken, so the list is not rebuilt. A call
/// with many arguments (thousands of unknown ones) has them in a map, looked up by hash, so
/// each parameter costs one lookup, not a scan.
fn take_argument(call: &mut ToolCall, name: &str) -> Option<Value> {
    let list = match &mut call.arguments {
        Object::Map(map) => return map.remove(name),
        Object::List(list) => list,
    };
    let taken = call.taken;
    let (at, (_, value)) = list
        .iter_mut()
        .enumerate()
        .find(|(at, (key, _))| key.is(name) && !is_taken(taken, *at))?;
    call.taken |= 1 << at;
    Some(std::mem::take(value))
}

/// Whether the argument at `at` is marked taken in `taken`.
fn is_taken(taken: u32, at: usize) -> bool {
    at < 32 && taken & (1 << at) != 0
}

/// What an absent argument of type `T` stands for: `T` deserialized from `null`, as
/// `T::deserialize(Value::Null)` would give it (`None` for an `Option`, `()`, `Value::Null`), or
/// `None` when `T` needs a value. Unlike that call, a type that refuses `null` costs no error
/// message, and every argument asks when the server is built.
pub(crate) fn from_null<T: DeserializeOwned>() -> Option<T> {
    T::deserialize(Null).ok()
}

/// `Value::Null` as a deserializer: it accepts exactly what serde_json's `Value::Null` does,
/// method by method, and fails with [`NotNull`].
struct Null;

/// Why [`Null`] failed; the message serde would make is dropped unformatted.
#[derive(Debug)]
struct NotNull;

impl fmt::Display for NotNull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the type does not accept null")
    }
}

impl std::error::Error for NotNull {}

impl serde::de::Error for NotNull {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self
    }
}

/// Deserializer methods that refuse `null`, as `Value::Null`'s do.
macro_rules! refuse_null {
    ($($method:ident($($arg:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $(_: $arg,)* _: V) -> Result<V::Value, NotNull> {
            Err(NotNull)
        }
    )*};
}

impl<'de> Deserializer<'de> for Null {
    type Error = NotNull;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NotNull> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NotNull> {
        visitor.visit_none()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, NotNull> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! { unit unit_struct ignored_any }

    refuse_null! {
        deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_i128(); deserialize_u8(); deserialize_u16();
        deserialize_u32(); deserialize_u64(); deserialize_u128(); deserialize_f32();
        deserialize_f64(); deserialize_char(); deserialize_str(); deserialize_string();
        deserialize_bytes(); deserialize_byte_buf(); deserialize_seq(); deserialize_map();
        deserialize_identifier(); deserialize_tuple(usize);
        deserialize_tuple_struct(&'static str, usize);
        deserialize_struct(&'static str, &'static [&'static str]);
        deserialize_enum(&'static str, &'static [&'static str]);
    }
}

/// Converts the whole arguments object into `T` (`Args<T>`).
pub(crate) fn extract_args_struct<T: DeserializeOwned>(call: &mut ToolCall) -> Option<T> {
    let arguments = Value::Object(call.take_arguments());
    match serde_path_to_error::deserialize::<_, T>(arguments) {
        Ok(value) => Some(value),
        Err(error) => {
            let path = error.path().to_string();
            let inner = describe_deserialize_error(error.inner());
            if path == "." {
                call.record(inner);
            } else {
                call.record(format!(
                    "invalid value for argument `{}`: {inner}",
                    echo(&path)
                ));
            }
            None
        }
    }
}

/// The result of a structured return value, shaped as the tool's definition says.
/// A typed return value's reply: written once as JSON when the call's response is written
/// straight from it, else the [`CallToolResult`] of [`value_result`].
pub(crate) fn structured_reply<T: Serialize>(value: T, call: &ToolCall) -> ToolReply {
    match call.direct {
        true => json_reply(value, &call.tool, call.output),
        false => ToolReply::Result(value_result(value, &call.tool, call.output)),
    }
}

/// [`structured_reply`] of a call whose response is written straight from it.
fn json_reply<T: Serialize>(value: T, tool: &str, output: OutputShape) -> ToolReply {
    if output == OutputShape::Content {
        return ToolReply::Result(value_result(value, tool, output));
    }
    match serde_json::to_string(&value) {
        Ok(json) => ToolReply::Json(JsonReply {
            json,
            wrapped: output == OutputShape::Wrapped,
            structured: true,
        }),
        Err(error) => ToolReply::Result(unserializable(tool, &error)),
    }
}

/// A typed return value as a [`CallToolResult`], its `structuredContent` in `output`'s shape.
fn value_result<T: Serialize>(value: T, tool: &str, output: OutputShape) -> CallToolResult {
    // The text by `to_string`: what `Display` writes, without the formatter in between.
    let serialized = serde_json::to_value(value)
        .and_then(|json| serde_json::to_string(&json).map(|text| (json, text)));
    match serialized {
        Ok((json, text)) => shaped_result(json, text, output),
        Err(error) => unserializable(tool, &error),
    }
}

/// A structured result: `text` as its one text block, `json` as `structuredContent` in `output`'s
/// shape.
fn shaped_result(json: Value, text: String, output: OutputShape) -> CallToolResult {
    let structured = match output {
        // Built directly: `json!` would copy `json` through `to_value`.
        OutputShape::Wrapped => {
            let mut wrapped = Map::with_capacity(1);
            wrapped.insert("result".to_owned(), json);
            Value::Object(wrapped)
        }
        OutputShape::Object | OutputShape::Content => json,
    };
    CallToolResult {
        content: vec![Content::text(text)],
        structured_content: Some(structured),
        is_error: false,
        meta: None,
    }
}

/// The tool error of a return value serde refused (a map with non-string keys, a failing
/// `Serialize`): logged whole, named to the client without the details.
fn unserializable(tool: &str, error: &serde_json::Error) -> CallToolResult {
    tracing::error!(%tool, %error, "a tool's return value could not be serialized");
    if tool.is_empty() {
        CallToolResult::error("the tool produced a result that could not be serialized")
    } else {
        CallToolResult::error(format!(
            "tool `{tool}` produced a result that could not be serialized"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_response_written_directly_is_what_serde_writes() {
        use crate::protocol::{Annotations, encode_response};
        let mut annotated = Text::new("hi");
        annotated.annotations = Some(Annotations::default());
        let meta: Map<String, Value> = serde_json::from_str(r#"{"k":[1,"\u00e9"]}"#).unwrap();
        let results = [
            CallToolResult::default(),
            CallToolResult::success(["5"]),
            CallToolResult::success(["a \"quoted\"\n line", "é ✓ \u{1}", ""]),
            CallToolResult {
                content: vec![Content::text("{\"result\":5}")],
                structured_content: Some(serde_json::json!({"result": 5, "z": [1.5, null, "x"]})),
                is_error: false,
                meta: None,
            },
            CallToolResult {
                is_error: true,
                meta: Some(meta.clone()),
                ..CallToolResult::error("went wrong")
            },
            CallToolResult {
                content: vec![Content::Text(annotated), Content::text("plain")],
                ..CallToolResult::default()
            },
        ];
        for id in [RequestId::Number(7), RequestId::String("a\"b".into())] {
            for result in &results {
                assert_eq!(
                    String::from_utf8(encode_tool_response(
                        &id,
                        &ToolReply::Result(result.clone())
                    ))
                    .unwrap(),
                    String::from_utf8(encode_response(&id, result)).unwrap(),
                );
            }
        }
    }

    /// A typed return value written once as JSON goes out as the `CallToolResult` built from
    /// it would, byte for byte, for every shape and revision; and the result made back from it
    /// is that one.
    #[test]
    fn a_typed_result_written_as_json_is_the_result_it_stands_for() {
        use crate::protocol::encode_response;
        #[derive(Serialize)]
        struct Found {
            name: &'static str,
            score: f64,
            tags: Vec<&'static str>,
            note: Option<String>,
        }
        let found = || Found {
            name: "a \"quoted\"\n é ✓ \u{1}",
            score: 0.1 + 0.2,
            tags: vec!["x", ""],
            note: None,
        };
        let versions = [
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
        ];
        for id in [RequestId::Number(7), RequestId::String("a\"b".into())] {
            for version in versions {
                let cases = [
                    (
                        json_reply(found(), "t", OutputShape::Object),
                        value_result(found(), "t", OutputShape::Object),
                    ),
                    (
                        json_reply(-12_i64, "t", OutputShape::Wrapped),
                        value_result(-12_i64, "t", OutputShape::Wrapped),
                    ),
                    (
                        json_reply(vec![found()], "t", OutputShape::Wrapped),
                        value_result(vec![found()], "t", OutputShape::Wrapped),
                    ),
                ];
                for (reply, built) in cases {
                    assert!(matches!(reply, ToolReply::Json(_)));
                    let reply = reply.for_version(version);
                    let built = built.for_version(version);
                    assert_eq!(
                        String::from_utf8(encode_tool_response(&id, &reply)).unwrap(),
                        String::from_utf8(encode_response(&id, &built)).unwrap(),
                    );
                    assert_eq!(reply.into_result(), built);
                }
            }
        }
    }

    #[test]
    fn serde_type_names_become_schema_words() {
        let err = serde_json::from_value::<i64>(Value::from("x")).unwrap_err();
        assert_eq!(
            describe_deserialize_error(&err),
            "invalid type: string \"x\", expected an integer"
        );
        let err = serde_json::from_value::<bool>(Value::from(1)).unwrap_err();
        assert_eq!(
            describe_deserialize_error(&err),
            "invalid type: integer `1`, expected a boolean"
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct MaybeCount(Option<u32>);

    #[derive(Deserialize)]
    struct Marker;

    #[derive(Default, Deserialize)]
    #[serde(default)]
    #[allow(dead_code)]
    struct Defaults {
        x: i64,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum NumberOrNothing {
        Number(i64),
        Nothing(()),
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Choice {
        A,
        B(i64),
    }

    /// `from_null` and `Value::Null` agree on which types an absent argument can be.
    #[test]
    fn null_is_accepted_exactly_where_json_null_is() {
        fn agree<T: DeserializeOwned>(accepts: bool) {
            let json = T::deserialize(Value::Null).is_ok();
            let ours = from_null::<T>().is_some();
            let name = std::any::type_name::<T>();
            assert_eq!(json, accepts, "serde_json on {name}");
            assert_eq!(ours, accepts, "from_null on {name}");
        }
        agree::<Option<i64>>(true);
        agree::<Option<Vec<String>>>(true);
        agree::<()>(true);
        agree::<Value>(true);
        agree::<MaybeCount>(true);
        agree::<Marker>(true);
        agree::<NumberOrNothing>(true);
        agree::<i64>(false);
        agree::<u128>(false);
        agree::<f64>(false);
        agree::<bool>(false);
        agree::<char>(false);
        agree::<String>(false);
        agree::<Vec<i64>>(false);
        agree::<(i64, i64)>(false);
        agree::<std::collections::HashMap<String, i64>>(false);
        agree::<Defaults>(false);
        agree::<Choice>(false);
        agree::<Map<String, Value>>(false);
    }

    #[test]
    fn results_lose_structured_content_before_2025_06_18() {
        let result = CallToolResult {
            content: vec![Content::text("1")],
            structured_content: Some(serde_json::json!({"result": 1})),
            ..Default::default()
        };
        assert!(
            result
                .clone()
                .for_version(ProtocolVersion::V2025_03_26)
                .structured_content
                .is_none()
        );
        assert!(
            result
                .for_version(ProtocolVersion::V2025_06_18)
                .structured_content
                .is_some()
        );
    }
}
