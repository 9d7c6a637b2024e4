//! `skills!("dir")`: a skills directory read, checked and embedded when the crate compiles.
//!
//! The directory is resolved like `include_bytes!` resolves its path: relative to the file the
//! macro is called in (the crate's directory when the compiler does not say which file). Every
//! check of `mcp_skill_format::scan` is a compile error at the string; each file is embedded with
//! `include_bytes!`, so cargo rebuilds the crate when one changes. Digests are computed by the
//! runtime, once, over the embedded bytes it serves.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// Expands `skills!(..)`; `call_file` is the file the macro was called in, when known.
pub(crate) fn expand(input: TokenStream, call_file: Option<PathBuf>) -> TokenStream {
    let literal: LitStr = match syn::parse2(input) {
        Ok(literal) => literal,
        Err(error) => {
            return syn::Error::new(
                error.span(),
                "expected the skills directory as a string: `skills!(\"skills\")`",
            )
            .to_compile_error();
        }
    };
    match embed(&literal, call_file) {
        Ok(tokens) => tokens,
        Err(message) => syn::Error::new(literal.span(), message).to_compile_error(),
    }
}

fn embed(literal: &LitStr, call_file: Option<PathBuf>) -> Result<TokenStream, String> {
    let base = super::call_dir(call_file, "skills!")?;
    let given = literal.value();
    let root = mcp_skill_format::resolve_root(&base, &given)
        .map_err(|e| format!("skills!(\"{given}\"): {e}"))?;
    let skills = mcp_skill_format::scan(&root).map_err(|e| format!("skills!(\"{given}\"): {e}"))?;
    let skills = skills.iter().map(|skill| {
        let path = &skill.skill_path;
        let files = skill.files.iter().map(|file| {
            let relative = &file.relative;
            let absolute = file.path.to_string_lossy().into_owned();
            quote! {
                ::mcp_runtime::__private::EmbeddedFile {
                    path: #relative,
                    bytes: ::core::include_bytes!(#absolute),
                }
            }
        });
        quote! {
            ::mcp_runtime::__private::EmbeddedSkill {
                path: #path,
                files: &[#(#files),*],
            }
        }
    });
    Ok(quote! {
        ::mcp_runtime::Skills::embedded(&[#(#skills),*])
    })
}
