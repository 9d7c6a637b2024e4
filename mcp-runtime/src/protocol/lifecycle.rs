//! What the two sides tell each other when a session starts: implementation info and
//! capabilities, and the `initialize` request that carries them in the handshake era.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Icon, ProtocolVersion};

/// Who an implementation is: `serverInfo` / `clientInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name, and the display fallback.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// A website (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and version only.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }

    /// The fields `version` knows, as JSON.
    pub fn for_version(&self, version: ProtocolVersion) -> Value {
        let mut shaped = self.clone();
        if !version.has_titles() {
            shaped.title = None;
        }
        if !version.has_icons() {
            shaped.description = None;
            shaped.icons = None;
            shaped.website_url = None;
        }
        serde_json::to_value(shaped).unwrap_or(Value::Null)
    }
}

/// `{"listChanged": bool}`, the shape of the tools and prompts capabilities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether the server sends `notifications/*/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_changed: bool,
}

/// The resources capability.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is served.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subscribe: bool,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_changed: bool,
}

/// What the server offers. Only what is registered is advertised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Tools, when any are registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Resources, when any are registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts, when any are registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Log messages to the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// `completion/complete` (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Extensions (SEP-2133), by identifier, each with its settings object: skills (in both
    /// eras), `io.modelcontextprotocol/tasks` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// 2025-11-25's experimental core tasks (`list`, `cancel`, `requests.tools.call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Map<String, Value>>,
}

impl ServerCapabilities {
    /// The capabilities as `version` knows them: `completions` is left out before 2025-03-26.
    pub fn for_version(&self, version: ProtocolVersion) -> Value {
        let mut shaped = self.clone();
        if version < ProtocolVersion::V2025_03_26 {
            shaped.completions = None;
        }
        // The tasks extension is 2026-07-28's form of tasks (2025-11-25 has `tasks`); the
        // others (skills) are declared in every revision.
        if version < ProtocolVersion::V2026_07_28
            && let Some(extensions) = &mut shaped.extensions
        {
            extensions.remove("io.modelcontextprotocol/tasks");
            if extensions.is_empty() {
                shaped.extensions = None;
            }
        }
        if version != ProtocolVersion::V2025_11_25 {
            shaped.tasks = None;
        }
        serde_json::to_value(shaped).unwrap_or(Value::Null)
    }
}

/// What the client offers, kept as it was sent: the spec lets capabilities grow, and the
/// accessors read the parts the server acts on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientCapabilities(pub Map<String, Value>);

impl ClientCapabilities {
    fn has(&self, path: &[&str]) -> bool {
        let mut current = match self.0.get(path[0]) {
            Some(value) if value.is_object() => value,
            _ => return false,
        };
        for key in &path[1..] {
            current = match current.get(key) {
                Some(value) if value.is_object() => value,
                _ => return false,
            };
        }
        true
    }

    /// The client answers `sampling/createMessage`.
    pub fn sampling(&self) -> bool {
        self.has(&["sampling"])
    }

    /// The client accepts `tools` in sampling requests (2025-11-25).
    pub fn sampling_tools(&self) -> bool {
        self.has(&["sampling", "tools"])
    }

    /// The client answers form-mode `elicitation/create`: an empty `elicitation: {}` means form.
    pub fn elicitation_form(&self) -> bool {
        match self.0.get("elicitation").and_then(Value::as_object) {
            Some(elicitation) => {
                elicitation.is_empty()
                    || elicitation.contains_key("form")
                    || !elicitation.contains_key("url")
            }
            None => false,
        }
    }

    /// The client answers URL-mode `elicitation/create` (2025-11-25).
    pub fn elicitation_url(&self) -> bool {
        self.has(&["elicitation", "url"])
    }

    /// The client answers `roots/list`.
    pub fn roots(&self) -> bool {
        self.has(&["roots"])
    }

    /// The client sends `notifications/roots/list_changed`.
    pub fn roots_list_changed(&self) -> bool {
        self.0
            .get("roots")
            .and_then(|roots| roots.get("listChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// The params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The revision the client asks for.
    pub protocol_version: String,
    /// What the client offers.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_info_loses_fields_older_revisions_lack() {
        let mut info = Implementation::new("demo", "1.0.0");
        info.title = Some("Demo".into());
        info.website_url = Some("https://demo.test".into());
        assert_eq!(
            info.for_version(ProtocolVersion::V2025_03_26),
            json!({"name": "demo", "version": "1.0.0"})
        );
        assert_eq!(
            info.for_version(ProtocolVersion::V2025_06_18),
            json!({"name": "demo", "version": "1.0.0", "title": "Demo"})
        );
        assert_eq!(
            info.for_version(ProtocolVersion::V2025_11_25)["websiteUrl"],
            "https://demo.test"
        );
    }

    #[test]
    fn client_capabilities_are_read_by_path() {
        let caps: ClientCapabilities = serde_json::from_value(
            json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}),
        )
        .unwrap();
        assert!(caps.sampling() && !caps.sampling_tools());
        assert!(caps.elicitation_form() && !caps.elicitation_url());
        assert!(caps.roots() && caps.roots_list_changed());
        let url_only: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        assert!(!url_only.elicitation_form() && url_only.elicitation_url());
    }
}
