//! The front end shared by the macros: attribute parsing, doc comments, the model, and the checks
//! that span several attributes. Nothing here generates code.

pub(crate) mod ast;
pub(crate) mod attr;
pub(crate) mod check;
pub(crate) mod ctxt;
pub(crate) mod doc;
#[cfg(feature = "openapi")]
pub(crate) mod openapi;
pub(crate) mod symbol;
