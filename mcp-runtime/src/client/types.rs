//! What the client reads from a server: the items it lists, the results of reads and
//! completions, notifications and progress. Content, resource contents, tool and prompt results
//! are the runtime's own types ([`Content`](crate::protocol::Content),
//! [`ResourceContents`], [`CallToolResult`](crate::CallToolResult),
//! [`GetPromptResult`](crate::GetPromptResult)); the definitions here keep every field the server
//! sent, known or not (`extra`), so a gateway can serve them on unchanged. A listed resource
//! is the runtime's [`ResourceInfo`](crate::ResourceInfo), the one type of the spec's
//! `Resource` object.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::prompt::PromptArgument;
use crate::protocol::{
    Annotations, Icon, Implementation, LoggingLevel, ProtocolVersion, RequestId, ResourceContents,
    ServerCapabilities,
};
use crate::tool::ToolAnnotations;

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name to call it by.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Map<String, Value>,
    /// The JSON Schema of its `structuredContent` (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Hints about its behaviour (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Every other field the server sent (`execution`, extension fields), kept as it was.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template as `resources/templates/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The RFC 6570 template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of what it expands to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Audience, priority, last modified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Every other field the server sent, kept as it was.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A prompt as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Every other field the server sent, kept as it was.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents: one or more text or blob parts.
    pub contents: Vec<ResourceContents>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `completion` of a `completion/complete` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The suggested values (at most 100).
    pub values: Vec<String>,
    /// How many values there are in all, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// What `completion/complete` completes: an argument of a prompt, or a variable of a resource
/// template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// `ref/prompt`, by prompt name.
    Prompt(String),
    /// `ref/resource`, by URI template.
    ResourceTemplate(String),
}

impl CompletionRef {
    pub(crate) fn to_json(&self) -> Value {
        match self {
            Self::Prompt(name) => serde_json::json!({"type": "ref/prompt", "name": name}),
            Self::ResourceTemplate(uri) => {
                serde_json::json!({"type": "ref/resource", "uri": uri})
            }
        }
    }
}

/// Which protocol era a connection speaks, and how the client chooses it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// Probe with `server/discover` and speak 2026-07-28 when the server lists it; anything
    /// else (an error of any kind, or no answer within the probe timeout) falls back to the
    /// `initialize` handshake. The rule of the spec's backward-compatibility section, as the
    /// official Python SDK's client applies it.
    #[default]
    Auto,
    /// The `initialize` handshake, asking for the given revision (2024-11-05 ..
    /// 2025-11-25) and accepting any handshake revision the server answers with.
    Handshake(ProtocolVersion),
    /// 2026-07-28 only: `server/discover`, and an error if the server does not list it.
    Stateless,
}

/// What was agreed when the connection opened.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The revision spoken.
    pub protocol_version: ProtocolVersion,
    /// Who the server says it is (`serverInfo`; in 2026-07-28 the `_meta` of `server/discover`,
    /// `None` when it sent none).
    pub implementation: Option<Implementation>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server's instructions for the model.
    pub instructions: Option<String>,
    /// The whole `initialize` or `server/discover` result, as sent.
    pub raw: Value,
}

/// A `notifications/progress` for one of this client's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// How far along (increases with each notification).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A message for people.
    pub message: Option<String>,
}

/// Something the server told the client without being asked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// `notifications/message`: a log message.
    Log {
        /// Its severity.
        level: LoggingLevel,
        /// The logger's name.
        logger: Option<String>,
        /// The message: any JSON.
        data: Value,
    },
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// A progress notification whose token belongs to no request in flight (progress of a
    /// request of this client goes to that request's callback instead).
    Progress {
        /// The token.
        token: Value,
        /// The progress.
        progress: Progress,
    },
    /// `notifications/tasks/status` (2025-11-25) or `notifications/tasks` (2026-07-28): a task
    /// changed; the params as sent.
    Task(Map<String, Value>),
    /// `notifications/cancelled` from the server for a request of this client.
    Cancelled {
        /// The request.
        request_id: Option<RequestId>,
        /// Why.
        reason: Option<String>,
    },
    /// Any other notification, as sent.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Map<String, Value>,
    },
}

impl Notification {
    /// Reads a notification from its method and params.
    pub(crate) fn parse(method: &str, mut params: Map<String, Value>) -> Self {
        let text = |params: &Map<String, Value>, key: &str| {
            params.get(key).and_then(Value::as_str).map(str::to_owned)
        };
        match method {
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(|level| level.parse().ok());
                match level {
                    Some(level) => Self::Log {
                        level,
                        logger: text(&params, "logger"),
                        data: params.remove("data").unwrap_or(Value::Null),
                    },
                    None => Self::Other {
                        method: method.to_owned(),
                        params,
                    },
                }
            }
            "notifications/tools/list_changed" => Self::ToolsListChanged,
            "notifications/prompts/list_changed" => Self::PromptsListChanged,
            "notifications/resources/list_changed" => Self::ResourcesListChanged,
            "notifications/resources/updated" => match text(&params, "uri") {
                Some(uri) => Self::ResourceUpdated { uri },
                None => Self::Other {
                    method: method.to_owned(),
                    params,
                },
            },
            "notifications/tasks/status" | "notifications/tasks" => Self::Task(params),
            "notifications/cancelled" => Self::Cancelled {
                request_id: params.get("requestId").and_then(RequestId::from_json),
                reason: text(&params, "reason"),
            },
            "notifications/progress" => match Progress::parse(&params) {
                Some(progress) => Self::Progress {
                    token: params.remove("progressToken").unwrap_or(Value::Null),
                    progress,
                },
                None => Self::Other {
                    method: method.to_owned(),
                    params,
                },
            },
            _ => Self::Other {
                method: method.to_owned(),
                params,
            },
        }
    }
}

impl Progress {
    pub(crate) fn parse(params: &Map<String, Value>) -> Option<Self> {
        Some(Self {
            progress: params.get("progress")?.as_f64()?,
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// What a 2026-07-28 `subscriptions/listen` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listen {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    pub resource_subscriptions: Vec<String>,
}

impl Listen {
    /// Every `list_changed` kind.
    pub fn list_changes() -> Self {
        Self {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: Vec::new(),
        }
    }

    /// Updates of one resource.
    pub fn resource(uri: impl Into<String>) -> Self {
        Self {
            resource_subscriptions: vec![uri.into()],
            ..Self::default()
        }
    }

    pub(crate) fn to_params(&self) -> Value {
        let mut notifications = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools_list_changed),
            ("promptsListChanged", self.prompts_list_changed),
            ("resourcesListChanged", self.resources_list_changed),
        ] {
            if on {
                notifications.insert(key.into(), Value::Bool(true));
            }
        }
        if !self.resource_subscriptions.is_empty() {
            notifications.insert(
                "resourceSubscriptions".into(),
                Value::from(self.resource_subscriptions.clone()),
            );
        }
        serde_json::json!({ "notifications": notifications })
    }
}
