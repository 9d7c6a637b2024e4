//! The stateless era (MCP 2026-07-28): no handshake; every request carries its own `_meta`
//! envelope and is served on its own.
//!
//! Each message is classified on arrival, on every transport: `initialize` opens (or re-opens) a
//! handshake session; a request whose `params._meta` names
//! `io.modelcontextprotocol/protocolVersion`, and `server/discover` always, is served here; any
//! other message follows the handshake rules. Nothing here locks a connection into an era.
//!
//! What this module owns: reading the envelope, `server/discover`, the shaping of results
//! (`resultType`, `_meta` server info, cache hints), the input-required bookkeeping behind
//! `ctx.elicit`/`ctx.sample`/`ctx.roots` with its signed `requestState` ([`request_state`]), and
//! `subscriptions/listen`.
//!
//! It is written in four parts: [`envelope`] (the `_meta` envelope, the version check,
//! `server/discover`), [`cache`] (result stamps and cache hints), [`input`] (input-required
//! and the stateless peer) and [`listen`] (`subscriptions/listen`), with the signed
//! [`request_state`] beside them.

mod cache;
mod envelope;
mod input;
mod listen;
pub(crate) mod request_state;

use serde_json::Value;

use crate::protocol::{ProtocolVersion, member};

pub use self::cache::{CacheHint, CacheScope, Cacheable};
pub(crate) use self::cache::{CacheHints, Stamps};
pub(crate) use self::envelope::{Envelope, discover, read_envelope, unsupported_version};
#[cfg(feature = "tasks")]
pub(crate) use self::input::input_key;
pub(crate) use self::input::{
    Inputs, Interrupt, StatelessPeer, input_required, missing_capability,
};
pub(crate) use self::listen::{Listener, Listeners};

use crate::protocol::Members;
pub(crate) use crate::protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
};

/// Whether a request belongs to the stateless era.
///
/// `initialize` does only when its envelope names a stateless revision: there it is a removed
/// method (-32601, HTTP 404), while an `initialize` with any other `_meta` is still a handshake.
pub(crate) fn is_stateless(method: &str, params: &impl Members) -> bool {
    let requested = params
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|meta| member(meta, PROTOCOL_VERSION_KEY));
    match requested {
        _ if method == "server/discover" => true,
        Some(version) if method == "initialize" => version
            .as_str()
            .and_then(ProtocolVersion::parse)
            .is_some_and(|v| !v.has_handshake()),
        requested => requested.is_some(),
    }
}
