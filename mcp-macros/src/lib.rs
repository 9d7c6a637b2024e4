//! The attribute macros of [`mcp-runtime`](https://docs.rs/mcp-runtime). Depend on `mcp-runtime`,
//! which re-exports them; the code they generate names `::mcp_runtime`.

mod expand;
mod internals;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool.
///
/// ```ignore
/// /// Add two integers.
/// #[tool(read_only, idempotent)]
/// async fn add(
///     /// First addend.
///     a: i64,
///     /// Second addend.
///     #[arg(default = 0)]
///     b: i64,
/// ) -> i64 {
///     a + b
/// }
/// ```
///
/// Keys: `name`, `title`, `description`, `read_only`, `destructive`, `idempotent`, `open_world`,
/// `icons`, `meta`, `crate`. On parameters, `#[arg(..)]` takes `rename`, `description`,
/// `default` and `example`. The `mcp-runtime` crate documents what each does.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), input.into()).into()
}
