//! What a handler can ask the client for: model completions (sampling), the user's input
//! (elicitation) and the workspace roots. In the handshake era each is a JSON-RPC request to the
//! client, sent only when the client declared the matching capability, matched to its response
//! by id, and given up on (with `notifications/cancelled`) after the server's request timeout.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::{Audio, Content, ErrorObject, Image, Role, Text};

/// Why a request to the client did not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare the capability this request needs.
    #[error("the client does not support {0}")]
    Unsupported(&'static str),
    /// The client did not answer in time; the request was cancelled.
    #[error("the client did not answer within {0:?}")]
    Timeout(Duration),
    /// The client answered with an error (for sampling, -1 means the user rejected it).
    #[error("the client refused: {0}")]
    Rejected(ErrorObject),
    /// The connection closed before the answer came.
    #[error("the client disconnected")]
    Closed,
    /// The answer did not have the shape the spec gives it.
    #[error("the client's answer is malformed: {0}")]
    InvalidResponse(String),
    /// The request could not be serialized, so it was not sent.
    #[error("the request could not be serialized: {0}")]
    Unserializable(String),
}

/// One block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// Text.
    Text(Text),
    /// An image.
    Image(Image),
    /// Audio.
    Audio(Audio),
    /// The model asks to use a tool (2025-11-25).
    ToolUse {
        /// The call's id, echoed by the result.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments.
        input: Value,
    },
    /// A tool's result, answering a `tool_use` (2025-11-25).
    ToolResult {
        /// The `tool_use` id this answers.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// The result's content.
        content: Vec<Content>,
        /// Whether the tool failed.
        #[serde(
            rename = "isError",
            default,
            skip_serializing_if = "std::ops::Not::not"
        )]
        is_error: bool,
    },
}

/// A message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
}

impl SamplingMessage {
    /// A user message with this text.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: SamplingContent::Text(Text::new(text)),
        }
    }

    /// An assistant message with this text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: SamplingContent::Text(Text::new(text)),
        }
    }
}

/// A hint about the model to use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model names or families to prefer, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<ModelHint>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A model name or family, for example `"claude"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelHint {
    /// The name, matched as a substring.
    pub name: String,
}

/// `sampling/createMessage`: ask the client's model for a completion.
///
/// ```
/// use mcp_runtime::context::SamplingRequest;
///
/// let request = SamplingRequest::new(100).user("Summarise this.").system_prompt("Be brief.");
/// # let _ = request;
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to generate.
    pub max_tokens: u32,
    /// A system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which model to prefer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that end generation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Tools the model may call (2025-11-25; needs the client's `sampling.tools`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens, with no messages yet.
    pub fn new(max_tokens: u32) -> Self {
        Self {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            temperature: None,
            stop_sequences: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// Adds a user message.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage::user(text));
        self
    }

    /// Adds a message.
    pub fn message(mut self, message: SamplingMessage) -> Self {
        self.messages.push(message);
        self
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the model preferences.
    pub fn model_preferences(mut self, preferences: ModelPreferences) -> Self {
        self.model_preferences = Some(preferences);
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Offers a tool to the model: a `Tool` object as `tools/list` shows one (2025-11-25).
    pub fn tool(mut self, tool: Value) -> Self {
        self.tools.push(tool);
        self
    }
}

/// The client's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingResult {
    /// Who spoke (the assistant).
    pub role: Role,
    /// What the model said: one block, or several (2025-11-25).
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<SamplingContent>,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SamplingResult {
    /// The text of every text block, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                SamplingContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<SamplingContent>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(SamplingContent),
        Many(Vec<SamplingContent>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

/// A root the client exposes: a directory or file the server may work in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user filled in the form.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(value) => Some(value),
            _ => None,
        }
    }
}

/// What the user did with a URL-mode elicitation (2025-11-25). `Accept` means they agreed to
/// open the URL, not that the flow there is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlElicitation {
    /// The user agreed to open the URL.
    Accept,
    /// The user said no.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// A type whose values a user can enter in an elicitation form: a struct of flat fields
/// (strings, numbers, booleans, enums, lists of enum values). Derive it with
/// `#[derive(Elicit)]`, which refuses at compile time a field the form cannot express.
pub trait Elicit: serde::de::DeserializeOwned {
    /// The `requestedSchema`: `{"type": "object", "properties": {..}, "required": [..]}`.
    fn requested_schema() -> Map<String, Value>;
}

impl fmt::Display for UrlElicitation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        })
    }
}
