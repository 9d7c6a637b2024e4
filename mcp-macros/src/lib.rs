//! The attribute macros of [`mcp-runtime`](https://docs.rs/mcp-runtime): `#[tool]`,
//! `#[resource]`, `#[prompt]`, `#[server]` and `#[derive(Elicit)]`.
//!
//! Depend on `mcp-runtime`, which re-exports them (default feature `macros`); its crate docs are
//! the guide. The code the macros generate names `::mcp_runtime` (or the path given with
//! `crate = "..."`), so this crate is not meant to be used on its own.
//!
//! Every attribute takes a closed set of keys, listed on each macro below. An unknown or
//! repeated key is a compile error that lists the accepted ones, and every mistake in one item is
//! reported in the same build.

#![deny(missing_docs)]

mod expand;
mod internals;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Add two integers.
/// #[tool(read_only, idempotent, open_world = false)]
/// async fn add(
///     /// The first addend.
///     a: i64,
///     /// The second addend.
///     b: i64,
/// ) -> i64 {
///     a + b
/// }
/// ```
///
/// The function may be `async` or not, and may not be generic. `///` on the function is the
/// tool's `description`; `///` on a parameter is its property's `description` in `inputSchema`.
///
/// A sync (non-`async`) tool runs on tokio's blocking pool (`spawn_blocking`), so one that blocks
/// (file I/O, a blocking client, long computation) does not hold up the other requests of its
/// connection; its parameters and return type must then be `Send + 'static`. A panic in it is a
/// tool error, as in an `async` tool. `#[tool(inline)]` runs a trivial sync tool on the
/// request's task instead, saving the hand-off to another thread (and the `Send` bound: a type
/// holding an `Rc` needs it); `inline` on an `async fn` is a compile error.
///
/// # Keys of `#[tool(..)]`
///
/// | key | value | on the wire |
/// |---|---|---|
/// | `name` | string | `name` (default: the function's name, `r#` stripped); checked at compile time: 1-64 characters of `A-Z a-z 0-9 _ - .` |
/// | `title` | string | `title` |
/// | `description` | string | `description`, instead of the doc comment |
/// | `read_only` | flag | `annotations.readOnlyHint` |
/// | `destructive` | flag | `annotations.destructiveHint` |
/// | `idempotent` | flag | `annotations.idempotentHint` |
/// | `open_world` | flag | `annotations.openWorldHint` |
/// | `icons` | a list of `&str`/`String` URLs or `Icon`s | `icons` |
/// | `meta` | an expression that serializes to a JSON object | `_meta` |
/// | `inline` | flag, sync functions only | nothing: the tool runs on the request's task, not on the blocking pool |
/// | `ui` | string, a `ui://` URI | `_meta.ui.resourceUri` and `visibility: ["model", "app"]`: the MCP Apps page the host renders for the tool; the server refuses to build when it does not serve that page |
/// | `crate` | string, a path | where the runtime is (default `::mcp_runtime`) |
///
/// A flag written bare (`read_only`) is `true`; `read_only = false` says `false` explicitly.
///
/// # Parameters
///
/// A parameter whose type implements `FromContext` (`Context`, `RequestId`, `ProtocolVersion`,
/// `Meta`, `ClientInfo`, `ServerHandle`, or your own) is injected and never in the schema. Every
/// other parameter is an argument and must implement `Deserialize` and `JsonSchema`;
/// `Option<T>` is optional. `Args(x): Args<T>` takes the whole arguments object as one `T`.
/// `#[arg(..)]` on an argument takes:
///
/// | key | value | effect |
/// |---|---|---|
/// | `rename` | string | the argument's wire name |
/// | `description` | string | the property's `description`, instead of the doc comment |
/// | `default` | expression | not `required`; the value is in the schema as `default` and used when the argument is absent |
/// | `example` | expression (repeatable) | one entry of the property's `examples` |
/// | `complete` | a function path | only on `#[prompt]` arguments and `#[resource]` variables: see `#[prompt]` |
///
/// # Return type
///
/// A type that implements `Serialize` and `JsonSchema` gives the tool an `outputSchema` and each
/// result a `structuredContent` (scalars, lists and enums wrapped as `{"result": ...}`) with the
/// same JSON as a text block. `String`, `&'static str` and `()` are text (none for `()`);
/// `Content`, `Image`, `Audio`, `ResourceLink`, `EmbeddedResource`, `Vec<Content>` and
/// `CallToolResult` are sent as they are. `Result<T, E>` with `E: Display` sends `Err(e)` as a
/// tool error (`isError: true`).
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), input.into()).into()
}

/// Turns a function into an MCP resource (a URI without `{}`) or resource template (an RFC 6570
/// URI template, levels 1-4).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// The application's settings.
/// #[resource("config://app", mime_type = "application/json")]
/// async fn settings() -> serde_json::Value {
///     serde_json::json!({"theme": "dark"})
/// }
///
/// /// One day of the log.
/// #[resource("logs://{day}{?level}", mime_type = "text/plain", list = recent_days)]
/// async fn day_log(day: u32, level: Option<String>) -> Result<String, ResourceError> {
///     match day {
///         1..=31 => Ok(format!("day {day}, level {}", level.as_deref().unwrap_or("all"))),
///         _ => Err(ResourceError::NotFound),
///     }
/// }
///
/// fn recent_days() -> Vec<ResourceInfo> {
///     vec![ResourceInfo::new("logs://1", "day-1")]
/// }
/// ```
///
/// The URI comes first, as a string literal. A template is checked at compile time against the
/// function: every variable must be a parameter and every argument parameter a variable; a query
/// variable (`{?q}`, `{&q}`) must be `Option<T>` or `#[arg(default = ..)]`; an exploded one
/// (`{/path*}`) a `Vec<T>`. Values are percent-decoded and parsed with `FromStr`. Parameters may
/// take `#[arg(default = .., complete = ..)]`.
///
/// # Keys of `#[resource("uri", ..)]`
///
/// | key | value | on the wire |
/// |---|---|---|
/// | `name` | string | `name` (default: the function's name) |
/// | `title` | string | `title` |
/// | `description` | string | `description`, instead of the doc comment |
/// | `mime_type` | string | `mimeType` of the listing and of the contents read |
/// | `size` | integer | `size`, in bytes |
/// | `audience` | a list of `"user"` and `"assistant"` | `annotations.audience` |
/// | `priority` | a number from 0 to 1 | `annotations.priority` |
/// | `last_modified` | string, an ISO 8601 time | `annotations.lastModified` |
/// | `icons` | a list of URLs or `Icon`s | `icons` |
/// | `meta` | an expression that serializes to a JSON object | `_meta` |
/// | `list` | a function path: `f()` or, in a `#[server]`, `f(&self)`, plain or `async`, returning `Vec<ResourceInfo>` | the template's instances, added to `resources/list` |
/// | `allow_traversal` | flag | accept variable values that escape a root (`..`, absolute paths, NUL), refused by default |
/// | `crate` | string, a path | where the runtime is |
///
/// # Return type
///
/// `String` or `&'static str` (text), `Vec<u8>` or `Blob` (base64 `blob`), any other
/// `T: Serialize` (JSON text), `ResourceContents` or a `Vec` of them; each may be wrapped in
/// `Result<_, ResourceError>` (`ResourceError::NotFound` is the spec's not-found error).
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::resource::expand(args.into(), input.into()).into()
}

/// Turns a function into an MCP prompt.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// fn languages(prefix: &str, _: &CompletionContext) -> Vec<String> {
///     ["python", "rust", "typescript"]
///         .into_iter()
///         .filter(|l| l.starts_with(prefix))
///         .map(str::to_owned)
///         .collect()
/// }
///
/// /// Review a piece of code.
/// #[prompt(title = "Code review")]
/// fn code_review(
///     /// The code to review.
///     code: String,
///     /// The language it is written in.
///     #[arg(complete = languages)]
///     language: Option<String>,
/// ) -> Vec<PromptMessage> {
///     let language = language.unwrap_or_default();
///     vec![PromptMessage::user(format!("Review this {language} code:\n{code}"))]
/// }
/// ```
///
/// Prompt arguments are strings on the wire: a parameter of any `FromStr` type is parsed from
/// its string (a failure is an invalid-params error naming the argument), `Option<T>` and
/// `#[arg(default = ..)]` are optional. `#[arg(complete = f)]`, where
/// `f(prefix: &str, context: &CompletionContext) -> impl IntoCompletions`, answers
/// `completion/complete` for that argument (also on a `#[resource]` template variable); an
/// argument whose type is an enum completes from its values with no code. `#[arg(rename = ..)]`
/// and `#[arg(description = ..)]` work as on a tool. Return `String` or `&'static str` (one user
/// message), `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result` of one
/// (`Err(e)` is an invalid-params error with `e`'s message).
///
/// # Keys of `#[prompt(..)]`
///
/// | key | value | on the wire |
/// |---|---|---|
/// | `name` | string | `name` (default: the function's name) |
/// | `title` | string | `title` |
/// | `description` | string | `description`, instead of the doc comment |
/// | `icons` | a list of URLs or `Icon`s | `icons` |
/// | `meta` | an expression that serializes to a JSON object | `_meta` |
/// | `inline` | flag, sync functions only | nothing: the tool runs on the request's task, not on the blocking pool |
/// | `crate` | string, a path | where the runtime is |
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::prompt::expand(args.into(), input.into()).into()
}

/// Makes the `#[tool]`, `#[resource]` and `#[prompt]` methods of an impl block one server that
/// shares `&self`.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use mcp_runtime::prelude::*;
///
/// #[derive(Default)]
/// struct Counter {
///     count: AtomicU64,
/// }
///
/// #[server(name = "counter", instructions = "Call `bump` to count.")]
/// impl Counter {
///     /// Add one and return the new count.
///     #[tool]
///     async fn bump(&self) -> u64 {
///         self.count.fetch_add(1, Ordering::Relaxed) + 1
///     }
///
///     /// The current count.
///     #[resource("counter://value")]
///     fn value(&self) -> String {
///         self.count.load(Ordering::Relaxed).to_string()
///     }
/// }
///
/// // Counter::default().into_server().serve_stdio().await
/// let server: Server = Counter::default().into_server();
/// ```
///
/// The type implements `McpServer`: `into_server()` makes a `Server` described by the attribute,
/// and `Server::with(value)` adds the items to another server. Methods take `&self` or no
/// receiver; methods without one of the three attributes are left as they are. The inner
/// attributes take the same keys as on free functions.
///
/// # Keys of `#[server(..)]`
///
/// | key | value | on the wire |
/// |---|---|---|
/// | `name` | string | `serverInfo.name` (default: the crate's name) |
/// | `version` | string | `serverInfo.version` (default: the crate's version) |
/// | `title` | string | `serverInfo.title` |
/// | `description` | string | `serverInfo.description` |
/// | `website_url` | string | `serverInfo.websiteUrl` |
/// | `icons` | a list of URLs or `Icon`s | `serverInfo.icons` |
/// | `instructions` | string | `instructions` |
/// | `crate` | string, a path | where the runtime is |
#[proc_macro_attribute]
pub fn server(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::server::expand(args.into(), input.into()).into()
}

/// Embeds a directory of agent skills (SEP-2640), checked when the crate compiles.
///
/// ```ignore
/// let server = Server::new("demo", "1.0.0").skills(mcp_runtime::skills!("skills"));
/// ```
///
/// The path is resolved like `include_bytes!`'s: relative to the file the macro is called in;
/// it may not be absolute or leave that directory with `..`. Each directory below it holding a
/// `SKILL.md` is a skill, served at `skill://<its path>/SKILL.md` with every file under it. A
/// compile error, at the string, for: a directory with files but no `SKILL.md`; frontmatter
/// that is missing or not understood, without a non-empty `name` or `description`; a name that
/// breaks the naming rules (1-64 of `a-z 0-9 -`) or differs from its directory; a skill over
/// 512 files or 16 MiB; a symbolic link leaving the directory (or to a directory); a file name
/// that cannot be a URI segment. Every file is embedded with `include_bytes!`, so changing one
/// rebuilds the crate. A file *added* to the directory is seen at the next build of the crate;
/// to make adding one trigger that build, give the crate a `build.rs` with
/// `println!("cargo:rerun-if-changed=src/skills");` (the directory, relative to the crate).
#[cfg(feature = "skills")]
#[proc_macro]
pub fn skills(input: TokenStream) -> TokenStream {
    let file = proc_macro::Span::call_site().local_file();
    expand::skills::expand(input.into(), file).into()
}

/// Generates tools from an OpenAPI 3.0 or 3.1 description, read and checked when the crate
/// compiles: one typed `async fn` and one tool per selected operation.
///
/// ```ignore
/// mod petstore {
///     mcp_runtime::openapi!("petstore.yaml", include_tags = ["pets"], prefix = "petstore_");
/// }
/// // petstore::API.configure(Upstream::new(base_url)?)?; then serve as usual.
/// ```
///
/// The path is resolved like `include_bytes!`'s, relative to the file the macro is called in;
/// JSON or YAML, with `$ref`s into the same or other local files. Beside the call it declares
/// `pub static API: mcp_runtime::openapi::Api` and, per operation, `pub async fn
/// <operation_id in snake case>(ctx: &Context, <arguments>) -> Result<openapi::Response,
/// ToolError>` plus its tool's registration. Call it once per module. The crate docs of
/// `mcp_runtime::openapi` and the guide's *`openapi!`* chapter (`guide/src/openapi.md`) say what each part of a
/// description becomes.
///
/// # Keys of `openapi!("file", ..)`
///
/// | key | value | effect |
/// |---|---|---|
/// | `include_tags`, `include_paths`, `include_operations` | lists of strings | only the operations with one of these tags, a path matching one of these patterns (`*` matches any run of characters), or one of these `operationId`s (or generated names); with several lists, an operation in any of them |
/// | `exclude_tags`, `exclude_paths`, `exclude_operations` | lists of strings | leaves those operations out, after the includes |
/// | `prefix` | string | put before every tool name (`prefix = "gh_"`) |
/// | `replace` | list of strings | those operations get their function but no tool: write the tool by hand, calling the function |
/// | `output_schemas` | flag | `output_schemas = false` leaves out every `outputSchema` (and `structuredContent`) |
/// | `crate` | string, a path | where the runtime is |
///
/// A compile error, at the string or at the entry at fault, naming the file and the JSON
/// pointer: a file that cannot be read or parsed; a description that is not OpenAPI 3.0 or 3.1;
/// a `$ref` to a URL or to nothing; an unsupported construct (cookie parameters, `matrix` and
/// `label` styles, request bodies that are not JSON, form or text, recursive `$ref`s outside
/// `components/schemas`, ..), named; two operations giving one tool name; a parameter name
/// that cannot be an argument (1-64 of `A-Z a-z 0-9 _ . -`); a filter entry that matches no
/// operation. Every file read is tracked with `include_bytes!`, so editing it rebuilds the
/// crate.
///
/// # `$ref`s
///
/// Every `$ref` in the description, and in every file its `$ref`s reach, must point at
/// something, whether a selected operation reads it or not: a `$ref` to nothing in an excluded
/// operation, an XML media type or a component nothing uses is a mistake in the description
/// all the same, and the tools that read a whole description (validators, generators) refuse
/// it too.
/// The error names where the `$ref` is written, as `file:line:column` and the JSON pointer
/// (`api.yaml:14:21 at /paths/~1pets/get/parameters/0`), and names at most 20 broken `$ref`s
/// in one build. What is a reference follows OpenAPI: the values of `example`, `examples` (a
/// schema's list), `default`, `const`, `enum`, an Example's `value` and `x-` extensions are
/// data, not searched; under maps keyed by names (`properties`, `responses`, `content`,
/// `components/schemas`, ..) a key is a name, so a response called `default` is searched. A
/// `$ref` is read relative to the file it is written in (a schema's `$id` does not change
/// that). No URL is fetched: a `$ref` to a URL (any URI with a scheme), or to an anchor
/// (`#name`), is an error where a selected operation needs it and left alone elsewhere.
#[cfg(feature = "openapi")]
#[proc_macro]
pub fn openapi(input: TokenStream) -> TokenStream {
    let file = proc_macro::Span::call_site().local_file();
    expand::openapi::expand(input.into(), file).into()
}

/// Derives `Elicit` for a struct (the form `ctx.elicit::<T>(..)` asks the user to fill in) or
/// `ElicitEnum` for a fieldless enum (a choice, usable as a field).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// #[derive(Deserialize, Elicit)]
/// #[serde(rename_all = "lowercase")]
/// enum Size {
///     #[elicit(title = "Small (25 cl)")]
///     Small,
///     #[elicit(title = "Large (50 cl)")]
///     Large,
/// }
///
/// #[derive(Deserialize, Elicit)]
/// struct Order {
///     /// Who the order is for.
///     #[elicit(min_length = 1, max_length = 40)]
///     name: String,
///     #[elicit(format = "email")]
///     email: Option<String>,
///     #[elicit(minimum = 1, maximum = 10, default = 1)]
///     cups: u8,
///     size: Size,
///     #[elicit(default = false)]
///     takeaway: bool,
/// }
/// ```
///
/// A form is flat: each field is a `String`, an integer, `f32`/`f64`, `bool`, a fieldless enum
/// with `#[derive(Elicit)]` (single choice) or a `Vec` of one (multiple choice), optionally in an
/// `Option`. Any other field type,
/// a nested struct for one, does not compile, with the error at the field. `Option` fields and
/// fields with a `default` are not `required`. Wire names follow `#[serde(rename_all)]` and
/// `#[serde(rename)]`; `///` on a field is its `description`.
///
/// # Keys of `#[elicit(..)]` on a struct field
///
/// | key | value | in `requestedSchema` |
/// |---|---|---|
/// | `rename` | string | the field's wire name |
/// | `title` | string | `title` |
/// | `description` | string | `description`, instead of the doc comment |
/// | `min_length`, `max_length` | integer | `minLength`, `maxLength` of a string |
/// | `format` | `"email"`, `"uri"`, `"date"` or `"date-time"` | `format` of a string |
/// | `minimum`, `maximum` | number | `minimum`, `maximum` of a number |
/// | `min_items`, `max_items` | integer | `minItems`, `maxItems` of a multiple choice |
/// | `default` | expression | `default`; the field is not `required` |
///
/// On an enum: `#[elicit(rename = "..", title = "..")]` on a variant sets its value and its
/// display title, and `#[elicit(enum_names)]` on the enum itself sends the legacy `enumNames`
/// form (`enum` + `enumNames`) instead of `oneOf`; clients before 2025-11-25 get that form
/// anyway.
#[proc_macro_derive(Elicit, attributes(elicit))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    expand::elicit::expand(input.into()).into()
}
