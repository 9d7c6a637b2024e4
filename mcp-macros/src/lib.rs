//! The attribute macros of [`mcp-runtime`](https://docs.rs/mcp-runtime). Depend on `mcp-runtime`,
//! which re-exports them and documents what each generates; the code they generate names
//! `::mcp_runtime` (or the path given with `crate = "..."`).

mod expand;
mod internals;
mod uri_template;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool. See `mcp_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), input.into()).into()
}

/// Turns a function into an MCP resource or resource template. See `mcp_runtime::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::resource::expand(args.into(), input.into()).into()
}

/// Turns a function into an MCP prompt. See `mcp_runtime::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::prompt::expand(args.into(), input.into()).into()
}

/// Makes the `#[tool]`, `#[resource]` and `#[prompt]` methods of an impl block one server that
/// shares `&self`. See `mcp_runtime::server`.
#[proc_macro_attribute]
pub fn server(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::server::expand(args.into(), input.into()).into()
}

/// Derives `Elicit` for a struct (the form `ctx.elicit::<T>()` asks the user to fill in) or
/// `ElicitEnum` for a fieldless enum (a choice). See `mcp_runtime::Elicit`.
#[proc_macro_derive(Elicit, attributes(elicit))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    expand::elicit::expand(input.into()).into()
}
