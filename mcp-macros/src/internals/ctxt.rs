//! Error accumulation, after serde_derive's `Ctxt`: every problem in an item is recorded, so one
//! build shows them all instead of one per compile.
//!
//! A context must end in [`Ctxt::check`]: dropping one unchecked is a bug in the macro (its
//! errors would be lost and the expansion would look valid), so `Drop` panics, as serde's does.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// The errors of one expansion. `None` once checked.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanned on `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Every recorded error, merged into one.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Not while unwinding: a second panic would abort and hide the first.
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("mcp-macros bug: a `Ctxt` was dropped without `check()`; its errors are lost");
        }
    }
}
