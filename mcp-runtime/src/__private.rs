//! What the code `#[tool]` (and the other macros) expand to reaches. **Not public API**: nothing
//! here is covered by semver, and it changes with the macros.
//!
//! Parameters and return types are told apart by trait, not by spelling, through autoref
//! specialization on [`Probe`]: the expansion calls a method on `&&&Probe<T>`, and method
//! resolution picks the most specific impl whose bounds `T` meets. The last resort for each
//! dispatch has a method `where` bound on a trait nothing implements, carrying
//! `#[diagnostic::on_unimplemented]`, so an unsupported type gets one error worded in MCP terms at
//! the parameter or return type.

#![allow(missing_docs, unreachable_pub)]

use std::any::TypeId;
use std::fmt::Display;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use ::core::convert::From;
pub use ::core::option::Option;
pub use ::core::result::Result;
pub use ::std::boxed::Box;
pub use ::std::vec::Vec;
pub use inventory;

pub use crate::completion::{CompletionContext, completer_fn, completer_values};
pub use crate::context::Elicit;
pub use crate::context::elicit::{ElicitEnum, ElicitField, enum_schema, form_schema};
pub use crate::prompt::{GetPromptResult, PromptBuilder, PromptCall, PromptDef};
pub use crate::protocol::{Annotations, ErrorObject, ResourceContents, Role};
pub use crate::registration::{Entry, Item};
pub use crate::resource::{
    ResourceBuilder, ResourceCall, ResourceDef, ResourceError, ResourceInfo,
};
pub use crate::server::{Items, McpServer, ServerDefaults};
#[cfg(feature = "skills")]
pub use crate::skill::{EmbeddedFile, EmbeddedSkill};
pub use crate::tool::{
    BoxFuture, CallToolResult, ParamMeta, TaskSupport, ToolAnnotations, ToolBuilder, ToolCall,
    ToolDef,
};
pub use ::std::string::String;
pub use serde_json::{Map, Value};
pub use std::sync::Arc;

/// A definition `layer = ..` can wrap.
pub trait Layered {
    /// The definition with `layer` around its calls.
    fn with_layer(self, layer: impl crate::middleware::McpLayer) -> Self;
}

impl Layered for ToolDef {
    fn with_layer(self, layer: impl crate::middleware::McpLayer) -> Self {
        self.layer(layer)
    }
}

impl Layered for PromptDef {
    fn with_layer(self, layer: impl crate::middleware::McpLayer) -> Self {
        self.layer(layer)
    }
}

impl Layered for ResourceDef {
    fn with_layer(self, layer: impl crate::middleware::McpLayer) -> Self {
        self.layer(layer)
    }
}

/// `#[tool(layer = ..)]` (and on `#[resource]`, `#[prompt]`): the built definition wrapped.
pub fn item_layer<D: Layered>(def: D, layer: impl crate::middleware::McpLayer) -> D {
    def.with_layer(layer)
}

/// Runs a sync `#[tool]`'s call on tokio's blocking pool, so a tool that blocks does not hold
/// up the connection. The call keeps the request's span and client log; a panic in it is
/// resumed here, where the handler's panic catching turns it into a tool error.
pub async fn run_blocking<R: Send + 'static>(call: impl FnOnce() -> R + Send + 'static) -> R {
    match tokio::task::spawn_blocking(crate::trace::carry_to_blocking(call)).await {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // Only a runtime shutting down cancels a blocking task; nothing waits for the answer.
            Err(error) => panic!("a sync tool's blocking task did not finish: {error}"),
        },
    }
}

/// The `TypeId` of a function item.
pub fn type_id_of<F: 'static>(_: &F) -> TypeId {
    TypeId::of::<F>()
}

/// A default value as JSON, for the schema. Requires `Serialize` only where a default is given.
/// A default that does not serialize is a problem of the definition, reported when the server is
/// built, not a `null` in the schema.
pub fn default_json<T: Serialize>(make: impl FnOnce() -> T) -> Result<Value, String> {
    serde_json::to_value(make())
        .map_err(|error| format!("the default does not serialize to JSON: {error}"))
}

/// An example as JSON, for the schema; one that does not serialize is reported like a default.
pub fn example_json<T: Serialize + ?Sized>(example: &T) -> Result<Value, String> {
    serde_json::to_value(example)
        .map_err(|error| format!("an example does not serialize to JSON: {error}"))
}

/// A keyword of an elicitation field's schema (`minLength`, `default`, ...) as JSON; `None`,
/// logged, when it does not serialize, so the keyword is left out rather than sent as `null`.
pub fn schema_json<T: Serialize + ?Sized>(value: &T) -> Option<Value> {
    serde_json::to_value(value)
        .inspect_err(|error| {
            tracing::error!(%error, "a keyword of an elicitation schema could not be serialized");
        })
        .ok()
}

/// A context parameter taken from the request's context, or the message saying why it is
/// unavailable; the one body behind the tool, prompt and resource `ViaContext` impls.
fn context_parameter<P: crate::context::FromContext>(
    context: &crate::context::Context,
    name: &str,
) -> Result<P, String> {
    P::from_context(context)
        .map_err(|error| format!("context parameter `{name}` is unavailable: {error}"))
}

/// A zero-sized stand-in for a type, to dispatch on it.
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Probe<T> {
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> Clone for Probe<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Probe<T> {}

/// The probe of a value's type.
pub fn probe_of<T>(_: &T) -> Probe<T> {
    Probe::new()
}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[tool]` parameter",
    label = "neither an argument nor a context parameter",
    note = "an argument's type implements `serde::Deserialize` and `schemars::JsonSchema`",
    note = "if it derives `JsonSchema` and still fails, check that `schemars` is 1.x in Cargo.toml (`schemars = \"1\"`): a 0.8 derive implements another crate's trait",
    note = "a context parameter's type implements `mcp_runtime::context::FromContext`"
)]
pub trait ToolParameter {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]`",
    label = "unsupported return type",
    note = "return a type that implements `serde::Serialize` and `schemars::JsonSchema` (it becomes `structuredContent`), `String`, a content block, `CallToolResult`, or a type that implements `mcp_runtime::IntoCallToolResult`",
    note = "any of these may be wrapped in `Result<_, E>` with `E: Display`: an `Err` becomes a tool error the model reads",
    note = "if it derives `JsonSchema` and still fails, check that `schemars` is 1.x in Cargo.toml (`schemars = \"1\"`): a 0.8 derive implements another crate's trait"
)]
pub trait ToolReturn {}

/// The `E` of a `Result` a `#[tool]` or `#[prompt]` returns: its `Display` text is the error
/// the client sees. Every `Display` type is one; the trait exists for its diagnostic.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool or prompt: it does not implement `Display`",
    label = "an `Err` is sent to the client as its `Display` text",
    note = "a `#[tool]` reports `Err(e)` as a tool error (`isError: true`) whose text, `e.to_string()`, the model reads",
    note = "implement `std::fmt::Display` for `{Self}`, or map the error into `ToolError` or `String`"
)]
pub trait ErrorMessage {
    fn error_message(&self) -> String;
}

impl<E: Display + ?Sized> ErrorMessage for E {
    fn error_message(&self) -> String {
        self.to_string()
    }
}

/// Dispatch on a tool parameter's type.
pub mod param {
    use super::*;
    use crate::context::FromContext;
    use crate::tool::{Args, extract_args_struct, extract_argument};

    pub trait ViaArgsStruct<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: DeserializeOwned + JsonSchema> ViaArgsStruct<Args<T>> for &&&Probe<Args<T>> {
        fn declare(self, builder: &mut ToolBuilder, _: &ParamMeta<Args<T>>) {
            builder.args_struct::<T>();
        }
        fn extract(self, call: &mut ToolCall, _: &ParamMeta<Args<T>>) -> Option<Args<T>> {
            extract_args_struct::<T>(call).map(Args)
        }
    }

    pub trait ViaContext<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&Probe<P> {
        fn declare(self, _: &mut ToolBuilder, _: &ParamMeta<P>) {}
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P> {
            context_parameter(call.context(), meta.name)
                .map_err(|error| call.record(error))
                .ok()
        }
    }

    pub trait ViaArgument<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: DeserializeOwned + JsonSchema> ViaArgument<P> for &Probe<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) {
            builder.argument(meta);
        }
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P> {
            extract_argument(call, meta)
        }
    }

    /// The last resort. Only `declare` carries the diagnostic bound, so an unsupported type is
    /// reported once; rustc blames the `meta` argument, which the expansion spans over the type.
    pub trait ViaUnsupported<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>)
        where
            P: ToolParameter;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn declare(self, _: &mut ToolBuilder, _: &ParamMeta<P>)
        where
            P: ToolParameter,
        {
        }
        fn extract(self, _: &mut ToolCall, _: &ParamMeta<P>) -> Option<P> {
            None
        }
    }
}

/// Dispatch on a tool's return type.
pub mod ret {
    use super::*;
    use crate::IntoCallToolResult;
    use crate::tool::structured_result;

    /// Why a call failed: the `Err` of a `Result` return, as text.
    pub struct Failure(String);

    impl Failure {
        pub fn into_result(self) -> CallToolResult {
            CallToolResult::error(self.0)
        }

        pub fn message(self) -> String {
            self.0
        }
    }

    pub trait SplitResult<T, E> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: Result<T, E>) -> Result<T, Failure>
        where
            E: ErrorMessage;
    }

    impl<T, E> SplitResult<T, E> for &Probe<Result<T, E>> {
        fn inner(self) -> Probe<T> {
            Probe::new()
        }
        fn split(self, value: Result<T, E>) -> Result<T, Failure>
        where
            E: ErrorMessage,
        {
            value.map_err(|error| Failure(error.error_message()))
        }
    }

    pub trait SplitPlain<T> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: T) -> Result<T, Failure>;
    }

    impl<T> SplitPlain<T> for Probe<T> {
        fn inner(self) -> Probe<T> {
            self
        }
        fn split(self, value: T) -> Result<T, Failure> {
            Ok(value)
        }
    }

    pub trait ViaContent<T> {
        fn declare_output(self, builder: &mut ToolBuilder, at: &Probe<T>);
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult;
    }

    impl<T: IntoCallToolResult> ViaContent<T> for &&Probe<T> {
        fn declare_output(self, _: &mut ToolBuilder, _: &Probe<T>) {}
        fn into_result(self, value: T, _: &ToolCall) -> CallToolResult {
            value.into_call_tool_result()
        }
    }

    pub trait ViaStructured<T> {
        fn declare_output(self, builder: &mut ToolBuilder, at: &Probe<T>);
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult;
    }

    impl<T: Serialize + JsonSchema> ViaStructured<T> for &Probe<T> {
        fn declare_output(self, builder: &mut ToolBuilder, _: &Probe<T>) {
            builder.structured_output::<T>();
        }
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult {
            structured_result(value, call)
        }
    }

    /// The last resort. Only `declare_output` carries the diagnostic bound, so an unsupported
    /// type is reported once; rustc blames the `at` argument, which the expansion spans over the
    /// return type.
    pub trait ViaUnsupportedReturn<T> {
        fn declare_output(self, builder: &mut ToolBuilder, at: &Probe<T>)
        where
            T: ToolReturn;
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult;
    }

    impl<T> ViaUnsupportedReturn<T> for Probe<T> {
        fn declare_output(self, _: &mut ToolBuilder, _: &Probe<T>)
        where
            T: ToolReturn,
        {
        }
        fn into_result(self, _: T, _: &ToolCall) -> CallToolResult {
            CallToolResult::default()
        }
    }
}

/// The end of a handler: every argument converted, or the tool error that lists what did not.
pub fn arguments_ok(call: &mut ToolCall) -> bool {
    call.arguments_ok()
}

pub fn argument_error(call: &ToolCall) -> CallToolResult {
    call.argument_error()
}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[prompt]` parameter",
    label = "neither an argument nor a context parameter",
    note = "a prompt argument is a string on the wire: its type implements `FromStr` (with an error that implements `Display`); `Option<T>` makes it optional",
    note = "a context parameter's type implements `mcp_runtime::context::FromContext`"
)]
pub trait PromptParameter {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[prompt]`",
    label = "unsupported return type",
    note = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result` of one of them"
)]
pub trait PromptReturn {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[resource]` parameter",
    label = "neither a template variable nor a context parameter",
    note = "a template variable's type implements `FromStr` (with an error that implements `Display`); `Option<T>` for optional variables, `Vec<T>` for exploded ones",
    note = "a context parameter's type implements `mcp_runtime::context::FromContext`"
)]
pub trait ResourceParameter {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resource]`",
    label = "unsupported return type",
    note = "return `String` (text), `Vec<u8>` or `Blob` (binary), `ResourceContents`, `Vec<ResourceContents>`, or any `T: Serialize` (JSON text), or a `Result<_, E>` with `E: Into<ResourceError>`"
)]
pub trait ResourceReturn {}

#[diagnostic::on_unimplemented(
    message = "a `#[resource]` parameter of type `{Self}` is not a variable of its URI template",
    label = "no `{{..}}` expression of this template names it",
    note = "add an expression for the parameter to the template, or remove the parameter",
    note = "only context parameters (types that implement `mcp_runtime::context::FromContext`) may be left out of the template"
)]
pub trait ContextParameter: Sized {
    fn extract(call: &ResourceCall) -> Result<Self, crate::context::ContextError>;
}

#[diagnostic::do_not_recommend]
impl<T: crate::context::FromContext> ContextParameter for T {
    fn extract(call: &ResourceCall) -> Result<Self, crate::context::ContextError> {
        T::from_context(call.context())
    }
}

/// A `#[resource]` parameter that is not a template variable: it must be a context parameter.
pub fn resource_context<T: ContextParameter>(
    call: &mut ResourceCall,
    meta: &ParamMeta<T>,
) -> Option<T> {
    match T::extract(call) {
        Ok(value) => Some(value),
        Err(error) => {
            call.record(format!(
                "context parameter `{}` is unavailable: {error}",
                meta.name
            ));
            None
        }
    }
}

/// Icons from anything that lists them.
pub fn icons<I: Into<crate::protocol::Icon>>(
    icons: impl IntoIterator<Item = I>,
) -> Vec<crate::protocol::Icon> {
    icons.into_iter().map(Into::into).collect()
}

/// The values of an enum-like type, from its JSON Schema, for automatic completion.
pub mod enum_values {
    use super::*;

    pub trait ViaOptionSchema {
        fn enum_values(self) -> Option<Vec<String>>;
    }

    impl<T: JsonSchema> ViaOptionSchema for &&Probe<Option<T>> {
        fn enum_values(self) -> Option<Vec<String>> {
            crate::schema::enum_values::<T>()
        }
    }

    pub trait ViaSchema {
        fn enum_values(self) -> Option<Vec<String>>;
    }

    impl<T: JsonSchema> ViaSchema for &Probe<T> {
        fn enum_values(self) -> Option<Vec<String>> {
            crate::schema::enum_values::<T>()
        }
    }

    pub trait ViaNothing {
        fn enum_values(self) -> Option<Vec<String>>;
    }

    impl<T> ViaNothing for Probe<T> {
        fn enum_values(self) -> Option<Vec<String>> {
            None
        }
    }
}

/// Dispatch on a prompt parameter's type.
pub mod prompt_param {
    use std::str::FromStr;

    use super::*;
    use crate::context::FromContext;

    pub trait ViaContext<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&&Probe<P> {
        fn declare(self, _: &mut PromptBuilder, _: &ParamMeta<P>) {}
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P> {
            context_parameter(call.context(), meta.name)
                .map_err(|error| call.record(error))
                .ok()
        }
    }

    pub trait ViaOptional<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaOptional<Option<T>> for &&Probe<Option<T>>
    where
        T::Err: Display,
    {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<Option<T>>) {
            builder.argument(meta.name, meta.description, false);
        }
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<Option<T>>) -> Option<Option<T>> {
            match call.optional::<T>(meta.name)? {
                None => Some(meta.default.and_then(|d| d())),
                some => Some(some),
            }
        }
    }

    pub trait ViaRequired<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>);
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaRequired<T> for &Probe<T>
    where
        T::Err: Display,
    {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<T>) {
            builder.argument(meta.name, meta.description, meta.default.is_none());
        }
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<T>) -> Option<T> {
            match meta.default {
                Some(default) => call
                    .optional::<T>(meta.name)
                    .map(|v| v.unwrap_or_else(default)),
                None => call.required::<T>(meta.name),
            }
        }
    }

    pub trait ViaUnsupported<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>)
        where
            P: PromptParameter;
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>
        where
            P: PromptParameter;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn declare(self, _: &mut PromptBuilder, _: &ParamMeta<P>)
        where
            P: PromptParameter,
        {
        }
        fn extract(self, _: &mut PromptCall, _: &ParamMeta<P>) -> Option<P>
        where
            P: PromptParameter,
        {
            None
        }
    }
}

/// Dispatch on a prompt's return type (after [`ret::SplitResult`] took a `Result` apart).
pub mod prompt_ret {
    use super::*;
    use crate::prompt::IntoGetPromptResult;

    pub trait ViaPrompt<T> {
        fn check(self);
        fn into_prompt_result(self, value: T) -> GetPromptResult;
    }

    impl<T: IntoGetPromptResult> ViaPrompt<T> for &&Probe<T> {
        fn check(self) {}
        fn into_prompt_result(self, value: T) -> GetPromptResult {
            value.into_get_prompt_result()
        }
    }

    pub trait ViaUnsupported<T> {
        fn check(self)
        where
            T: PromptReturn;
        fn into_prompt_result(self, value: T) -> GetPromptResult
        where
            T: PromptReturn;
    }

    impl<T> ViaUnsupported<T> for Probe<T> {
        fn check(self)
        where
            T: PromptReturn,
        {
        }
        fn into_prompt_result(self, _: T) -> GetPromptResult
        where
            T: PromptReturn,
        {
            GetPromptResult::default()
        }
    }

    /// A prompt's `Err` is an invalid-params error: its arguments are its only input.
    pub fn failure(failure: super::ret::Failure) -> ErrorObject {
        ErrorObject::invalid_params(failure.message())
    }
}

/// Dispatch on a resource parameter's type.
pub mod resource_param {
    use std::str::FromStr;

    use super::*;
    use crate::context::FromContext;
    use crate::resource::Binding;

    fn parse<T: FromStr>(call: &mut ResourceCall, name: &str, text: &str) -> Option<T>
    where
        T::Err: Display,
    {
        match text.parse::<T>() {
            Ok(value) => Some(value),
            Err(error) => {
                call.record(format!("invalid value for `{name}`: {error}"));
                None
            }
        }
    }

    pub trait ViaContext<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&&Probe<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P> {
            context_parameter(call.context(), meta.name)
                .map_err(|error| call.record(error))
                .ok()
        }
    }

    pub trait ViaList<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaList<Vec<T>> for &&Probe<Vec<T>>
    where
        T::Err: Display,
    {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<Vec<T>>) -> Option<Vec<T>> {
            let texts = match call.take(meta.name) {
                Binding::Absent => return Some(meta.default.map_or_else(Vec::new, |d| d())),
                Binding::Single(text) => vec![text],
                Binding::List(texts) => texts,
            };
            let mut out = Vec::with_capacity(texts.len());
            for text in texts {
                out.push(parse::<T>(call, meta.name, &text)?);
            }
            Some(out)
        }
    }

    pub trait ViaOptional<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaOptional<Option<T>> for &&Probe<Option<T>>
    where
        T::Err: Display,
    {
        fn extract(
            self,
            call: &mut ResourceCall,
            meta: &ParamMeta<Option<T>>,
        ) -> Option<Option<T>> {
            match call.take(meta.name) {
                Binding::Absent => Some(meta.default.and_then(|d| d())),
                Binding::Single(text) => parse::<T>(call, meta.name, &text).map(Some),
                Binding::List(parts) => parse::<T>(call, meta.name, &parts.join(",")).map(Some),
            }
        }
    }

    pub trait ViaSingle<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaSingle<T> for &Probe<T>
    where
        T::Err: Display,
    {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<T>) -> Option<T> {
            match call.take(meta.name) {
                Binding::Single(text) => parse::<T>(call, meta.name, &text),
                Binding::Absent => match meta.default {
                    Some(default) => Some(default()),
                    None => {
                        call.record(format!("the URI has no value for `{}`", meta.name));
                        None
                    }
                },
                // Unencoded commas split a value; a scalar takes it whole again.
                Binding::List(parts) => parse::<T>(call, meta.name, &parts.join(",")),
            }
        }
    }

    pub trait ViaUnsupported<P> {
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>
        where
            P: ResourceParameter;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn extract(self, _: &mut ResourceCall, _: &ParamMeta<P>) -> Option<P>
        where
            P: ResourceParameter,
        {
            None
        }
    }
}

/// Dispatch on a resource's return type.
pub mod resource_ret {
    use super::*;
    use crate::resource::{IntoResourceContents, json_contents};

    pub trait SplitResult<T, E> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: Result<T, E>) -> Result<T, ResourceError>
        where
            E: Into<ResourceError>;
    }

    impl<T, E> SplitResult<T, E> for &Probe<Result<T, E>> {
        fn inner(self) -> Probe<T> {
            Probe::new()
        }
        fn split(self, value: Result<T, E>) -> Result<T, ResourceError>
        where
            E: Into<ResourceError>,
        {
            value.map_err(Into::into)
        }
    }

    pub trait SplitPlain<T> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: T) -> Result<T, ResourceError>;
    }

    impl<T> SplitPlain<T> for Probe<T> {
        fn inner(self) -> Probe<T> {
            self
        }
        fn split(self, value: T) -> Result<T, ResourceError> {
            Ok(value)
        }
    }

    pub trait ViaContents<T> {
        fn check(self);
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>;
    }

    impl<T: IntoResourceContents> ViaContents<T> for &&Probe<T> {
        fn check(self) {}
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError> {
            Ok(value.into_resource_contents(call.uri(), call.mime_type()))
        }
    }

    pub trait ViaJson<T> {
        fn check(self);
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>;
    }

    impl<T: Serialize> ViaJson<T> for &Probe<T> {
        fn check(self) {}
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError> {
            json_contents(&value, call.uri(), call.mime_type())
        }
    }

    pub trait ViaUnsupported<T> {
        fn check(self)
        where
            T: ResourceReturn;
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>
        where
            T: ResourceReturn;
    }

    impl<T> ViaUnsupported<T> for Probe<T> {
        fn check(self)
        where
            T: ResourceReturn,
        {
        }
        fn into_contents(
            self,
            _: T,
            _: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>
        where
            T: ResourceReturn,
        {
            Ok(Vec::new())
        }
    }
}

/// The instances a template's `list = f` names: `f` is a plain or an async function, taking
/// nothing or, in a `#[server]`, `&self`.
pub mod list {
    use std::future::Future;

    use super::*;
    use crate::resource::IntoResourceList;

    /// A function that lists, with or without the server's state.
    pub trait ListSource<S, M> {
        type Output;
        fn call_with(&self, state: &S) -> Self::Output;
    }

    impl<S, R, F: Fn() -> R> ListSource<S, ()> for F {
        type Output = R;
        fn call_with(&self, _: &S) -> R {
            self()
        }
    }

    impl<S, R, F: Fn(&S) -> R> ListSource<S, (S,)> for F {
        type Output = R;
        fn call_with(&self, state: &S) -> R {
            self(state)
        }
    }

    pub fn call<S, M, F: ListSource<S, M>>(state: &S, f: &F) -> F::Output {
        f.call_with(state)
    }

    pub trait ViaFuture<T> {
        fn resolve(self, value: T) -> impl Future<Output = Vec<ResourceInfo>> + Send;
    }

    // The trait's `+ Send` bound on the future needs the explicit `impl Future` form.
    #[allow(clippy::manual_async_fn)]
    impl<F> ViaFuture<F> for &&Probe<F>
    where
        F: Future + Send,
        F::Output: IntoResourceList,
    {
        fn resolve(self, value: F) -> impl Future<Output = Vec<ResourceInfo>> + Send {
            async move { value.await.into_resource_list() }
        }
    }

    pub trait ViaValue<T> {
        fn resolve(self, value: T) -> impl Future<Output = Vec<ResourceInfo>> + Send;
    }

    impl<T: IntoResourceList> ViaValue<T> for &Probe<T> {
        fn resolve(self, value: T) -> impl Future<Output = Vec<ResourceInfo>> + Send {
            let list = value.into_resource_list();
            async move { list }
        }
    }
}

/// A prompt's argument error: the invalid-params error naming every bad argument.
pub fn prompt_arguments_ok(call: &PromptCall) -> bool {
    call.arguments_ok()
}

pub fn prompt_argument_error(call: &PromptCall) -> ErrorObject {
    call.argument_error()
}

pub fn resource_variables_ok(call: &ResourceCall) -> bool {
    call.variables_ok()
}

pub fn resource_variable_error(call: &ResourceCall) -> ResourceError {
    call.variable_error()
}

// ---------------------------------------------------------------------------------------------
// `#[resource]` template variables judged by trait (appended by the macros' owner; keep it last).
//
// Whether a parameter can take an exploded (`{/path*}`) or a possibly absent (`{?q}`) variable
// is decided here by the parameter's type, not by how the macro sees it spelled, so an alias
// (`type Level = Option<String>`) is accepted and `Foo` named `Vec` elsewhere is not. The macro
// calls the two functions below, spanned at the parameter's type, only for the variables that
// need the property; a wrong type is one error at that type.
// ---------------------------------------------------------------------------------------------

/// A type an exploded template variable (`{name*}`) binds: a list.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take an exploded URI-template variable (`{{name*}}`): it binds a list",
    label = "make this a `Vec<T>`",
    note = "an exploded variable binds one item per separator, so its parameter is a `Vec<T>` with `T: FromStr`"
)]
pub trait ExplodedVariable {}

impl<T> ExplodedVariable for Vec<T> {}

/// A type a query variable (`{?name}`, `{&name}`) without a default binds: one that can be
/// absent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a query variable (`{{?name}}`): the URI may leave it out",
    label = "make this an `Option<T>`, or give it `#[arg(default = ...)]`",
    note = "a query variable binds `None` (or an empty `Vec<T>`) when the URI does not have it"
)]
pub trait OptionalVariable {}

impl<T> OptionalVariable for Option<T> {}

impl<T> OptionalVariable for Vec<T> {}

/// Compiles only when `T` can take an exploded variable.
pub const fn exploded_variable<T: ExplodedVariable>() {}

/// Compiles only when `T` can take a variable the URI may leave out.
pub const fn optional_variable<T: OptionalVariable>() {}

/// `#[server(scopes = [..])]`: every item of the impl block needs these scopes too.
pub fn add_scopes(items: &mut Items, scopes: impl IntoIterator<Item = &'static str>) {
    let scopes: Vec<&'static str> = scopes.into_iter().collect();
    let add = |metadata: &mut crate::metadata::Metadata| {
        for scope in &scopes {
            if !metadata.scopes.iter().any(|s| s == scope) {
                metadata.scopes.push(std::borrow::Cow::Borrowed(scope));
            }
        }
    };
    for tool in &mut items.tools {
        add(&mut tool.metadata);
    }
    for prompt in &mut items.prompts {
        add(&mut prompt.metadata);
    }
    for resource in &mut items.resources {
        add(&mut resource.metadata.metadata);
    }
}
