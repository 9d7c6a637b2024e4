//! Protocol revisions and version negotiation.

use std::fmt;
use std::str::FromStr;

/// A revision of the Model Context Protocol.
///
/// Revisions are ordered chronologically, so `version >= ProtocolVersion::V2025_06_18` asks
/// "does this session speak at least 2025-06-18". Every decision that depends on the revision
/// (which fields a result may carry, which error code a missing resource gets) is a method here,
/// so output shaping consults one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The first published revision: HTTP+SSE, no batching rules.
    V2024_11_05,
    /// Streamable HTTP, JSON-RPC batches, tool annotations, audio, `completions` capability.
    V2025_03_26,
    /// `title`, `outputSchema` / `structuredContent`, resource links, elicitation; batches removed.
    V2025_06_18,
    /// Icons, URL elicitation, tasks, sampling with tools; the last revision with a handshake.
    V2025_11_25,
    /// The stateless revision: no `initialize`, a per-request `_meta` envelope, `server/discover`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision this runtime serves, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The revisions negotiated through `initialize`, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
    ];

    /// The newest revision that has an `initialize` handshake: the counter-offer for any version
    /// this server does not know.
    pub const LATEST_HANDSHAKE: ProtocolVersion = Self::V2025_11_25;

    /// The newest revision of all.
    pub const LATEST: ProtocolVersion = Self::V2026_07_28;

    /// The version string as it appears on the wire, for example `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether this revision opens with an `initialize` handshake (everything before 2026-07-28).
    pub const fn has_handshake(self) -> bool {
        !matches!(self, Self::V2026_07_28)
    }

    /// Whether a connection on this revision may send JSON-RPC batches (2025-03-26 only).
    pub const fn allows_batches(self) -> bool {
        matches!(self, Self::V2025_03_26)
    }

    /// Whether tools carry `annotations` (since 2025-03-26).
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Whether `title`, `outputSchema`, `structuredContent` and `_meta` on definitions exist
    /// (since 2025-06-18).
    pub fn has_structured_output(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether `title` exists on tools, resources, prompts and `serverInfo` (since 2025-06-18).
    pub fn has_titles(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether `icons`, `serverInfo.description` and `websiteUrl` exist (since 2025-11-25).
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// Whether results carry `resultType` and cache hints (since 2026-07-28).
    pub fn has_result_type(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// The JSON-RPC error code for a `resources/read` of an unknown URI: -32002 in the handshake
    /// era, -32602 from 2026-07-28 (SEP-2164).
    pub fn resource_not_found_code(self) -> i64 {
        if self.has_handshake() {
            crate::protocol::error_codes::RESOURCE_NOT_FOUND
        } else {
            crate::protocol::error_codes::INVALID_PARAMS
        }
    }

    /// Parses a wire version string; `None` for a revision this runtime does not serve.
    /// Versions compare as exact strings, never semantically.
    pub fn parse(version: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == version)
    }
}

/// Chooses the revision to answer an `initialize` with: the requested one when it is a handshake
/// revision this server supports, otherwise the latest handshake revision. The spec asks for a
/// counter-offer, never an error; the client decides whether it can live with it.
pub fn negotiate_version(requested: &str) -> ProtocolVersion {
    match ProtocolVersion::parse(requested) {
        Some(version) if version.has_handshake() => version,
        _ => ProtocolVersion::LATEST_HANDSHAKE,
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a version string that names no revision this runtime serves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported protocol version `{0}`")]
pub struct UnsupportedVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnsupportedVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnsupportedVersion(s.to_owned()))
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_echoes_supported_handshake_versions() {
        for version in ProtocolVersion::HANDSHAKE {
            assert_eq!(negotiate_version(version.as_str()), version);
        }
    }

    #[test]
    fn negotiation_counter_offers_the_latest_handshake_version() {
        assert_eq!(
            negotiate_version("1999-01-01"),
            ProtocolVersion::V2025_11_25
        );
        assert_eq!(
            negotiate_version("2026-07-28"),
            ProtocolVersion::V2025_11_25
        );
        assert_eq!(
            negotiate_version("2025-11-25 "),
            ProtocolVersion::V2025_11_25
        );
    }

    #[test]
    fn revisions_are_chronological() {
        let mut sorted = ProtocolVersion::ALL;
        sorted.sort();
        assert_eq!(sorted, ProtocolVersion::ALL);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert_eq!(
            ProtocolVersion::V2025_11_25.resource_not_found_code(),
            -32002
        );
        assert_eq!(
            ProtocolVersion::V2026_07_28.resource_not_found_code(),
            -32602
        );
    }
}
