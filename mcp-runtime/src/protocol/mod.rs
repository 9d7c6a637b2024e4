//! The wire protocol: the JSON-RPC 2.0 envelope, the MCP revisions, and the message types the
//! server sends and receives.
//!
//! Nothing here knows about tools, sessions or transports; everything above builds on it.
//!
//! # Where it sits
//!
//! The ground floor: it imports no other module of the crate, and every other module may import
//! it.

mod content;
mod framing;
// `pub(crate)` so the hidden `fuzzing` module can re-export the framing; without that feature
// its `pub` items are reachable from this crate only.
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
pub(crate) mod jsonrpc;
mod lifecycle;
mod logging;
mod method;
mod object;
mod outgoing;
mod parse_cost;
mod stateless;
mod version;

pub use self::content::{
    Annotations, Audio, BlobResourceContents, Content, EmbeddedResource, Icon, IconTheme, Image,
    ResourceContents, ResourceLink, Role, Text, TextResourceContents,
};
pub(crate) use self::framing::{Line, buffered_line, read_line};
#[cfg(feature = "http")]
pub(crate) use self::jsonrpc::Scanned;
// The client reads whole messages; the server's transports scan first (`scan`).
#[cfg(feature = "client")]
pub(crate) use self::jsonrpc::parse;
// Task status messages and openapi's error bodies are cut as error messages are.
#[cfg(any(feature = "tasks", feature = "openapi"))]
pub(crate) use self::jsonrpc::cut;
pub(crate) use self::jsonrpc::retry_millis;
pub use self::jsonrpc::{ErrorObject, RequestId, error_codes};
pub(crate) use self::jsonrpc::{
    Incoming, InvalidMessage, MESSAGE_MAX, Message, Request, bounded, canonical_notification, echo,
    encode_error, encode_notification, encode_raw_response, encode_request, encode_response,
    id_in_prefix, member, scan,
};
pub use self::lifecycle::{
    ClientCapabilities, Implementation, InitializeParams, ListChangedCapability,
    ResourcesCapability, ServerCapabilities,
};
pub use self::logging::LoggingLevel;
pub(crate) use self::method::Method;
pub(crate) use self::object::{LISTED, Members, Object, Params};
pub(crate) use self::outgoing::{Outgoing, Refusal, encode_batch};
pub(crate) use self::parse_cost::PARSE_SLACK;
pub use self::parse_cost::ParseCost;
pub(crate) use self::stateless::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
};
#[cfg(any(feature = "client", feature = "testing"))]
pub(crate) use self::stateless::{add_envelope, answer_input, input_requests};
pub use self::version::{ProtocolVersion, UnsupportedVersion, negotiate_version};
