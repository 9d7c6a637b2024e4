//! What the code `#[tool]` (and the other macros) expand to reaches. **Not public API**: nothing
//! here is covered by semver, and it changes with the macros.
//!
//! Parameters and return types are told apart by trait, not by spelling, through autoref
//! specialization on [`Probe`]: the expansion calls a method on `&&&Probe<T>`, and method
//! resolution picks the most specific impl whose bounds `T` meets. Each dispatch answers with a
//! verdict, `Probe<Accepted>` from a supported case and `Probe<T>` from the last resort, which
//! the expansion hands to the traits of [`crate::bounds`] by a qualified call (`Trait::check(&v)`):
//! a supported type passes, an unsupported one fails the requirement it misses, with that
//! trait's `#[diagnostic::on_unimplemented]` message at the parameter or return type, and no
//! note pointing in here (a bound on a method here would add one).

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
    ToolDef, ToolReply,
};

/// A `#[tool]` function's builder, around its handler.
pub fn tool_builder<F>(name: &'static str, handler: F) -> ToolBuilder
where
    F: Fn(ToolCall) -> BoxFuture<ToolReply> + Send + Sync + 'static,
{
    let mut builder = ToolBuilder::with_handler(
        name.into(),
        crate::tool::ToolHandler::Replies(Arc::new(handler)),
    );
    // Until a parameter declares that it reads the context (`ViaContext`).
    builder.reads_context(false);
    builder
}
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

/// A parameter whose default may be written as a string literal: `#[arg(default = "x")]`.
#[diagnostic::on_unimplemented(
    message = "a string literal default needs a string parameter (`String`, `Box<str>`, `Arc<str>`, `Cow<'static, str>`), not `{Self}`",
    label = "write the default as a value of the parameter's type"
)]
pub trait FromStrLiteral {
    fn from_str_literal(text: &'static str) -> Self;
}

impl FromStrLiteral for ::std::string::String {
    fn from_str_literal(text: &'static str) -> Self {
        text.to_owned()
    }
}

impl FromStrLiteral for ::std::boxed::Box<str> {
    fn from_str_literal(text: &'static str) -> Self {
        text.into()
    }
}

impl FromStrLiteral for ::std::sync::Arc<str> {
    fn from_str_literal(text: &'static str) -> Self {
        text.into()
    }
}

impl FromStrLiteral for ::std::borrow::Cow<'static, str> {
    fn from_str_literal(text: &'static str) -> Self {
        ::std::borrow::Cow::Borrowed(text)
    }
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

/// Why a handler's context parameter `name` is unavailable, as its call records it: the one
/// message behind the tool, prompt and resource `ViaContext` impls and [`resource_context`].
fn unavailable(name: &str, error: &crate::context::ContextError) -> String {
    format!("context parameter `{name}` is unavailable: {error}")
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

pub use crate::bounds;

/// The verdict of a supported type: it meets every requirement of [`crate::bounds`].
pub type Accepted = String;

/// The verdict of every supported case.
pub const fn accepted() -> Probe<Accepted> {
    Probe::new()
}

/// Dispatch on a tool parameter's type. `declare` answers with the verdict the expansion checks
/// against [`bounds::ToolArgumentDeserialize`] and [`bounds::ToolArgumentSchema`].
pub mod param {
    use super::*;
    use crate::context::FromContext;
    use crate::tool::{Args, extract_args_struct, extract_argument};

    pub trait ViaArgsStruct<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: DeserializeOwned + JsonSchema> ViaArgsStruct<Args<T>> for &&&Probe<Args<T>> {
        fn declare(self, builder: &mut ToolBuilder, _: &ParamMeta<Args<T>>) -> Probe<Accepted> {
            builder.args_struct::<T>();
            accepted()
        }
        fn extract(self, call: &mut ToolCall, _: &ParamMeta<Args<T>>) -> Option<Args<T>> {
            extract_args_struct::<T>(call).map(Args)
        }
    }

    pub trait ViaContext<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&Probe<P> {
        fn declare(self, builder: &mut ToolBuilder, _: &ParamMeta<P>) -> Probe<Accepted> {
            builder.reads_context(true);
            accepted()
        }
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P> {
            P::from_context(call.context())
                .map_err(|error| call.record(unavailable(meta.name, &error)))
                .ok()
        }
    }

    pub trait ViaArgument<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: DeserializeOwned + JsonSchema> ViaArgument<P> for &Probe<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) -> Probe<Accepted> {
            builder.argument(meta);
            accepted()
        }
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P> {
            extract_argument(call, meta)
        }
    }

    /// The last resort: `P` itself is the verdict, which fails the requirement it misses.
    pub trait ViaUnsupported<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>) -> Probe<P>;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn declare(self, _: &mut ToolBuilder, _: &ParamMeta<P>) -> Probe<P> {
            self
        }
        fn extract(self, _: &mut ToolCall, _: &ParamMeta<P>) -> Option<P> {
            None
        }
    }
}

/// Dispatch on a tool's return type (and a prompt's `Result`). `declare_output` answers with
/// the verdict the expansion checks against [`bounds::ToolOutputSerialize`] and
/// [`bounds::ToolOutputSchema`]; `split` hands an `Err` back whole, for the expansion to turn
/// into text through [`bounds::ErrorDisplay`].
pub mod ret {
    use std::convert::Infallible;

    use super::*;
    use crate::IntoCallToolResult;
    use crate::tool::{ToolReply, structured_reply};

    /// Why a call failed: the `Err` of a `Result` return, as text.
    pub struct Failure(String);

    impl Failure {
        pub fn new(message: String) -> Self {
            Self(message)
        }

        pub fn into_result(self) -> ToolReply {
            ToolReply::Result(CallToolResult::error(self.0))
        }

        pub fn message(self) -> String {
            self.0
        }
    }

    pub trait SplitResult<T, E> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: Result<T, E>) -> Result<T, E>;
    }

    impl<T, E> SplitResult<T, E> for &Probe<Result<T, E>> {
        fn inner(self) -> Probe<T> {
            Probe::new()
        }
        fn split(self, value: Result<T, E>) -> Result<T, E> {
            value
        }
    }

    pub trait SplitPlain<T> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: T) -> Result<T, Infallible>;
    }

    impl<T> SplitPlain<T> for Probe<T> {
        fn inner(self) -> Probe<T> {
            self
        }
        fn split(self, value: T) -> Result<T, Infallible> {
            Ok(value)
        }
    }

    pub trait ViaContent<T> {
        fn declare_output(self, builder: &mut ToolBuilder) -> Probe<Accepted>;
        fn into_result(self, value: T, call: &ToolCall) -> ToolReply;
    }

    impl<T: IntoCallToolResult> ViaContent<T> for &&Probe<T> {
        fn declare_output(self, builder: &mut ToolBuilder) -> Probe<Accepted> {
            T::declare_output(builder);
            accepted()
        }
        fn into_result(self, value: T, call: &ToolCall) -> ToolReply {
            ToolReply::Result(value.into_result_of(call))
        }
    }

    pub trait ViaStructured<T> {
        fn declare_output(self, builder: &mut ToolBuilder) -> Probe<Accepted>;
        fn into_result(self, value: T, call: &ToolCall) -> ToolReply;
    }

    impl<T: Serialize + JsonSchema> ViaStructured<T> for &Probe<T> {
        fn declare_output(self, builder: &mut ToolBuilder) -> Probe<Accepted> {
            builder.structured_output::<T>();
            accepted()
        }
        fn into_result(self, value: T, call: &ToolCall) -> ToolReply {
            structured_reply(value, call)
        }
    }

    /// The last resort: `T` itself is the verdict, which fails the requirement it misses.
    pub trait ViaUnsupportedReturn<T> {
        fn declare_output(self, builder: &mut ToolBuilder) -> Probe<T>;
        fn into_result(self, value: T, call: &ToolCall) -> ToolReply;
    }

    impl<T> ViaUnsupportedReturn<T> for Probe<T> {
        fn declare_output(self, _: &mut ToolBuilder) -> Probe<T> {
            self
        }
        fn into_result(self, _: T, _: &ToolCall) -> ToolReply {
            ToolReply::Result(CallToolResult::default())
        }
    }
}

/// The end of a handler: every argument converted, or the tool error that lists what did not.
pub fn arguments_ok(call: &mut ToolCall) -> bool {
    call.arguments_ok()
}

pub fn argument_error(call: &ToolCall) -> ToolReply {
    ToolReply::Result(call.argument_error())
}

/// A `#[resource]` parameter that is not a template variable: a context parameter, taken by
/// the expansion through [`bounds::ContextParameter`] (which a type that is none fails, at the
/// type); when it is unavailable, the reason is recorded.
pub fn resource_context<T>(
    call: &mut ResourceCall,
    meta: &ParamMeta<T>,
    value: Result<T, crate::context::ContextError>,
) -> Option<T> {
    value
        .map_err(|error| call.record(unavailable(meta.name, &error)))
        .ok()
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

/// Dispatch on a prompt parameter's type. `declare` answers with the verdict the expansion
/// checks against [`bounds::PromptArgumentFromStr`].
pub mod prompt_param {
    use std::str::FromStr;

    use super::*;
    use crate::context::FromContext;

    pub trait ViaContext<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&&Probe<P> {
        fn declare(self, _: &mut PromptBuilder, _: &ParamMeta<P>) -> Probe<Accepted> {
            accepted()
        }
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P> {
            P::from_context(call.context())
                .map_err(|error| call.record(unavailable(meta.name, &error)))
                .ok()
        }
    }

    pub trait ViaOptional<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaOptional<Option<T>> for &&Probe<Option<T>>
    where
        T::Err: Display,
    {
        fn declare(
            self,
            builder: &mut PromptBuilder,
            meta: &ParamMeta<Option<T>>,
        ) -> Probe<Accepted> {
            builder.argument(meta.name, meta.description, false);
            accepted()
        }
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<Option<T>>) -> Option<Option<T>> {
            match call.optional::<T>(meta.name)? {
                None => Some(meta.default.and_then(|d| d())),
                some => Some(some),
            }
        }
    }

    pub trait ViaRequired<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>) -> Probe<Accepted>;
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaRequired<T> for &Probe<T>
    where
        T::Err: Display,
    {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<T>) -> Probe<Accepted> {
            builder.argument(meta.name, meta.description, meta.default.is_none());
            accepted()
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

    /// The last resort: `P` itself is the verdict, which fails the requirement it misses.
    pub trait ViaUnsupported<P> {
        fn declare(self, builder: &mut PromptBuilder, meta: &ParamMeta<P>) -> Probe<P>;
        fn extract(self, call: &mut PromptCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn declare(self, _: &mut PromptBuilder, _: &ParamMeta<P>) -> Probe<P> {
            self
        }
        fn extract(self, _: &mut PromptCall, _: &ParamMeta<P>) -> Option<P> {
            None
        }
    }
}

/// Dispatch on a prompt's return type (after [`ret::SplitResult`] took a `Result` apart). The
/// expansion checks the type against [`bounds::PromptOutput`], the bound of `ViaPrompt`.
pub mod prompt_ret {
    use super::*;
    use crate::prompt::IntoGetPromptResult;

    pub trait ViaPrompt<T> {
        fn into_prompt_result(self, value: T) -> GetPromptResult;
    }

    impl<T: IntoGetPromptResult> ViaPrompt<T> for &&Probe<T> {
        fn into_prompt_result(self, value: T) -> GetPromptResult {
            value.into_get_prompt_result()
        }
    }

    /// The last resort, for a type the check refuses.
    pub trait ViaUnsupported<T> {
        fn into_prompt_result(self, value: T) -> GetPromptResult;
    }

    impl<T> ViaUnsupported<T> for Probe<T> {
        fn into_prompt_result(self, _: T) -> GetPromptResult {
            GetPromptResult::default()
        }
    }

    /// A prompt's `Err` is an invalid-params error: its arguments are its only input.
    pub fn failure(message: String) -> ErrorObject {
        ErrorObject::invalid_params(message)
    }
}

/// Dispatch on a resource parameter's type. `verdict` is what the expansion checks against
/// [`bounds::ResourceVariableFromStr`].
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
                call.record(format!(
                    "invalid value for `{name}`: {}",
                    crate::protocol::echo(&error.to_string())
                ));
                None
            }
        }
    }

    pub trait ViaContext<P> {
        fn verdict(self) -> Probe<Accepted>;
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P: FromContext> ViaContext<P> for &&&Probe<P> {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P> {
            P::from_context(call.context())
                .map_err(|error| call.record(unavailable(meta.name, &error)))
                .ok()
        }
    }

    pub trait ViaList<P> {
        fn verdict(self) -> Probe<Accepted>;
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaList<Vec<T>> for &&Probe<Vec<T>>
    where
        T::Err: Display,
    {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
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
        fn verdict(self) -> Probe<Accepted>;
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaOptional<Option<T>> for &&Probe<Option<T>>
    where
        T::Err: Display,
    {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
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
        fn verdict(self) -> Probe<Accepted>;
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<T: FromStr> ViaSingle<T> for &Probe<T>
    where
        T::Err: Display,
    {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
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

    /// The last resort: `P` itself is the verdict, which fails the requirement it misses.
    pub trait ViaUnsupported<P> {
        fn verdict(self) -> Probe<P>;
        fn extract(self, call: &mut ResourceCall, meta: &ParamMeta<P>) -> Option<P>;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn verdict(self) -> Probe<P> {
            self
        }
        fn extract(self, _: &mut ResourceCall, _: &ParamMeta<P>) -> Option<P> {
            None
        }
    }
}

/// Dispatch on a resource's return type. `verdict` is what the expansion checks against
/// [`bounds::ResourceOutputSerialize`]; `split` hands an `Err` back whole, for the expansion to convert
/// through [`bounds::ResourceFailure`].
pub mod resource_ret {
    use super::*;
    use crate::resource::{IntoResourceContents, json_contents};

    /// A `Result` return splits as a tool's does; only a plain value's (never) error differs.
    pub use super::ret::SplitResult;

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
        fn verdict(self) -> Probe<Accepted>;
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>;
    }

    impl<T: IntoResourceContents> ViaContents<T> for &&Probe<T> {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError> {
            Ok(value.into_resource_contents(call.uri(), call.mime_type()))
        }
    }

    pub trait ViaJson<T> {
        fn verdict(self) -> Probe<Accepted>;
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>;
    }

    impl<T: Serialize> ViaJson<T> for &Probe<T> {
        fn verdict(self) -> Probe<Accepted> {
            accepted()
        }
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError> {
            json_contents(&value, call.uri(), call.mime_type())
        }
    }

    /// The last resort: `T` itself is the verdict, which fails the requirement it misses.
    pub trait ViaUnsupported<T> {
        fn verdict(self) -> Probe<T>;
        fn into_contents(
            self,
            value: T,
            call: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError>;
    }

    impl<T> ViaUnsupported<T> for Probe<T> {
        fn verdict(self) -> Probe<T> {
            self
        }
        fn into_contents(
            self,
            _: T,
            _: &ResourceCall,
        ) -> Result<Vec<ResourceContents>, ResourceError> {
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
