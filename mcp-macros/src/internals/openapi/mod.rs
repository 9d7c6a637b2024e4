//! `openapi!`'s front end: the invocation ([`args`]), the description's files ([`source`]),
//! where in them a place is written ([`locate`]), every `$ref` checked ([`references`]),
//! schemas as tools carry them ([`schema`]), names ([`names`]), and the model of the selected
//! operations with every compile-time check ([`model`]).

pub(crate) mod args;
pub(crate) mod locate;
pub(crate) mod model;
pub(crate) mod names;
pub(crate) mod references;
pub(crate) mod schema;
pub(crate) mod source;
