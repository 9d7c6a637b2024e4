//! The map the request path keys by what the server makes or bounds; a leaf that the
//! capabilities around the server import without importing the server's `mod.rs`.

/// The map of the request path: sessions, requests in flight, items by name. Their keys are
/// made by the server (session ids, item names) or bounded per session (request ids), so a fast
/// seeded hasher serves where SipHash's flooding resistance would cost on every request.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
