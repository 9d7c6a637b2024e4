//! Code generation, one file per macro.

pub(crate) mod common;
pub(crate) mod elicit;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod server;
#[cfg(feature = "skills")]
pub(crate) mod skills;
pub(crate) mod tool;

use proc_macro2::TokenStream;
use quote::quote;

/// Wraps generated items in one anonymous `const` block, so nothing they name leaks into the
/// user's module.
pub(crate) fn wrap_in_const(body: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, non_snake_case, unused_imports, unused_mut, unused_variables, unused_qualifications, clippy::all)]
        const _: () = {
            #body
        };
    }
}
