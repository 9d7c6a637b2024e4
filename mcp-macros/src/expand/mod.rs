//! Code generation, one file per macro.

pub(crate) mod common;
pub(crate) mod elicit;
#[cfg(feature = "openapi")]
pub(crate) mod openapi;
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

/// The directory a path given to a file-reading macro is relative to: the directory of the
/// file the macro is called in, as `include_bytes!` resolves its path (the crate's directory
/// when the compiler does not say which file).
#[cfg(any(feature = "skills", feature = "openapi"))]
pub(crate) fn call_dir(
    call_file: Option<std::path::PathBuf>,
    macro_name: &str,
) -> Result<std::path::PathBuf, String> {
    use std::path::{Path, PathBuf};
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let Some(file) = call_file else {
        // The compiler did not say which file (a tool expanding macros on its own): the crate.
        return manifest
            .ok_or_else(|| "cannot tell where the crate is (no CARGO_MANIFEST_DIR)".to_owned());
    };
    // A relative path is relative to where the compiler runs (under cargo, the workspace root).
    let candidates = [
        Some(file.clone()).filter(|f| f.is_absolute()),
        std::env::current_dir().ok().map(|cwd| cwd.join(&file)),
        manifest.as_ref().map(|m| m.join(&file)),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|f| f.is_file())
        .and_then(|f| f.parent().map(Path::to_path_buf))
        .ok_or_else(|| {
            format!(
                "cannot find `{}`, the file calling `{macro_name}`",
                file.display()
            )
        })
}
