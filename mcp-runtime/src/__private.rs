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
use serde_json::Value;

pub use ::core::convert::From;
pub use ::core::option::Option;
pub use ::core::result::Result;
pub use ::std::boxed::Box;
pub use ::std::vec::Vec;
pub use inventory;

pub use crate::tool::{
    BoxFuture, CallToolResult, ParamMeta, ToolAnnotations, ToolBuilder, ToolCall, ToolDef,
};

/// One `#[tool]` free function, registered through `inventory`.
pub struct ToolEntry {
    /// Builds the definition (schemas included); called once per server build.
    pub build: fn() -> ToolDef,
    /// The `TypeId` of the function item, so `Server::builder().tool(f)` can find it.
    pub type_id: fn() -> TypeId,
    /// The crate the tool was written in, for the default `serverInfo`.
    pub crate_name: &'static str,
    /// That crate's version.
    pub crate_version: &'static str,
}

inventory::collect!(ToolEntry);

/// The `TypeId` of a function item.
pub fn type_id_of<F: 'static>(_: &F) -> TypeId {
    TypeId::of::<F>()
}

/// A default value as JSON, for the schema. Requires `Serialize` only where a default is given.
pub fn default_json<T: Serialize>(make: impl FnOnce() -> T) -> Value {
    serde_json::to_value(make()).unwrap_or(Value::Null)
}

/// An example as JSON, for the schema.
pub fn example_json<T: Serialize + ?Sized>(example: &T) -> Value {
    serde_json::to_value(example).unwrap_or(Value::Null)
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
    note = "a context parameter's type implements `mcp_runtime::context::FromContext`"
)]
pub trait ToolParameter {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]`",
    label = "unsupported return type",
    note = "return a type that implements `serde::Serialize` and `schemars::JsonSchema` (it becomes `structuredContent`), `String`, a content block, `CallToolResult`, or a type that implements `mcp_runtime::IntoCallToolResult`",
    note = "wrap it in `Result<_, E>` with `E: Display` to report errors to the model"
)]
pub trait ToolReturn {}

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
            match P::from_context(call.context()) {
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

    pub trait ViaUnsupported<P> {
        fn declare(self, builder: &mut ToolBuilder, meta: &ParamMeta<P>)
        where
            P: ToolParameter;
        fn extract(self, call: &mut ToolCall, meta: &ParamMeta<P>) -> Option<P>
        where
            P: ToolParameter;
    }

    impl<P> ViaUnsupported<P> for Probe<P> {
        fn declare(self, _: &mut ToolBuilder, _: &ParamMeta<P>)
        where
            P: ToolParameter,
        {
        }
        fn extract(self, _: &mut ToolCall, _: &ParamMeta<P>) -> Option<P>
        where
            P: ToolParameter,
        {
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
    }

    pub trait SplitResult<T, E> {
        fn inner(self) -> Probe<T>;
        fn split(self, value: Result<T, E>) -> Result<T, Failure>
        where
            E: Display;
    }

    impl<T, E> SplitResult<T, E> for &Probe<Result<T, E>> {
        fn inner(self) -> Probe<T> {
            Probe::new()
        }
        fn split(self, value: Result<T, E>) -> Result<T, Failure>
        where
            E: Display,
        {
            value.map_err(|error| Failure(error.to_string()))
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
        fn declare_output(self, builder: &mut ToolBuilder);
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult;
    }

    impl<T: IntoCallToolResult> ViaContent<T> for &&Probe<T> {
        fn declare_output(self, _: &mut ToolBuilder) {}
        fn into_result(self, value: T, _: &ToolCall) -> CallToolResult {
            value.into_call_tool_result()
        }
    }

    pub trait ViaStructured<T> {
        fn declare_output(self, builder: &mut ToolBuilder);
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult;
    }

    impl<T: Serialize + JsonSchema> ViaStructured<T> for &Probe<T> {
        fn declare_output(self, builder: &mut ToolBuilder) {
            builder.structured_output::<T>();
        }
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult {
            structured_result(value, call)
        }
    }

    pub trait ViaUnsupportedReturn<T> {
        fn declare_output(self, builder: &mut ToolBuilder)
        where
            T: ToolReturn;
        fn into_result(self, value: T, call: &ToolCall) -> CallToolResult
        where
            T: ToolReturn;
    }

    impl<T> ViaUnsupportedReturn<T> for Probe<T> {
        fn declare_output(self, _: &mut ToolBuilder)
        where
            T: ToolReturn,
        {
        }
        fn into_result(self, _: T, _: &ToolCall) -> CallToolResult
        where
            T: ToolReturn,
        {
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
