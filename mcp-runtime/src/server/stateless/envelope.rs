//! The envelope every stateless request carries in `params._meta`, the version check, and
//! `server/discover`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY};
use crate::context::ClientInfo;
use crate::protocol::Members;
use crate::protocol::{
    ClientCapabilities, ErrorObject, Implementation, LoggingLevel, ProtocolVersion,
    ServerCapabilities, echo, error_codes,
};

/// A stateless request's envelope, read but not yet judged on its version.
#[derive(Clone)]
pub(crate) struct Envelope {
    /// The version string as sent.
    pub(crate) requested: String,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) log_level: Option<LoggingLevel>,
}

impl Envelope {
    /// The revision to serve the request under, or -32022 naming what this server supports.
    pub(crate) fn version(&self) -> Result<ProtocolVersion, ErrorObject> {
        match ProtocolVersion::parse(&self.requested) {
            Some(version) if !version.has_handshake() => Ok(version),
            _ => Err(unsupported_version(&self.requested)),
        }
    }
}

/// -32022, listing every revision this server speaks, newest first: a client that prefers a
/// handshake revision can fall back to `initialize`.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

fn missing(key: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("`params._meta` is missing `{key}`"))
}

/// Reads the envelope: a missing or malformed required key is -32602 naming it.
pub(crate) fn read_envelope(params: &impl Members) -> Result<Envelope, ErrorObject> {
    let meta = match params.get("_meta") {
        Some(Value::Object(meta)) => meta,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "`params._meta` must be an object",
            ));
        }
        None => return Err(missing(PROTOCOL_VERSION_KEY)),
    };
    let requested = match meta.get(PROTOCOL_VERSION_KEY) {
        Some(Value::String(version)) => version.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{PROTOCOL_VERSION_KEY}` must be a string"
            )));
        }
        None => return Err(missing(PROTOCOL_VERSION_KEY)),
    };
    let capabilities = match meta.get(CLIENT_CAPABILITIES_KEY) {
        Some(Value::Object(capabilities)) => ClientCapabilities(capabilities.clone()),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{CLIENT_CAPABILITIES_KEY}` must be an object"
            )));
        }
        None => return Err(missing(CLIENT_CAPABILITIES_KEY)),
    };
    let implementation = match meta.get(CLIENT_INFO_KEY) {
        None => Implementation::new("unnamed-client", ""),
        Some(info) => serde_json::from_value(info.clone()).map_err(|e| {
            ErrorObject::invalid_params(format!(
                "`{CLIENT_INFO_KEY}` is invalid: {}",
                echo(&e.to_string())
            ))
        })?,
    };
    let log_level = match meta.get(LOG_LEVEL_KEY) {
        None => None,
        Some(Value::String(level)) => Some(
            level
                .parse::<LoggingLevel>()
                .map_err(ErrorObject::invalid_params)?,
        ),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "`{LOG_LEVEL_KEY}` must be a string"
            )));
        }
    };
    Ok(Envelope {
        requested,
        client: Arc::new(ClientInfo {
            implementation,
            capabilities,
        }),
        log_level,
    })
}

/// The `server/discover` result, before stamping.
///
/// `supportedVersions` is the list the -32022 error offers: every revision this server speaks,
/// newest first, handshake ones included, so a client that finds no common stateless revision
/// knows it can fall back to `initialize` instead of giving up.
pub(crate) fn discover(capabilities: &ServerCapabilities, instructions: Option<&str>) -> Value {
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(supported));
    result.insert(
        "capabilities".into(),
        capabilities.for_version(ProtocolVersion::V2026_07_28),
    );
    if let Some(instructions) = instructions {
        result.insert("instructions".into(), Value::from(instructions));
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::super::is_stateless;
    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_envelope_decides_the_era_and_names_what_is_missing() {
        assert!(is_stateless("server/discover", &Map::new()));
        assert!(!is_stateless("tools/list", &params(json!({"_meta": {}}))));
        let enveloped = params(json!({"_meta": {
            PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {"elicitation": {}},
            LOG_LEVEL_KEY: "debug",
        }}));
        assert!(is_stateless("tools/list", &enveloped));
        let envelope = read_envelope(&enveloped).unwrap();
        assert_eq!(envelope.version().unwrap(), ProtocolVersion::V2026_07_28);
        assert!(envelope.client.capabilities.elicitation_form());
        assert_eq!(envelope.log_level, Some(LoggingLevel::Debug));

        let partial = params(json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}));
        let error = read_envelope(&partial).err().unwrap();
        assert_eq!(error.code, -32602);
        assert!(error.message.contains(CLIENT_CAPABILITIES_KEY));

        let old = params(json!({"_meta": {
            PROTOCOL_VERSION_KEY: "2025-11-25",
            CLIENT_CAPABILITIES_KEY: {},
        }}));
        let error = read_envelope(&old).unwrap().version().unwrap_err();
        assert_eq!(error.code, -32022);
        assert_eq!(
            error.data.unwrap(),
            json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], "requested": "2025-11-25"})
        );
    }
}
