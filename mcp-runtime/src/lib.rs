//! Write [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust by annotating
//! plain functions. The signature is the schema, the doc comments are the descriptions, and the
//! compiler checks what other SDKs check at run time.
//!
//! This page is the API reference's overview, from a first tool to a deployed HTTP server: each
//! section's example compiles and, apart from the ones that serve forever, runs as a test. The
//! user guide, with a chapter for each of these and for deployment, testing, troubleshooting and
//! coming from rmcp or FastMCP, is the `guide/` folder of the repository: read its Markdown in
//! `guide/src/`, or run `mdbook serve guide` for the book.
//!
//! - [A first tool](#a-first-tool)
//! - [Arguments and schemas](#arguments-and-schemas)
//! - [Structured output and errors](#structured-output-and-errors)
//! - [Resources and templates](#resources-and-templates)
//! - [Prompts](#prompts)
//! - [Completion](#completion)
//! - [Servers with state: `#[server]`](#servers-with-state-server)
//! - [Context: logging, progress, cancellation, questions to the client](#context-logging-progress-cancellation-questions-to-the-client)
//! - [Both protocol eras](#both-protocol-eras)
//! - [Streamable HTTP](#streamable-http)
//! - [Middleware and telemetry](#middleware-and-telemetry)
//! - [Testing](#testing)
//! - [An MCP client](#an-mcp-client)
//! - [Gateways: mount and proxy](#gateways-mount-and-proxy)
//! - [Existing HTTP APIs: `openapi!`](#existing-http-apis-openapi)
//! - [Cargo features](#cargo-features)
//!
//! # A first tool
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//!
//! /// Add two integers.
//! #[tool(read_only, idempotent)]
//! async fn add(
//!     /// First addend.
//!     a: i64,
//!     /// Second addend.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     Server::new("demo", env!("CARGO_PKG_VERSION")).serve_stdio().await
//! }
//! ```
//!
//! `#[tool]` registers the function at link time, and [`Server::new`] serves every `#[tool]`,
//! `#[resource]` and `#[prompt]` in the binary; [`Server::builder`]`().tool(add)` serves an
//! explicit selection instead. The name is the function's (`name = "..."` overrides it), checked
//! at compile time (1 to 64 characters of `A-Z a-z 0-9 _ - .`); the doc comment is the
//! `description`; `title = ".."`, `read_only`, `destructive`, `idempotent`, `open_world` (each
//! `= false` to say the opposite explicitly), `icons = [..]` and `meta = ..` fill in the rest of
//! the `Tool` (every key: [`macro@tool`]). Over stdio, stdout carries protocol only: log to
//! stderr.
//!
//! A tool may be `async` or not. A sync one runs on tokio's blocking pool
//! (`spawn_blocking`), so it may block (read a file, call a blocking client, compute) without
//! holding up the other requests of its connection, and its `tracing` events still belong to
//! the request; a panic in it is a tool error, as in an `async` one. For a trivial sync tool,
//! `#[tool(inline)]` skips the hand-off to another thread and runs it on the request's task.
//!
//! One trap: a library crate whose items the binary never names is not linked, and its tools are
//! silently missing. Name it once: `use my_tools as _;`.
//!
//! # Arguments and schemas
//!
//! Every parameter whose type implements `Deserialize` and `JsonSchema` is an argument: a
//! property of `inputSchema` (JSON Schema 2020-12 from schemars, made portable: see
//! [`SchemaStyle`]), described by the `///` on the parameter.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Unit {
//!     Celsius,
//!     Fahrenheit,
//! }
//!
//! /// Convert a temperature.
//! #[tool]
//! fn convert(
//!     /// The temperature to convert.
//!     #[arg(example = 21.5)]
//!     value: f64,
//!     /// The unit to convert to.
//!     to: Unit,
//!     /// Decimal places.
//!     #[arg(default = 1)]
//!     precision: u8,
//!     /// Who asks; optional.
//!     #[arg(rename = "askedBy")]
//!     asked_by: Option<String>,
//! ) -> String {
//!     let converted = match to {
//!         Unit::Celsius => (value - 32.0) / 1.8,
//!         Unit::Fahrenheit => value * 1.8 + 32.0,
//!     };
//!     let greeting = asked_by.map(|who| format!("{who}: ")).unwrap_or_default();
//!     format!("{greeting}{converted:.*}", usize::from(precision))
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(Server::builder().tool(convert)).await?;
//! # let tool = &client.list_tools().await?[0];
//! # assert_eq!(tool["inputSchema"]["required"], json!(["value", "to"]));
//! # assert_eq!(tool["inputSchema"]["properties"]["precision"]["default"], 1);
//! # assert_eq!(tool["inputSchema"]["properties"]["to"]["enum"], json!(["celsius", "fahrenheit"]));
//! # assert!(tool["inputSchema"]["properties"]["askedBy"].is_object());
//! # let result = client.call_tool("convert", json!({"value": 100, "to": "celsius"})).await?;
//! # assert_eq!(result.text(), "37.8");
//! # let result = client.call_tool("convert", json!({"value": 100, "to": "kelvin"})).await?;
//! # assert!(result.is_error);
//! # Ok(())
//! # }
//! ```
//!
//! - `Option<T>` and `#[arg(default = expr)]` arguments are not `required`; the default is in
//!   the schema and applied when the argument is absent.
//! - `#[arg(rename = "..")]` sets the wire name, `#[arg(example = ..)]` adds to `examples`.
//! - `Args(x): Args<T>` takes the whole arguments object as one `T` ([`Args`]).
//! - A parameter whose type implements [`FromContext`](context::FromContext), such as
//!   [`Context`], is injected and never in the schema.
//! - Arguments are strict: an argument that is missing, of the wrong type or unknown comes back
//!   as a tool error (`isError: true`) naming it and what was expected, so the model can correct
//!   itself.
//! - A parameter type that is neither does not compile, and the error names what it misses:
//!   "`Point` cannot be a `#[tool]` argument: it does not implement `schemars::JsonSchema`"
//!   (the requirements are the traits of [`bounds`]).
//!
//! # Structured output and errors
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! /// A forecast.
//! #[derive(Serialize, JsonSchema)]
//! struct Forecast {
//!     /// The city.
//!     city: String,
//!     /// Degrees Celsius.
//!     temp_c: f64,
//! }
//!
//! /// Tomorrow's weather in a city.
//! #[tool]
//! async fn forecast(city: String) -> Result<Forecast, ToolError> {
//!     if city.is_empty() {
//!         return Err(ToolError::new("name a city, for example `Paris`"));
//!     }
//!     Ok(Forecast { city, temp_c: 21.5 })
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(Server::builder().tool(forecast)).await?;
//! # assert_eq!(client.list_tools().await?[0]["outputSchema"]["type"], "object");
//! # let ok = client.call_tool("forecast", json!({"city": "Paris"})).await?;
//! # assert_eq!(ok.structured_content, Some(json!({"city": "Paris", "temp_c": 21.5})));
//! # let err = client.call_tool("forecast", json!({"city": ""})).await?;
//! # assert!(err.is_error);
//! # assert_eq!(err.text(), "name a city, for example `Paris`");
//! # Ok(())
//! # }
//! ```
//!
//! - A return type that implements `Serialize` and `JsonSchema` gives the tool an
//!   `outputSchema` and each result a `structuredContent`, plus the same JSON as a text block.
//!   Objects are sent as they are; scalars, lists and enums are wrapped as `{"result": ...}`.
//!   The schema is in the portable profile (see [`SchemaStyle`]): an `Option` field, `null`
//!   when `None`, is `anyOf` the type and `null`, never a `type` array; schemars' number
//!   formats (`uint8`, `double`, ..) are dropped, their integer bounds kept as
//!   `minimum`/`maximum`.
//! - [`Structured<T>`](Structured) keeps `T`'s `outputSchema` and `structuredContent` and
//!   chooses the text block: compact JSON, JSON indented by two spaces, or a text of your own
//!   (a file's text as itself, with `{"content": text}` for programs).
//! - `String` and `&'static str` are one text block; content blocks ([`Content`], [`Image`],
//!   [`Audio`], [`ResourceLink`], [`EmbeddedResource`], `Vec<Content>`, [`CallToolResult`]) are
//!   sent as they are.
//! - `Result<T, E>` (`E: Display`, for example [`ToolError`]) sends `Err(e)` as a tool error:
//!   `isError: true` with `e`'s message, for the model to read.
//! - A tool that panics answers a tool error too; the panic message stays on stderr and the server
//!   keeps serving.
//!
//! # Deploying behind OAuth
//!
//! With the `oauth` feature (not default: it brings a TLS stack and the JWT algorithms;
//! `mcp-runtime = { version = "…", features = ["oauth"] }`), `Server::oauth` makes an HTTP
//! server an OAuth 2.1 resource server: every request of
//! every HTTP route needs a bearer token issued by a trusted authorization server for this
//! server's resource (JWT against the issuer's JWKS, or introspection; the audience check is
//! always on); the protected resource metadata is served at
//! `/.well-known/oauth-protected-resource`; a missing or bad token gets 401 with a
//! `WWW-Authenticate` challenge naming the metadata, a malformed header 400, and a call whose
//! token lacks a scope 403 `insufficient_scope`. Items declare their scopes; a handler takes the
//! caller as a [`Principal`]. With `OAuth::accept_dpop` (or `OAuth::require_dpop`) it also
//! takes DPoP-bound tokens (RFC 9449), each request with its proof. stdio is unaffected. The
//! `auth` example serves a few scoped tools:
//! `cargo run -p mcp-examples --example auth -- --port 8000 --issuer ISSUER_URL --resource
//! http://127.0.0.1:8000/mcp`.
//!
//! ```no_run
//! # #[cfg(feature = "oauth")]
//! # mod example {
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::OAuth;
//!
//! /// Add a note.
//! #[tool(scopes = ["notes:write"])]
//! async fn add_note(text: String, caller: Principal) -> String {
//!     format!("{} wrote {text}", caller.subject().unwrap_or("-"))
//! }
//!
//! # async fn run() -> mcp_runtime::Result<()> {
//! Server::new("notes", "1.0.0")
//!     .oauth(
//!         OAuth::new("https://notes.example.com/mcp")
//!             .authorization_server("https://auth.example.com")
//!             .scopes_supported(["notes:read", "notes:write"]),
//!     )
//!     .serve_http("0.0.0.0:8000")
//!     .await
//! # }
//! # }
//! # fn main() {}
//! ```
//!
//! # Resources and templates
//!
//! `#[resource("uri")]` with no `{}` in the URI is a static resource (in `resources/list`); with
//! RFC 6570 expressions (levels 1-4) it is a template (in `resources/templates/list`), matched on
//! every `resources/read` (see [`mod@resource`]).
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! /// The application's settings.
//! #[resource("config://app", mime_type = "application/json")]
//! async fn settings() -> serde_json::Value {
//!     serde_json::json!({"theme": "dark"})
//! }
//!
//! /// One day of the application log.
//! #[resource("logs://{day}{?level}", mime_type = "text/plain", list = known_days)]
//! async fn day_log(day: u32, level: Option<String>) -> Result<String, ResourceError> {
//!     if day == 0 || day > 31 {
//!         return Err(ResourceError::NotFound);
//!     }
//!     Ok(format!("log of day {day} at level {}", level.as_deref().unwrap_or("info")))
//! }
//!
//! /// The concrete log resources, for `resources/list`.
//! fn known_days() -> Vec<ResourceInfo> {
//!     vec![ResourceInfo::new("logs://1", "day-1")]
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(Server::builder().resource(settings).resource(day_log)).await?;
//! # let read = client.request("resources/read", json!({"uri": "logs://3?level=debug"})).await?;
//! # assert_eq!(read["contents"][0]["text"], "log of day 3 at level debug");
//! # assert_eq!(read["contents"][0]["mimeType"], "text/plain");
//! # let missing = client.request("resources/read", json!({"uri": "logs://40"})).await.unwrap_err();
//! # assert_eq!(missing.rpc().unwrap().code, -32002);
//! # let list = client.request("resources/list", json!({})).await?;
//! # assert_eq!(list["resources"].as_array().unwrap().len(), 2);
//! # Ok(())
//! # }
//! ```
//!
//! - Variable values are percent-decoded and parsed with `FromStr`; a value that does not parse
//!   is -32602 naming the variable. A value that would escape a root (`..`, an absolute path,
//!   NUL) is refused unless the resource says `allow_traversal`.
//! - The template and the function are checked against each other at compile time: every
//!   variable a parameter, every argument parameter a variable, `{?q}` variables `Option` or
//!   defaulted, exploded variables (`{/path*}`) a `Vec`. When several templates match a URI the
//!   most specific wins ([`resource::UriTemplate`]).
//! - Return `String` (text), `Vec<u8>` or [`Blob`] (base64), any other `T: Serialize` (JSON
//!   text), or [`ResourceContents`]. `Err(ResourceError::NotFound)` is the revision's not-found
//!   error with `data.uri`.
//! - `list = f` adds a template's instances to `resources/list`. Every key: [`macro@resource`].
//! - `ctx.server().resource_updated(uri)` tells subscribed clients ([`ServerHandle`]).
//!
//! # Skills and Apps
//!
//! [`skills!`](crate::skills)`("dir")` embeds a directory of agent skills (SEP-2640), read and
//! checked when the crate compiles (a missing `SKILL.md`, a bad or mismatched name, a
//! misspelt frontmatter key such as `descripton`, a skill over the limits or a symbolic link
//! out of the directory is a compile error naming the file and line, `pdf/SKILL.md:3`), and
//! [`Server::skills`] serves it: the `io.modelcontextprotocol/skills` extension in both eras,
//! `skills/list`, `skills/get`, `resources/directory/read`, every file at
//! `skill://<skill-path>/<file>` with digests over the bytes served. [`Server::skills_dir`]
//! reads a directory when the server is built instead, with the same checks; [`Skill`] builds
//! one in code. An MCP Apps page is an [`app::UiResource`], linked from a tool with
//! `#[tool(ui = "ui://…")]`; see [`app`].
//!
//! # Prompts
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! /// Review a piece of code.
//! #[prompt(title = "Code review")]
//! fn code_review(
//!     /// The code to review.
//!     code: String,
//!     /// How many issues to list at most.
//!     #[arg(default = 3)]
//!     issues: u32,
//! ) -> Vec<PromptMessage> {
//!     vec![
//!         PromptMessage::user(format!("Review this code:\n{code}")),
//!         PromptMessage::user(format!("List at most {issues} issues.")),
//!     ]
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(Server::builder().prompt(code_review)).await?;
//! # let got = client.request("prompts/get", json!({"name": "code_review", "arguments": {"code": "x", "issues": "2"}})).await?;
//! # assert_eq!(got["messages"][1]["content"]["text"], "List at most 2 issues.");
//! # let bad = client.request("prompts/get", json!({"name": "code_review", "arguments": {"code": "x", "issues": "many"}})).await.unwrap_err();
//! # assert_eq!(bad.rpc().unwrap().code, -32602);
//! # Ok(())
//! # }
//! ```
//!
//! Prompt arguments are strings on the wire: a parameter of any `FromStr` type is parsed, and a
//! failure is -32602 naming the argument. Return `String` (one user message), [`PromptMessage`],
//! `Vec<PromptMessage>` or [`GetPromptResult`] (see [`mod@prompt`], every key:
//! [`macro@prompt`]).
//!
//! # Completion
//!
//! `#[arg(complete = f)]` on a prompt argument or a template variable answers
//! `completion/complete` for it, with `f(prefix: &str, context: &CompletionContext) -> impl
//! IntoCompletions` ([`completion`]). An argument whose type is an enum completes from its values
//! with no code. The `completions` capability is advertised only when something completes.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! fn cities(prefix: &str, _: &CompletionContext) -> Vec<String> {
//!     ["Paris", "Porto", "Prague", "Oslo"]
//!         .into_iter()
//!         .filter(|city| city.starts_with(prefix))
//!         .map(str::to_owned)
//!         .collect()
//! }
//!
//! /// Plan a trip.
//! #[prompt]
//! fn plan_trip(#[arg(complete = cities)] city: String) -> String {
//!     format!("Plan three days in {city}.")
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(Server::builder().prompt(plan_trip)).await?;
//! # let done = client.request("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "plan_trip"}, "argument": {"name": "city", "value": "P"}})).await?;
//! # assert_eq!(done["completion"]["values"], json!(["Paris", "Porto", "Prague"]));
//! # Ok(())
//! # }
//! ```
//!
//! # Servers with state: `#[server]`
//!
//! `#[server]` on an impl block makes its `#[tool]`, `#[resource]` and `#[prompt]` methods one
//! server that shares `&self`. The type implements [`McpServer`]: [`McpServer::into_server`]
//! makes a [`Server`] described by the attribute, and [`Server::with`] adds the items to another
//! server. Every key: [`macro@server`].
//!
//! ```
//! use std::sync::Mutex;
//! use mcp_runtime::prelude::*;
//!
//! #[derive(Default)]
//! struct Todo {
//!     items: Mutex<Vec<String>>,
//! }
//!
//! #[server(name = "todo", instructions = "A to-do list: `add` items, read `todo://items`.")]
//! impl Todo {
//!     /// Add an item; returns how many there are.
//!     #[tool]
//!     async fn add(&self, item: String, ctx: Context) -> usize {
//!         let count = {
//!             let mut items = self.items.lock().unwrap();
//!             items.push(item);
//!             items.len()
//!         };
//!         ctx.server().resource_updated("todo://items");
//!         count
//!     }
//!
//!     /// Every item, one per line.
//!     #[resource("todo://items", mime_type = "text/plain")]
//!     fn list(&self) -> String {
//!         self.items.lock().unwrap().join("\n")
//!     }
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! // Todo::default().into_server().serve_stdio().await
//! let client = Client::connect(Todo::default().into_server()).await?;
//! # assert_eq!(client.initialize_result().unwrap()["serverInfo"]["name"], "todo");
//! client.call_tool("add", json!({"item": "milk"})).await?;
//! let read = client.request("resources/read", json!({"uri": "todo://items"})).await?;
//! assert_eq!(read["contents"][0]["text"], "milk");
//! # Ok(())
//! # }
//! ```
//!
//! # Context: logging, progress, cancellation, questions to the client
//!
//! A [`Context`] parameter (or a smaller extractor: [`context::RequestId`](protocol::RequestId),
//! [`ProtocolVersion`], [`context::Meta`], [`context::ClientInfo`], [`ServerHandle`], any
//! [`FromContext`](context::FromContext)) gives a handler the request it serves and the client
//! behind it (see [`context`]):
//!
//! - [`Context::info`] and friends send `notifications/message` at or above the level the client
//!   set (`info` until it sets one);
//! - [`Context::progress`] sends `notifications/progress`, only when the request carried a
//!   `progressToken` and only for increasing values;
//! - cancellation (`notifications/cancelled`, or a stateless HTTP request's closed response)
//!   stops the handler's future at its next `.await`; [`Context::is_cancelled`] tells work handed to other tasks;
//! - [`Context::elicit`] asks the user to fill in a form (`#[derive(Elicit)]`, [`macro@Elicit`]),
//!   [`Context::sample`] asks the client's model, [`Context::roots`] lists the client's roots,
//!   [`Context::elicit_url`] sends the user to a URL. Each needs the client's capability;
//!   without it the call is [`ClientRequestError::Unsupported`](context::ClientRequestError),
//!   which `?` turns into a tool error.
//!
//! Requests on one connection run concurrently. A handler starts right where its request is
//! read and gets a task of its own only when it first has to wait (for I/O, a timer, the
//! client), so an `async` tool that never waits costs no task at all; one that computes for long
//! before its first `.await` holds up the requests read after it, so hand such work to
//! `tokio::task::spawn_blocking`, or make the tool sync: a sync tool runs on the blocking pool
//! (unless `#[tool(inline)]`). Having no `.await` to be stopped at, a sync tool that is
//! cancelled or times out runs to its end on its thread (nothing is sent for it); a long one
//! can check [`Context::is_cancelled`] to stop early.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! #[derive(Deserialize, Elicit)]
//! struct Contact {
//!     /// Your name.
//!     #[elicit(min_length = 1)]
//!     name: String,
//! }
//!
//! /// Book a table.
//! #[tool]
//! async fn book(guests: u8, ctx: Context) -> Result<String, ToolError> {
//!     ctx.info("looking for a table").await;
//!     ctx.progress(1.0, 2.0, "found one").await;
//!     let Elicitation::Accept(who) = ctx.elicit::<Contact>("Who is booking?").await? else {
//!         return Err(ToolError::new("booking cancelled"));
//!     };
//!     let dish = ctx.sample(SamplingRequest::new(50).user("Suggest a dish")).await?;
//!     let roots = ctx.roots().await?;
//!     Ok(format!("{guests} for {}: try {} ({} roots)", who.name, dish.text(), roots.len()))
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_runtime::testing::Client;
//! use serde_json::json;
//!
//! let client = Client::builder()
//!     .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
//!     .on_request(|method, _params| match method {
//!         "elicitation/create" => Ok(json!({"action": "accept", "content": {"name": "Ada"}})),
//!         "sampling/createMessage" => Ok(json!({
//!             "role": "assistant", "model": "m", "content": {"type": "text", "text": "soup"}
//!         })),
//!         _ => Ok(json!({"roots": [{"uri": "file:///work"}]})),
//!     })
//!     .connect(Server::builder().tool(book))
//!     .await?;
//! let call = json!({"name": "book", "arguments": {"guests": 2}, "_meta": {"progressToken": 1}});
//! let result = client.request("tools/call", call).await?;
//! assert_eq!(result["content"][0]["text"], "2 for Ada: try soup (1 roots)");
//! assert_eq!(client.next_message().await?["method"], "notifications/message");
//! assert_eq!(client.next_message().await?["method"], "notifications/progress");
//! # Ok(())
//! # }
//! ```
//!
//! # Changing what a server serves
//!
//! [`ServerHandle`] ([`McpService::handle`], [`Context::server`]) adds, removes, enables and
//! disables tools, resources and prompts while the server runs, and tells connected clients
//! with `notifications/*/list_changed` (on stateless `subscriptions/listen` streams too);
//! requests in flight keep the snapshot they started with. A server that starts without tools
//! (resources, prompts) and adds them later says so with [`Server::dynamic_tools`]
//! (`dynamic_resources`, `dynamic_prompts`); [`Changes`] applies several at once.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::tool::ToolDef;
//!
//! /// Say hello.
//! #[tool]
//! fn hello(name: String) -> String {
//!     format!("Hello, {name}!")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! let service = Server::builder().dynamic_tools().build()?;
//! # let client = Client::builder().connect_service(&service).await?;
//! # client.request("ping", json!({})).await?;
//! service.handle().add_tool(ToolDef::of(hello)?)?;
//! # assert_eq!(client.next_message().await?["method"], "notifications/tools/list_changed");
//! # assert_eq!(client.call_tool("hello", json!({"name": "Ada"})).await?.text(), "Hello, Ada!");
//! service.handle().disable_tool("hello");
//! # assert!(client.list_tools().await?.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # Both protocol eras
//!
//! One program serves every revision from 2024-11-05 to 2026-07-28, on every transport, and
//! nothing locks a connection into an era: each message is classified on arrival.
//!
//! - **The handshake era** (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): `initialize` opens a
//!   session, and what goes on the wire is shaped by the revision it negotiated (no `title`,
//!   `outputSchema` or `structuredContent` before 2025-06-18, no `icons` before 2025-11-25).
//!   `ctx.elicit`, `ctx.sample` and `ctx.roots` are JSON-RPC requests to the client.
//! - **The stateless era** (2026-07-28): a request whose `params._meta` carries the envelope
//!   (`io.modelcontextprotocol/protocolVersion`, `clientCapabilities`, optionally `clientInfo` and
//!   `logLevel`), and `server/discover` always, is served on its own. Results carry `resultType`,
//!   the server's info in `_meta`, and cache hints ([`Server::cache_hint`]); a missing resource
//!   is -32602.
//! - **Questions to the client in the stateless era**, where servers send no requests: the
//!   handler is stopped at its first unanswered question and the request answers
//!   `resultType: "input_required"` with the questions (`elicit-1`, `sample-2`, ..., or keys the
//!   handler chose with [`Context::input`]) and a signed `requestState`. The client retries with the answers, and the handler runs again from the
//!   start, this time receiving them: work done before a question runs once per round. The
//!   handler's code is the same in both eras.
//! - **`subscriptions/listen`** replaces per-session notifications in the stateless era: it
//!   acknowledges the honoured subset of the requested list-changed and resource subscriptions,
//!   then streams only those notifications until the client cancels or the server shuts down
//!   ([`McpService::close_subscriptions`]).
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! #[derive(Deserialize, Elicit)]
//! struct Confirm {
//!     /// Really delete?
//!     sure: bool,
//! }
//!
//! /// Delete everything, after asking.
//! #[tool(destructive)]
//! async fn wipe(ctx: Context) -> Result<&'static str, ToolError> {
//!     match ctx.elicit::<Confirm>("Delete everything?").await? {
//!         Elicitation::Accept(Confirm { sure: true }) => Ok("wiped"),
//!         _ => Ok("kept"),
//!     }
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_runtime::testing::Client;
//! use serde_json::json;
//!
//! let service = Server::builder().tool(wipe).build()?;
//! let yes = |_: &str, _: &serde_json::Value| Ok(json!({"action": "accept", "content": {"sure": true}}));
//! // The handshake era: `initialize`, then an `elicitation/create` request to the client.
//! let handshake = Client::builder()
//!     .capabilities(json!({"elicitation": {}}))
//!     .on_request(yes)
//!     .connect_service(&service)
//!     .await?;
//! assert_eq!(handshake.call_tool("wipe", json!({})).await?.text(), "wiped");
//!
//! // The stateless era: an `input_required` result, answered and retried by the client.
//! let stateless = Client::builder()
//!     .stateless()
//!     .capabilities(json!({"elicitation": {}}))
//!     .on_request(yes)
//!     .connect_service(&service)
//!     .await?;
//! let first = stateless.request_raw("tools/call", json!({"name": "wipe", "arguments": {}})).await?;
//! assert_eq!(first["result"]["resultType"], "input_required");
//! assert!(first["result"]["inputRequests"]["elicit-1"].is_object());
//! assert_eq!(stateless.call_tool("wipe", json!({})).await?.text(), "wiped");
//! let discover = stateless.request("server/discover", json!({})).await?;
//! assert_eq!(discover["supportedVersions"], json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]));
//! # Ok(())
//! # }
//! ```
//!
//! # Tasks
//!
//! A tool that takes long answers with a task handle at once when the client can take one:
//! `#[tool(task = "optional")]` (an ordinary call for other clients) or `#[tool(task =
//! "required")]` (only as a task). The handler is unchanged: progress becomes the task's
//! `statusMessage`, questions (`ctx.elicit`, ...) its `inputRequests`, cancellation drops it.
//! [`Context::before_task`] runs the questions asked before the task exists as input-required
//! rounds of the `tools/call`. Both the 2026-07-28 extension `io.modelcontextprotocol/tasks` and
//! 2025-11-25's experimental core tasks are served; tasks live in a [`tasks::TaskStore`] (by
//! default a bounded, TTL-reclaimed [`tasks::MemoryTaskStore`]). See
//! `cargo run -p mcp-examples --example tasks`.
//!
//! A task belongs to its owner, the only client that sees it: the authenticated principal, else
//! the session (or stdio connection) that created it, else a stateless HTTP client's address.
//! Each owner holds at most a share of the bounds ([`tasks::TaskLimits`]:
//! [`Server::max_live_tasks_per_owner`], a tenth of the live tasks, and an eighth of the bytes
//! of stored results), so one client filling its share leaves room for the others. A result
//! over [`Server::max_task_result`], or with no room left, ends its task `failed` with -32603
//! naming the bound. A task is kept for its TTL ([`Server::task_ttl`], or the shorter `task.ttl`
//! a 2025-11-25 client asks for), unless its session ends first (DELETE, idle expiry, end of
//! input): then its tasks are released, and running ones stopped. At end of input on stdio,
//! running requests and tasks get [`Server::shutdown_grace`], then are stopped and logged
//! (`tracing` warning naming them).
//!
//! ```
//! use std::time::Duration;
//! use mcp_runtime::prelude::*;
//!
//! /// Crawls a site, page after page, until cancelled.
//! #[tool(task = "required")]
//! async fn crawl(site: String, ctx: Context) -> String {
//!     let mut pages = 0;
//!     loop {
//!         tokio::time::sleep(Duration::from_millis(200)).await;
//!         pages += 1;
//!         ctx.progress(f64::from(pages), None, format!("{pages} pages of {site}")).await;
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! let server = Server::builder().tool(crawl).max_live_tasks(100);
//! # let client = Client::builder()
//! #     .stateless()
//! #     .capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
//! #     .connect(server)
//! #     .await?;
//! # let task = client
//! #     .request("tools/call", json!({"name": "crawl", "arguments": {"site": "example.org"}}))
//! #     .await?;
//! # assert_eq!(task["resultType"], "task");
//! # let id = task["taskId"].clone();
//! # client.request("tasks/cancel", json!({"taskId": id})).await?;
//! # let got = client.request("tasks/get", json!({"taskId": id})).await?;
//! # assert_eq!(got["status"], "cancelled");
//! # Ok(())
//! # }
//! ```
//!
//! # Streamable HTTP
//!
//! [`Server::serve_http`] serves the `/mcp` endpoint ([`Server::http_path`]) on an address until
//! Ctrl-C or SIGTERM, then lets requests in flight finish. Both eras share the endpoint:
//! handshake clients get sessions (`Mcp-Session-Id`), SSE streams with resumable event ids, GET
//! and DELETE; an enveloped 2026-07-28 POST is served without a session.
//!
//! ```no_run
//! use std::time::Duration;
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::{CacheHint, Cacheable};
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     let secret = std::env::var("MCP_STATE_SECRET").expect("32+ random bytes, shared by replicas");
//!     Server::new("adder", env!("CARGO_PKG_VERSION"))
//!         // Behind a proxy, accept the public host name (loopback only by default).
//!         .allowed_hosts(["mcp.example.com"])
//!         // Every replica verifies the others' input-required `requestState`.
//!         .request_state_secret(secret)
//!         // Stateless clients may cache `tools/list` for five minutes.
//!         .cache_hint(Cacheable::Tools, CacheHint::public(Duration::from_secs(300)))
//!         .serve_http("0.0.0.0:8000")
//!         .await
//! }
//! ```
//!
//! - Every refusal is a JSON-RPC error with an `id`: the request's once its body was read (400
//!   without `Mcp-Session-Id`, 404 for an unknown or ended session, 503 when the server is full
//!   or Redis is down), `null` when it was refused before (`Host`, media types, size, the
//!   server's request total) or has none to answer (GET, DELETE, a batch, an unreadable id).
//! - `Host` and `Origin` must name a loopback host unless [`Server::allowed_hosts`] or
//!   [`Server::allow_any_host`] says otherwise (against DNS rebinding). `serve_http` on a
//!   non-loopback address with no hosts configured turns the check off; a router from
//!   [`McpService::into_router`] keeps it.
//! - [`Server::stateless_http`] serves handshake-era clients without sessions (GET and DELETE
//!   405), for load-balanced deployments that need no server-to-client requests. The stateless
//!   era needs nothing: it never uses sessions.
//! - In the stateless era, a question to the client comes back in a retry that a load balancer
//!   may send to another replica: give them all the same [`Server::request_state_secret`].
//! - With the `redis` feature, `Server::redis(url)` lets replicas behind a load balancer with
//!   no sticky sessions share handshake-era sessions through Redis: session records, the
//!   event logs of the standalone stream and of POST streams (`Last-Event-ID` resumes on any
//!   replica), answers to
//!   elicitation, sampling and roots requests that reach another replica, `list_changed` and
//!   `resources/updated`, the `requestState` key, and tasks (unless [`Server::task_store`] sets
//!   another store; the replica running a task's handler holds a lease, so a task whose replica
//!   dies reads `failed` on the others). `serve_http` connects at startup (a Redis
//!   that cannot be reached is a startup error, `Error::Redis`); with `into_router`, call
//!   `McpService::connect_redis` first. While Redis is down, requests that need it get 503 and
//!   -32603, and the process stays up; once it is back, a session it lost gets 404 on its next
//!   request to any replica (a read that finds its connection dropped is sent again on a fresh
//!   one). The guide's *Deployment and limits* chapter has a one-machine recipe.
//! - [`Server::cache_hint`] sets the `ttlMs`/`cacheScope` of stateless results (0 and
//!   `private` by default).
//! - TCP_NODELAY is set on accepted sockets.
//! - [`Server::legacy_sse`] also serves the deprecated HTTP+SSE transport of 2024-11-05 on the
//!   same router, for clients that speak nothing newer (the TypeScript SDK's
//!   `SSEClientTransport`, the Python SDK's `sse_client`, the Inspector's `--transport sse`):
//!   GET `/sse` opens a session whose first event, `endpoint`, names
//!   `/messages?sessionId=<id>`; each POST there is `202 Accepted` and its answers go out on the
//!   stream as `message` events, with `: keep-alive` comments in the silences. The session ends
//!   with its stream (and on the idle and initialize timeouts); an unknown or ended `sessionId`
//!   is 404. The `Host`/`Origin` check, the message size limit, the in-flight window and
//!   [`Server::max_sessions`] (counting both transports' sessions) apply.
//!   **Off by default**: the transport is deprecated, a bare GET opens a session, and its two
//!   routes could collide with an application's own when [`McpService::into_router`] is merged
//!   into it. [`Server::legacy_sse_paths`] moves them.
//! - [`Server::server_card`] serves a Server Card (SEP-2127, [`ServerCard`]) at the endpoint's
//!   path plus `/server-card` and the AI Catalog listing it at `/.well-known/ai-catalog.json`:
//!   what a client can learn before it connects (the card's reverse-DNS name, the server's
//!   version, title, description, icons and website, the remote URLs and the revisions spoken).
//!   Public like the OAuth metadata (no token, any `Host`, `Access-Control-Allow-Origin: *`),
//!   cacheable for an hour with an `ETag`. Off by default; `Server::build` refuses a card that
//!   breaks the schema (a server description of 1 to 100 characters is required).
//! - `serve_http` logs `listening on http://ADDR/PATH` at `info` once it is bound.
//! - **Probes**: `GET /healthz` is 200 while the process answers; `GET /readyz` is 200, or 503
//!   from the moment a graceful shutdown starts and while the shared store does not answer a
//!   `PING` (checked at most once a second). No token, any `Host`, no client share
//!   ([`Server::health_paths`], [`Server::drain_delay`]).
//! - [`Server::json_response`] answers every POST with `application/json`, never SSE; the
//!   handler's notifications and requests to the client go on the session's GET stream.
//!
//! To serve your own routes from the same server, keeping its connection limits, timeouts and
//! shutdown, add them with [`Server::http_route`]. Or mount [`McpService::into_router`] in an
//! axum app of yours (which then owns the connections):
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//!
//! # #[tool]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! #[tokio::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     let service = Server::new("adder", "1.0.0").build()?;
//!     let app = axum::Router::new()
//!         .route("/health", axum::routing::get(|| async { "ok" }))
//!         .merge(service.into_router());
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//!     axum::serve(listener, app).await?;
//!     Ok(())
//! }
//! ```
//!
//! ## Limits
//!
//! Nothing a client sends grows the server's memory without bound: every queue, buffer, map and
//! log a client can fill has a limit, each a [`Server`] setting, or all of them as one
//! [`Limits`] value ([`Server::limits`], `Limits::default()` being the defaults below), and all
//! of them filled at once, from the defaults, measure under 800 MiB (below). No one client can
//! lock the others out either: every bound the clients share is also counted per client, and
//! one client holds at most its share of it ([`Server::client_share`], a quarter by default, and
//! never less than the largest single thing the bound holds; live tasks and task results have
//! shares of their own, a tenth and an eighth), so a newcomer is served while the server has
//! room. A client is its OAuth principal when [`Server::oauth`] is set, else its address (an
//! IPv6 address by its /64); behind a reverse proxy, its address is read from `Forwarded` or
//! `X-Forwarded-For` only on connections from [`Server::trusted_proxies`] (none by default).
//! What a session holds (its streams, logs, subscriptions) counts toward the client that opened
//! it. `ping`, a fresh `initialize`, notifications and the client's responses are never refused
//! for lack of room another client holds: they hold nothing once handled, and get through on a
//! reserve of their own when the request budget is full, and a fresh `initialize` that finds the
//! sessions full ends the longest idle session of a client that holds more than the newcomer.
//!
//! | limit | default | one client's share | past it |
//! |---|---|---|---|
//! | [`Server::max_connections`] | 512 open connections | 128 (an address's; a trusted proxy's count only in all) | a new connection gets 503 with `Retry-After` and is closed (its write side first, then, for up to 64 such connections at once, what it sent read for at most 1 s and 64 KiB, so the close is not a reset that could destroy the 503); one warning per burst; an open connection keeps at most 255 bytes of its own, the `Host` value its requests were allowed with |
//! | [`Server::header_read_timeout`] | 10 s | | a connection whose request headers are not all in (or an idle keep-alive connection) is closed, within a tenth of the timeout (at most 1 s) past it |
//! | [`Server::body_read_timeout`] | 30 s | | 408, and the connection is closed |
//! | connection read buffer | 64 KiB | | request headers past it get 431 |
//! | [`Server::max_message_size`] | 16 MiB a body or line | | 413 (from `Content-Length` before reading, else as soon as it is passed); on stdio an error naming the line's id |
//! | [`Server::request_bytes_total`] | 192 MiB of requests in flight: each its bytes as they arrive (a declared `Content-Length` holds nothing), then, before it is parsed, what parsing it builds (an upper bound from one scan of the text, [`ParseCost`](protocol::ParseCost): a value takes up to 216 bytes, so a JSON array of small values up to a hundred times its text), then what the parsed message holds, and 4 KiB | 48 MiB (never less than the largest message at its peak: three times `max_message_size`) | 503 with `Retry-After`; 413 (-32600) for one that could never fit; on stdio the request's error. `ping`, `initialize`, notifications and responses of up to 64 KiB get through on a 4 MiB reserve (1 MiB a client) |
//! | [`Server::max_in_flight_requests`] | 256 a session; a batch takes one per message | | the request's error (-32000) |
//! | [`Server::stream_buffer`] | 4 MiB unread a stream | | stdio stops reading requests until the client catches up (and drops notifications past twice that); an SSE response is cut off, and its client resumes with `Last-Event-ID` |
//! | [`Server::stream_buffer_total`] | 128 MiB unread, all HTTP streams together | 32 MiB | the stream the message was for is cut off |
//! | open SSE responses (POST streams, GET, `subscriptions/listen`, legacy `/sse`) | as many as connections | 128 | a GET, a listen or a legacy `/sse` gets 503 with `Retry-After`; a POST's answer comes as JSON (503 for a client that takes only a stream) |
//! | [`Server::event_buffer`] / [`Server::event_log_bytes`] | 1,000 events a stream; 1 MiB a session; 128 MiB in all | 32 MiB | the oldest events are dropped; an event with no room is sent, not kept |
//! | [`Server::max_subscriptions`] | 1,000 a session or listen; URIs of 8 KiB | | -32602 |
//! | [`Server::subscription_bytes_total`] | 32 MiB of URIs, all sessions together | 8 MiB | -32602 |
//! | [`Server::max_sessions`] | 10,000 sessions (both HTTP transports) | 2,500 ([`Server::max_sessions_per_peer`]) | a fresh `initialize` ends the longest idle session (an uninitialized one first) of the client holding the most, if it holds more than the newcomer; else (and with Redis, or for a legacy SSE GET) 503 with `Retry-After`. Past its own share, a client's `initialize` gets 503 with `Retry-After` |
//! | [`Server::initialize_timeout`] | 10 s | | a session that never sent `notifications/initialized` ends |
//! | [`Server::session_idle_timeout`] | 30 min | | an idle session ends |
//! | [`Server::shutdown_grace`] | 5 s | | on shutdown, connections still open are dropped and `serve_http` returns |
//! | [`Server::stream_resume_grace`] | 10 s | | the requests of a POST's event stream whose client left and did not come back with `Last-Event-ID` are cancelled (their handlers stop, their places come back; at once for a stream nothing can resume, a stateless server's; never with replicas, where another may resume it) |
//! | [`Server::max_live_tasks`] / [`Server::task_ttl`] | 10,000 tasks alive; each kept 1 hour (a 2025-11-25 client may ask for less) | | a task-capable call gets -32603 ("too many live tasks"); a task is reclaimed at its TTL, or when the session that owns it ends |
//! | [`Server::max_live_tasks_per_owner`] | 1,000 tasks alive of one owner (a tenth of the above): the principal, else the session, else a stateless client's address | | that owner's call gets -32603 ("too many live tasks of yours"); other owners are served |
//! | [`Server::max_task_result`] | 1 MiB a task's result, as JSON | | the task ends `failed` (-32603 naming the bound) |
//! | [`Server::task_results_total`] | 64 MiB of results in all, 8 MiB of one owner's | | the task whose result has no room ends `failed` (-32603 naming the bound); room comes back as tasks are reclaimed |
//! | task `statusMessage`, `tasks/list` page | 1 KiB ([`tasks::MAX_STATUS_MESSAGE`]); 100 tasks | | the message is cut at a character boundary; the rest is on the next page |
//! | OAuth caches (`OAuth::verified_token_cache`, `OAuth::introspection_cache`) | 10,000 tokens each (a SHA-256 and the caller), 60 s / 5 s, never past `exp` | | expired entries are dropped, and the cache is emptied if that is not enough |
//! | DPoP proofs seen (`OAuth::accept_dpop`), for the replay check | 100,000 (a SHA-256 each), each until its `iat` is 5 minutes old | | the oldest are forgotten first |
//! | `Server::redis_session_cache` (with `Server::redis`) | 10,000 session records and 16 MiB of their text, on each replica | | any records are dropped, and read from Redis again on their sessions' next requests |
//! | a proxied upstream's notifications waiting to be relayed (`Upstream::notification_queue`) | 1,024 and 16 MiB an upstream | | the newest are dropped and counted |
//! | a proxied upstream's forwarded requests in flight (`Upstream::max_in_flight`) | 256 an upstream | a quarter ([`Server::client_share`]): the client's principal, else its address | that client's next request waits for one of its own to end; other clients' go through |
//! | a proxied upstream's items (`Upstream::max_items`) | 10,000 of each kind an upstream, read from at most 1,000 pages | | the pages past them are not read; the rest are not served, with a warning |
//! | upstream resource subscriptions relayed | 256 URIs an upstream | | the downstream subscription holds; the upstream is not asked, with a warning |
//! | rate limiter keys ([`middleware::RateLimitLayer::max_keys`], feature `rate-limit`) | 100,000 keys a limiter (a key hash and a GCRA time each), and as many client keys for a key finer than the client | keys follow clients, sessions, principals and addresses ([`RateKey`](middleware::RateKey)), whose shares bound how many one client makes | keys back at full rate are dropped (at most once a second); if none is, new callers share one overflow key |
//! | response cache ([`middleware::CacheLayer`]) | 1,000 answers and 16 MiB (keys, a SHA-256 each, and answers) a cache, each for 60 s | | the oldest are dropped first (a caller past them is served, uncached); an answer over an eighth of the bytes is not kept |
//! | metrics ([`Server::telemetry`]) | 2,000 label sets a histogram (two histograms); labels only from the server's own names; the `/metrics` text rendered at most once a second, one render at a time, shared by every scrape (a full render is under 12 MiB) | on the MCP port, an answer being sent counts in its client's unread bytes ([`Server::stream_buffer_total`]'s share) | new label sets are counted under one `_OTHER` series; a scrape past its client's share gets 503 with `Retry-After` |
//! | trace context (feature `otel`) | read from `params._meta` within the W3C sizes: `traceparent` 55 bytes, `tracestate` 512 bytes and 32 members, `baggage` 8,192 bytes and 64 members; what the spans of requests in flight keep of them, 4 MiB in all | | a longer field is ignored whole, before it is parsed or copied; past the 4 MiB a request's span starts a trace of its own |
//! | `openapi` calls: `Upstream::timeout` | 30 s a request to the API, body included (10 s to connect) | | a tool error |
//! | `openapi` calls: `Upstream::max_response_bytes` / `max_error_bytes` | 8 MiB of a response read; 4 KiB of an error body in the tool error | | a tool error (nothing more is read); the error body cut at a character boundary |
//! | error messages | 4 KiB; a client's text (a name, a URI, a value) repeated in one at most 128 bytes, with its length | | cut |
//!
//! Accept errors (out of file descriptors, say) are logged and retried after 100 ms.
//! [`McpService::into_router`] users run their own server, so the connection limits there are
//! theirs, and a client there is its principal, or its address when requests carry
//! `axum::extract::ConnectInfo<SocketAddr>`; with neither, no share applies (the totals do).
//! Clients behind one NAT share one address's shares: key them by principal (OAuth), or raise
//! [`Server::client_share`].
//!
//! **The memory ceiling**, measured: `scripts/hostile.sh`'s all-at-once row fills every store
//! below at once from the defaults (four clients at their shares: unread streams, subscriptions,
//! calls left running with their arguments and three 16 MiB bodies at the same moment, 10,000
//! tasks and the task results store, 10,000 sessions with full event logs, the connections left
//! over) against the release `everything` example: **758 MB (723 MiB) peak RSS** in the worst of
//! five runs, 692 MB in the best (`bench/hostile.md`). OAuth's caches, which that run has no use
//! for, add at most 30 MiB: so the ceiling is under 800 MiB. What each bound accounts for, from
//! the defaults, over HTTP:
//!
//! | what | accounted |
//! |---|---:|
//! | requests in flight: their text and what parsing it builds, counted as they are held (an upper bound), and the reserve | 196 MiB |
//! | unread stream bytes | 128 MiB |
//! | event logs | 128 MiB |
//! | subscriptions | 32 MiB |
//! | connections: 512 × (64 KiB read and 64 KiB write buffer, and the task) | 72 MiB |
//! | sessions: 10,000 × about 4 KiB (3.5 KiB measured, `bench/`) | 40 MiB |
//! | task records: 10,000 × under 2 KiB (a `statusMessage` of at most 1 KiB) | 20 MiB |
//! | task results, kept as JSON text (`scripts/hostile.sh`'s `task-results` row, the store full: +80-84 MB of RSS) | 64 MiB |
//! | OAuth caches: 2 × 10,000 tokens | 20 MiB |
//! | DPoP proofs seen (only with DPoP on): 100,000 × under 100 bytes | 10 MiB |
//! | session records cached from Redis (only with `Server::redis`): 16 MiB of text, 10,000 entries of about 100 bytes | 17 MiB |
//! | the runtime itself | 10 MiB |
//! | **total accounted** | **720 MiB** (737 MiB with Redis's record cache) |
//! | **measured, all filled at once (without OAuth)** | **723 MiB** |
//!
//! Middleware and telemetry are off by default and outside that total; each adds, when it is
//! on: a rate limiter 100,000 keys × about 48 bytes with its map, and as many client keys for a
//! key finer than the client (under 10 MiB); a response cache its 16 MiB; telemetry's metrics
//! 2 × 2,000 series × under 400 bytes (under 2 MiB), and their text for `/metrics`, one render
//! kept and a second while it replaces the first (under 24 MiB; the answers being sent count
//! in the unread bytes above); with `otel`, the trace context the spans of requests in flight
//! keep, 4 MiB: 56 MiB in all.
//!
//! Not counted, because they are yours: what your handlers allocate (an `openapi` tool holds at
//! most `Upstream::max_response_bytes` of an answer, and its text once more in the result), and
//! the results they return while a response is written (at most one per connection). The
//! results tasks keep are counted above. A stdio server serves the one client that started it,
//! within the same request, stream and subscription limits (whole: the shares are HTTP's).
//! `scripts/hostile.sh` runs the attacks these limits answer against a release build and checks
//! the ceiling. The MCP client ([`mod@client`], below) bounds what an upstream server can make it
//! hold in a table of its own; a gateway adds, for each upstream it proxies, at most its
//! notification queue (16 MiB), one message being read (16 MiB), its captured stderr (64 KiB)
//! and its items ([`mod@gateway`]), none of which a downstream client can grow.
//!
//! # Middleware and telemetry
//!
//! [`Server::layer`] wraps every request of every transport and era in a `tower::Layer`, and
//! `#[tool(layer = ..)]` (on `#[resource]` and `#[prompt]` too, or
//! [`ToolDef::layer`](tool::ToolDef::layer) in code) one item's calls: tower's own
//! `ConcurrencyLimitLayer`, `TimeoutLayer` and `LoadShedLayer` work as they are, and their errors
//! become MCP answers. A layer sees an [`McpRequest`](middleware::McpRequest) (method, params,
//! id, era and revision, session, principal, transport, peer address, extensions) and returns an
//! [`McpResponse`](middleware::McpResponse); it may answer on its own, and what it puts in the
//! request's extensions a handler takes as an [`Extension<T>`](middleware::Extension)
//! parameter. [`middleware::from_fn`] makes a layer of an `async fn`. Built in:
//! [`RateLimitLayer`](middleware::RateLimitLayer) (feature `rate-limit`: GCRA, per client by
//! default, or per principal, session, address or tool, a key finer than the client still
//! counting against it; -32023 with `retryAfterMs`, HTTP 429 with `Retry-After`),
//! [`CacheLayer`](middleware::CacheLayer) (`read_only` + `idempotent` tools, keyed by who
//! asks unless a tool declares what its answer depends on) and
//! [`ErrorMaskingLayer`](middleware::ErrorMaskingLayer). See [`middleware`].
//!
//! ```
//! use std::time::Duration;
//! use mcp_runtime::prelude::*;
//! use tower::limit::ConcurrencyLimitLayer;
//! use tower::timeout::TimeoutLayer;
//!
//! /// Search the web: slow, so it gets a deadline of its own.
//! #[tool(layer = TimeoutLayer::new(Duration::from_millis(20)))]
//! async fn search(query: String) -> String {
//!     tokio::time::sleep(Duration::from_secs(1)).await;
//!     query
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! let server = Server::builder().tool(search).layer(ConcurrencyLimitLayer::new(64));
//! let client = Client::connect(server).await?;
//! let late = client.call_tool("search", json!({"query": "mcp"})).await?;
//! assert!(late.is_error);
//! assert_eq!(late.text(), "tool `search` timed out");
//! # Ok(())
//! # }
//! ```
//!
//! [`Server::telemetry`] names and attributes request spans by OpenTelemetry's semantic
//! conventions for MCP (`tools/call add`, kind `SERVER`, `mcp.*`, `gen_ai.*`, `error.type`),
//! continues the trace a client sends in `params._meta` (feature `otel`), and keeps the
//! `mcp.server.operation.duration` and `mcp.server.session.duration` histograms, as Prometheus
//! text at `GET /metrics` (feature `prometheus`) and on the global meter provider (`otel`);
//! `Telemetry::sample_ratio` samples spans at the head. See [`telemetry`].
//!
//! # Testing
//!
//! The `testing` feature (not default) adds [`mod@testing`]; enable it where your tests are:
//!
//! ```toml
//! [dev-dependencies]
//! mcp-runtime = { version = "0.1", features = ["testing"] }
//! ```
//!
//! [`testing::Client`] drives a server in-process through the real stdio transport, so a test
//! sees what a client would. [`ClientBuilder`](testing::ClientBuilder) picks the revision and
//! capabilities, `on_request` scripts the answers to sampling, elicitation and roots,
//! `stateless()` speaks 2026-07-28 (answering input-required results and retrying), and
//! `connect_io` talks to a child process instead.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::testing::Client;
//! use serde_json::json;
//!
//! /// Add two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! for client in [
//!     Client::connect(Server::builder().tool(add)).await?,
//!     Client::builder().stateless().connect(Server::builder().tool(add)).await?,
//! ] {
//!     let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
//!     assert_eq!(result.structured_content, Some(json!({"result": 5})));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! [`testing::assert_surface`] pins what a server lists (tools, resources, templates, prompts,
//! on every revision) in a reviewed file, and fails with each change marked breaking or not.
//!
//! # Existing HTTP APIs: `openapi!`
//!
//! With the `openapi` feature, `openapi!("api.yaml", ..)` reads an OpenAPI 3.0 or 3.1
//! description (JSON or YAML, `$ref`s across local files) when the crate compiles, refuses a
//! broken or unsupported one with an error at the string naming the file and the JSON pointer,
//! and generates per operation a typed `async fn` and a tool: name from `operationId`,
//! description from `summary`/`description`, annotations from the method, `inputSchema` from
//! the path, query and header parameters and the request body, `outputSchema` from the success
//! response. `include_tags`, `include_paths`, `include_operations`, their `exclude_`
//! counterparts, `prefix`, `rename` and `replace` select and name them. The calls go to the
//! [`Upstream`](openapi::Upstream) configured at run time (`API.configure(..)`), with a static
//! header, a bearer token from the environment, the caller's forwarded OAuth token
//! (audience-checked, with `OAuth::expose_access_token`) or a hook of your own, within a
//! timeout and response bounds. See [`mod@openapi`] and the guide's *`openapi!`* chapter.
//!
//! ```ignore
//! mod github {
//!     mcp_runtime::openapi!("github.json", include_tags = ["issues"], prefix = "gh_");
//! }
//! // github::API.configure(Upstream::new("https://api.github.com")?.bearer_from_env("GITHUB_TOKEN")?)?;
//! ```
//!
//! # Tracing
//!
//! Each request runs in a `tracing` span with its method, id, tool name and session, and
//! [`trace::ClientLogLayer`] sends the `tracing` events of handlers to their client as
//! `notifications/message`: see [`trace`].
//!
//! # An MCP client
//!
//! The `client` feature (not default: it brings `reqwest` over rustls) adds [`mod@client`]: a
//! client for other MCP servers, over stdio (a child process) or Streamable HTTP, in both eras
//! (chosen by a `server/discover` probe), with a handler for the server's sampling, elicitation
//! and roots requests, notifications, progress, cancellation on drop, timeouts and bounded
//! buffers. It uses the runtime's own protocol and result types, so what it reads is what a
//! server here returns:
//!
//! ```no_run
//! # #[cfg(feature = "client")]
//! # async fn run() -> Result<(), mcp_runtime::client::ClientError> {
//! use mcp_runtime::client::{Client, StdioCommand};
//!
//! let upstream = Client::builder()
//!     .stdio(StdioCommand::new("uvx").arg("mcp-server-time"))
//!     .await?;
//! let result = upstream
//!     .call_tool("get_current_time", serde_json::json!({"timezone": "UTC"}))
//!     .await?;
//! println!("{}", result.text());
//! # Ok(())
//! # }
//! # fn main() {}
//! ```
//!
//! # Gateways: mount and proxy
//!
//! One server can carry others. [`Server::mount`] puts another server's tools and prompts
//! under a namespace (`weather` + `forecast` is `weather_forecast`; resources keep their URIs),
//! in-process: the mounted items are this server's own, and their handlers run in this
//! server's request context. [`Server::build`] refuses a clash with both places named.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! /// Tomorrow's weather in a city.
//! #[tool]
//! async fn forecast(city: String) -> String {
//!     format!("Sunny in {city}")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder().mount("weather", Server::builder().tool(forecast));
//! # use mcp_runtime::testing::Client;
//! # use serde_json::json;
//! # let client = Client::connect(server).await?;
//! let sunny = client.call_tool("weather_forecast", json!({"city": "Oslo"})).await?;
//! assert_eq!(sunny.text(), "Sunny in Oslo");
//! # Ok(())
//! # }
//! ```
//!
//! With the `client` feature, `Server::proxy` serves the items of real MCP servers, run as
//! child processes or reached over Streamable HTTP (`mcp_runtime::gateway::Upstream`), as
//! ordinary items of this server: listed again on their `list_changed`, calls forwarded with
//! progress, log messages and cancellation, their sampling, elicitation and roots requests
//! asked of the client whose call they belong to (each side in its own era), subscriptions
//! and tasks relayed; an upstream that dies is restarted with backoff while its items answer
//! a clear error. Every scope, limit, timeout and layer of this server applies to them. The
//! module docs of `mcp_runtime::gateway` say exactly what is relayed, how names are made and
//! what is bounded; `cargo run -p mcp-examples --example gateway -- --upstream
//! 'time=stdio:uvx mcp-server-time'` is one.
//!
//! ```no_run
//! # #[cfg(feature = "client")]
//! # async fn run() -> mcp_runtime::Result<()> {
//! use mcp_runtime::Server;
//! use mcp_runtime::gateway::Upstream;
//!
//! Server::new("gateway", "1.0.0")
//!     .proxy("time", Upstream::stdio("uvx", ["mcp-server-time"]))
//!     .proxy("docs", Upstream::http("https://docs.example.com/mcp").bearer_token("s3cret"))
//!     .serve_http("127.0.0.1:8000")
//!     .await
//! # }
//! # fn main() {}
//! ```
//!
//! # Cargo features
//!
//! - `macros` (default): `#[tool]`, `#[resource]`, `#[prompt]`, `#[server]` and
//!   `#[derive(Elicit)]`, re-exported from `mcp-macros`.
//! - `http` (default): Streamable HTTP on axum and hyper ([`Server::serve_http`],
//!   [`McpService::into_router`]).
//! - `client-log-layer` (default): [`trace::ClientLogLayer`], on the `Layer` trait of
//!   `tracing-subscriber`.
//! - `tasks` (default): tools run as tasks (`#[tool(task = ...)]`, see *Tasks*), the task
//!   store ([`tasks`]) and the `tasks/*` methods. Without it a `task = "optional"` tool runs as
//!   an ordinary call and a `task = "required"` one fails [`Server::build`].
//! - `skills` (default): agent skills (SEP-2640): `Server::skills`, `skills!` and the skills
//!   extension; without it no skill-format parser is built.
//! - `oauth`: `Server::oauth`, the OAuth 2.1 resource server (see *Deploying behind OAuth*);
//!   it brings `jsonwebtoken` and `reqwest` over rustls.
//! - `redis`: `Server::redis`, replicas sharing handshake-era sessions, event logs, answers,
//!   notifications and tasks through Redis (the `redis` crate).
//! - `rate-limit`: [`middleware::RateLimitLayer`], GCRA rate limits (`governor`).
//! - `otel`: OpenTelemetry: trace context through `params._meta`, and the metrics on the global
//!   meter provider (`opentelemetry`, `tracing-opentelemetry`); the exporter is yours.
//! - `prometheus`: `GET /metrics` on the HTTP router and [`telemetry::serve_metrics`].
//! - `client`: [`mod@client`], an MCP client for upstream servers (stdio and Streamable HTTP,
//!   both eras), and `Server::proxy` ([`mod@gateway`]); it brings `reqwest` over rustls.
//! - `openapi`: `openapi!` and [`mod@openapi`]: an existing HTTP API's operations as tools,
//!   read from its OpenAPI description when the crate compiles (YAML with `yaml-rust2`), called
//!   with `reqwest` over rustls.
//! - `testing`: [`mod@testing`], the in-process client and surface snapshots, for
//!   `[dev-dependencies]`.
//! - `fuzzing`: the JSON-RPC framing, re-exported for the fuzz targets in `fuzz/`; not public
//!   API.
//!
//! A server that speaks only stdio builds without an HTTP stack (and without the tasks and
//! skills extensions; add `"tasks"` or `"skills"` to the list for them):
//!
//! ```toml
//! [dependencies]
//! mcp-runtime = { version = "0.1", default-features = false, features = ["macros"] }
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The guide links into `testing` and `client`, which exist only with their features:
// documenting the crate alone without them (`cargo doc -p mcp-runtime`) leaves those links plain
// text instead of failing. The workspace's docs (and docs.rs, see Cargo.toml) build with both
// and check every link.
#![cfg_attr(
    not(all(feature = "testing", feature = "client")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[doc(hidden)]
pub mod __private;
pub mod app;
pub mod bounds;
#[cfg(feature = "client")]
pub mod client;
pub mod completion;
pub mod context;
mod error;
#[cfg(feature = "client")]
pub mod gateway;
mod handle;
mod metadata;
pub mod middleware;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod prompt;
pub mod protocol;
mod registration;
pub mod resource;
pub mod schema;
mod server;
mod shared;
#[cfg(feature = "skills")]
pub mod skill;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;
pub mod trace;
mod transport;

#[cfg(feature = "http")]
pub use crate::server::options::HttpOptions;
pub use crate::server::options::Limits;
#[cfg(feature = "tasks")]
pub use crate::server::options::TaskOptions;
#[cfg(all(feature = "http", unix))]
pub use crate::transport::http::UnixSocket;

pub use crate::context::{Context, Elicit, Principal};
pub use crate::error::{DefinitionError, Error, Result};
pub use crate::handle::ServerHandle;
pub use crate::prompt::{GetPromptResult, PromptMessage};
pub use crate::protocol::{
    Annotations, Audio, Content, EmbeddedResource, Icon, Image, ProtocolVersion, ResourceContents,
    ResourceLink, Role,
};
pub use crate::resource::{Blob, ResourceError, ResourceInfo};
pub use crate::schema::SchemaStyle;
pub use crate::server::{
    AI_CATALOG_MEDIA_TYPE, CacheHint, CacheScope, Cacheable, Changes, McpServer, McpService,
    SERVER_CARD_MEDIA_TYPE, SERVER_CARD_SCHEMA, Server, ServerCard,
};
#[cfg(feature = "oauth")]
pub use crate::server::{OAuth, TokenValidation};
#[cfg(feature = "skills")]
pub use crate::skill::{Skill, Skills};

#[cfg(feature = "tasks")]
pub mod tasks;
/// Tasks (`#[tool(task = "optional" | "required")]`): this build has no `tasks` feature, so a
/// tool can only say it does not run as one. See "Tasks" in the crate documentation.
#[cfg(not(feature = "tasks"))]
pub mod tasks {
    pub use crate::tool::TaskSupport;
}
pub use crate::tool::{Args, CallToolResult, IntoCallToolResult, Structured, ToolError};

#[cfg(all(feature = "macros", feature = "openapi"))]
pub use mcp_macros::openapi;
#[cfg(all(feature = "macros", feature = "skills"))]
pub use mcp_macros::skills;
#[cfg(feature = "macros")]
pub use mcp_macros::{Elicit, prompt, resource, server, tool};

/// The JSON-RPC framing the fuzz targets in `fuzz/` drive directly: reading bytes into messages
/// and answering the ones that fail. Not public API: it exists only with the `fuzzing` feature
/// and may change in any release.
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    pub use crate::protocol::jsonrpc::{
        ErrorObject, Incoming, InvalidMessage, Message, decode, encode_error, error_codes,
        id_in_prefix, parse,
    };
    /// A DPoP proof through every check (`OAuth::accept_dpop`).
    #[cfg(feature = "oauth")]
    pub use crate::transport::http::fuzz_dpop;
    /// The HTTP header guard (`Host`/`Origin`, `Accept`, `MCP-Protocol-Version`, ...).
    #[cfg(feature = "http")]
    pub use crate::transport::http::fuzz_guard;
}

/// Everything a server module needs, in one import.
pub mod prelude {
    pub use crate::completion::CompletionContext;
    pub use crate::context::{ClientRequestError, Elicit, Elicitation, SamplingRequest};
    pub use crate::context::{Context, FromContext, Principal};
    pub use crate::prompt::{GetPromptResult, PromptMessage};
    pub use crate::protocol::{
        Audio, Content, EmbeddedResource, Icon, Image, ProtocolVersion, ResourceContents,
        ResourceLink,
    };
    pub use crate::resource::{Blob, ResourceError, ResourceInfo};
    pub use crate::tool::{Args, CallToolResult, Structured, ToolError};
    pub use crate::{McpServer, McpService, Server, ServerHandle};
    #[cfg(feature = "macros")]
    pub use mcp_macros::{Elicit, prompt, resource, server, tool};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}
