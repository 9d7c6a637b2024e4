//! What the macros require of the types in a signature, one trait per requirement, so that a
//! compile error names the requirement a type misses and how to meet it.
//!
//! `#[tool]`, `#[prompt]` and `#[resource]` tell a parameter's kind (argument, template
//! variable, context parameter) and a return type's shape by trait. A type that fits none gets
//! its error from one of these traits, at the type, in MCP terms:
//!
//! ```text
//! error[E0277]: `Point` cannot be a `#[tool]` argument: it does not implement `schemars::JsonSchema`
//!   --> src/main.rs:11:19
//!    |
//! 11 | async fn plot(at: Point) -> String {
//!    |                   ^^^^^ add `#[derive(JsonSchema)]` (schemars 1.x) to it, or take a type that has it
//!    |
//! help: the trait `ToolArgumentSchema` is not implemented for `Point`
//! ```
//!
//! Each is implemented for every type that meets the requirement it names (`ToolArgumentSchema`
//! for every `schemars::JsonSchema` type, ...): there is nothing to implement or import. They
//! are public only so that the error can name them.

use std::fmt::Display;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::__private::Probe;
use crate::prompt::IntoGetPromptResult;
use crate::resource::ResourceError;

/// A `#[tool]` argument is deserialized from the call's `arguments`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[tool]` argument: it does not implement `serde::Deserialize`",
    label = "add `#[derive(Deserialize)]` to it, or take a type that has it",
    note = "a `#[tool]` argument's type implements `serde::Deserialize` (it is read from `arguments`) and `schemars::JsonSchema` (its schema is in `inputSchema`)",
    note = "a parameter the client does not send (a connection, the request's `Context`) is a context parameter: its type implements `mcp_runtime::context::FromContext`"
)]
pub trait ToolArgumentDeserialize {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ToolArgumentDeserialize for T {
    fn check(_: &Probe<Self>) {}
}

/// A `#[tool]` argument's schema is its property of `inputSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[tool]` argument: it does not implement `schemars::JsonSchema`",
    label = "add `#[derive(JsonSchema)]` (schemars 1.x) to it, or take a type that has it",
    note = "a `#[tool]` argument's type implements `serde::Deserialize` (it is read from `arguments`) and `schemars::JsonSchema` (its schema is in `inputSchema`)",
    note = "if it derives `JsonSchema` and still fails, check that `schemars` is 1.x in Cargo.toml (`schemars = \"1\"`): a 0.8 derive implements another crate's trait",
    note = "a parameter the client does not send (a connection, the request's `Context`) is a context parameter: its type implements `mcp_runtime::context::FromContext`"
)]
pub trait ToolArgumentSchema {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ToolArgumentSchema for T {
    fn check(_: &Probe<Self>) {}
}

/// A `#[tool]`'s value is serialized into `structuredContent`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]`: it does not implement `serde::Serialize`",
    label = "add `#[derive(Serialize)]` to it, or return a type that has it",
    note = "a tool's value becomes `structuredContent` (and its JSON a text block) when its type implements `serde::Serialize` and `schemars::JsonSchema` (its schema is the `outputSchema`)",
    note = "a tool may also return `String`, a content block (`Content`, `Image`, `Audio`, `ResourceLink`, `EmbeddedResource`, `Vec<Content>`), `CallToolResult`, or a type that implements `mcp_runtime::IntoCallToolResult`; any of these in a `Result<_, E>` with `E: Display`"
)]
pub trait ToolOutputSerialize {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutputSerialize for T {
    fn check(_: &Probe<Self>) {}
}

/// A `#[tool]`'s `outputSchema` is its value's schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]`: it does not implement `schemars::JsonSchema`",
    label = "add `#[derive(JsonSchema)]` (schemars 1.x) to it, or return a type that has it",
    note = "a tool's value becomes `structuredContent` (and its JSON a text block) when its type implements `serde::Serialize` and `schemars::JsonSchema` (its schema is the `outputSchema`)",
    note = "if it derives `JsonSchema` and still fails, check that `schemars` is 1.x in Cargo.toml (`schemars = \"1\"`): a 0.8 derive implements another crate's trait",
    note = "a tool may also return `String`, a content block (`Content`, `Image`, `Audio`, `ResourceLink`, `EmbeddedResource`, `Vec<Content>`), `CallToolResult`, or a type that implements `mcp_runtime::IntoCallToolResult`; any of these in a `Result<_, E>` with `E: Display`"
)]
pub trait ToolOutputSchema {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ToolOutputSchema for T {
    fn check(_: &Probe<Self>) {}
}

/// The `E` of a `Result` a `#[tool]` or `#[prompt]` returns: its `Display` text is the error
/// the client sees.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool or prompt: it does not implement `Display`",
    label = "an `Err` is sent to the client as its `Display` text",
    note = "a `#[tool]` reports `Err(e)` as a tool error (`isError: true`) whose text, `e.to_string()`, the model reads; a `#[prompt]` as an invalid-params error",
    note = "implement `std::fmt::Display` for `{Self}`, or map the error into `ToolError` or `String`"
)]
pub trait ErrorDisplay {
    /// The error's text, as the client sees it.
    #[doc(hidden)]
    fn error_message(&self) -> String;
}

#[diagnostic::do_not_recommend]
impl<E: Display + ?Sized> ErrorDisplay for E {
    fn error_message(&self) -> String {
        self.to_string()
    }
}

/// A `#[prompt]` argument is a string on the wire, parsed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[prompt]` argument: it does not implement `FromStr` (with an `Err` that implements `Display`)",
    label = "take a type that implements `FromStr`, or implement it",
    note = "prompt arguments are strings on the wire: an argument's type implements `std::str::FromStr`, and its `Err` `Display` (the text of the invalid-params error naming the argument); `Option<T>` of such a type makes it optional",
    note = "a parameter the client does not send (the request's `Context`) is a context parameter: its type implements `mcp_runtime::context::FromContext`"
)]
pub trait PromptArgumentFromStr {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: FromStr> PromptArgumentFromStr for T
where
    T::Err: Display,
{
    fn check(_: &Probe<Self>) {}
}

/// What a `#[prompt]` returns becomes its messages.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[prompt]`",
    label = "unsupported return type",
    note = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result` of one of them, or a type that implements `mcp_runtime::prompt::IntoGetPromptResult`"
)]
pub trait PromptOutput {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: IntoGetPromptResult> PromptOutput for T {
    fn check(_: &Probe<Self>) {}
}

/// A `#[resource]` template variable is text in the URI, percent-decoded and parsed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[resource]` template variable: it does not implement `FromStr` (with an `Err` that implements `Display`)",
    label = "take a type that implements `FromStr`, or implement it",
    note = "a template variable's type implements `std::str::FromStr`, and its `Err` `Display` (the text of the invalid-params error naming the variable); `Option<T>` of such a type for an optional variable, `Vec<T>` for an exploded one",
    note = "a parameter the URI does not carry (the request's `Context`) is a context parameter: its type implements `mcp_runtime::context::FromContext`"
)]
pub trait ResourceVariableFromStr {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: FromStr> ResourceVariableFromStr for T
where
    T::Err: Display,
{
    fn check(_: &Probe<Self>) {}
}

/// What a `#[resource]` returns, when it is not contents already, is sent as JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resource]`: it does not implement `serde::Serialize`",
    label = "add `#[derive(Serialize)]` to it (it is sent as JSON text), or return contents",
    note = "return `String` (text), `Vec<u8>` or `Blob` (binary), `ResourceContents`, `Vec<ResourceContents>`, or any `T: Serialize` (JSON text), or a `Result<_, E>` of one of them with `E: Into<ResourceError>`"
)]
pub trait ResourceOutputSerialize {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ResourceOutputSerialize for T {
    fn check(_: &Probe<Self>) {}
}

/// The `E` of a `Result` a `#[resource]` returns becomes the read's error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a `#[resource]`: it does not convert into `ResourceError`",
    label = "an `Err` becomes the read's JSON-RPC error",
    note = "return `Result<_, ResourceError>` (`ResourceError::NotFound` is the missing resource's error), or implement `From<{Self}>` for `ResourceError`"
)]
pub trait ResourceFailure {
    /// The read's error.
    #[doc(hidden)]
    fn into_resource_error(self) -> ResourceError;
}

#[diagnostic::do_not_recommend]
impl<E: Into<ResourceError>> ResourceFailure for E {
    fn into_resource_error(self) -> ResourceError {
        self.into()
    }
}

/// A `#[resource]` parameter that no template expression names must be a context parameter.
#[diagnostic::on_unimplemented(
    message = "a `#[resource]` parameter of type `{Self}` is not a variable of its URI template",
    label = "no `{{..}}` expression of this template names it",
    note = "add an expression for the parameter to the template, or remove the parameter",
    note = "only context parameters (types that implement `mcp_runtime::context::FromContext`) may be left out of the template"
)]
pub trait ContextParameter: Sized {
    #[doc(hidden)]
    fn extract(call: &crate::resource::ResourceCall) -> Result<Self, crate::context::ContextError>;
}

#[diagnostic::do_not_recommend]
impl<T: crate::context::FromContext> ContextParameter for T {
    fn extract(call: &crate::resource::ResourceCall) -> Result<Self, crate::context::ContextError> {
        T::from_context(call.context())
    }
}

/// A type an exploded template variable (`{name*}`) binds: a list.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take an exploded URI-template variable (`{{name*}}`): it binds a list",
    label = "make this a `Vec<T>`",
    note = "an exploded variable binds one item per separator, so its parameter is a `Vec<T>` with `T: FromStr`"
)]
pub trait ExplodedVariable {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

impl<T> ExplodedVariable for Vec<T> {
    fn check(_: &Probe<Self>) {}
}

/// A type a query variable (`{?name}`, `{&name}`) without a default binds: one that can be
/// absent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a query variable (`{{?name}}`): the URI may leave it out",
    label = "make this an `Option<T>`, or give it `#[arg(default = ...)]`",
    note = "a query variable binds `None` (or an empty `Vec<T>`) when the URI does not have it"
)]
pub trait OptionalVariable {
    #[doc(hidden)]
    fn check(_: &Probe<Self>)
    where
        Self: Sized;
}

impl<T> OptionalVariable for Option<T> {
    fn check(_: &Probe<Self>) {}
}

impl<T> OptionalVariable for Vec<T> {
    fn check(_: &Probe<Self>) {}
}
