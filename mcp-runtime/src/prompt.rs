//! The runtime side of prompts: definitions, arguments, messages and results.
//!
//! Prompt arguments are strings on the wire. A `#[prompt]` parameter of any `FromStr` type is
//! parsed from its string, and a parse failure is an invalid-params error naming the argument;
//! `Option<T>` parameters are optional arguments. Unknown arguments are ignored.
//!
//! # Where it sits
//!
//! An item: it may import `tool` (the shared handler types), `completion`, `context`, `protocol`,
//! `schema`, `metadata` and `error`; the server and everything above import it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::completion::{Completer, ForwardCompleter};
use crate::context::Context;
use crate::metadata::{Metadata, item_setters};
use crate::protocol::{Content, ErrorObject, Icon, ProtocolVersion, Role, echo};
use crate::tool::{BoxFuture, SourceLocation};

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: one content block.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of this rendering of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        Self {
            description: None,
            messages: messages.into_iter().collect(),
            meta: None,
        }
    }

    /// The result as `version` can carry it: content blocks a revision lacks become text.
    pub fn for_version(mut self, version: ProtocolVersion) -> Self {
        if version < ProtocolVersion::V2025_06_18 {
            for message in &mut self.messages {
                let content = std::mem::replace(&mut message.content, Content::text(""));
                message.content = content.for_version(version);
            }
        }
        if !version.has_structured_output() {
            self.meta = None;
        }
        self
    }
}

/// A type a `#[prompt]` can return: `String` (one user message), [`PromptMessage`],
/// `Vec<PromptMessage>` or [`GetPromptResult`].
pub trait IntoGetPromptResult {
    /// Converts the value into the prompt's result.
    fn into_get_prompt_result(self) -> GetPromptResult;
}

impl IntoGetPromptResult for GetPromptResult {
    fn into_get_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoGetPromptResult for PromptMessage {
    fn into_get_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new([self])
    }
}

impl IntoGetPromptResult for Vec<PromptMessage> {
    fn into_get_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoGetPromptResult for String {
    fn into_get_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new([PromptMessage::user(self)])
    }
}

impl IntoGetPromptResult for &str {
    fn into_get_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new([PromptMessage::user(self)])
    }
}

/// An argument a prompt takes, as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

pub(crate) type PromptHandler =
    Arc<dyn Fn(PromptCall) -> BoxFuture<Result<GetPromptResult, ErrorObject>> + Send + Sync>;

/// A prompt: what `prompts/list` shows of it, and the handler `prompts/get` runs.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) name: Cow<'static, str>,
    pub(crate) metadata: Metadata,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) handler: PromptHandler,
    pub(crate) completers: Vec<(String, Completer)>,
    /// Completes every argument elsewhere (a proxied prompt, at its upstream).
    pub(crate) forward_completion: Option<ForwardCompleter>,
    /// Its own middleware (`PromptDef::layer`, `#[prompt(layer = ..)]`).
    pub(crate) layer: Option<crate::metadata::ItemLayer>,
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl PromptDef {
    /// Runs the prompt on `arguments` in `context`: the one place a [`PromptCall`] is put
    /// together. `prompt` is the registry's shared copy of the name.
    pub(crate) fn call(
        &self,
        prompt: Arc<str>,
        arguments: Map<String, Value>,
        context: Context,
    ) -> BoxFuture<Result<GetPromptResult, ErrorObject>> {
        (self.handler)(PromptCall {
            prompt,
            arguments,
            context,
            errors: Vec::new(),
        })
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `Prompt` object of `prompts/list` as `version` knows it.
    pub(crate) fn to_wire(&self, version: ProtocolVersion) -> Value {
        let mut prompt = Map::new();
        prompt.insert("name".into(), Value::from(&*self.name));
        self.metadata.write_names(&mut prompt, version);
        if !self.arguments.is_empty() {
            let arguments: Vec<Value> = self
                .arguments
                .iter()
                .filter_map(|a| {
                    let mut a = a.clone();
                    if !version.has_titles() {
                        a.title = None;
                    }
                    // Strings and a boolean: this cannot fail; were it to, the argument is left
                    // out and said so, rather than sent as `null`.
                    serde_json::to_value(&a)
                        .inspect_err(|error| {
                            tracing::error!(
                                prompt = %self.name,
                                argument = %a.name,
                                %error,
                                "a prompt argument could not be serialized"
                            );
                        })
                        .ok()
                })
                .collect();
            prompt.insert("arguments".into(), Value::Array(arguments));
        }
        self.metadata.write_extras(&mut prompt, version);
        Value::Object(prompt)
    }
}

/// What a prompt handler receives.
pub struct PromptCall {
    pub(crate) prompt: Arc<str>,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) context: Context,
    pub(crate) errors: Vec<String>,
}

impl PromptCall {
    /// The request's context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The string value of an argument; numbers and booleans are taken as their JSON text.
    fn take(&mut self, name: &str) -> Option<String> {
        match self.arguments.remove(name)? {
            Value::Null => None,
            Value::String(s) => Some(s),
            other => Some(other.to_string()),
        }
    }

    /// Parses a required argument.
    pub(crate) fn required<T: FromStr>(&mut self, name: &str) -> Option<T>
    where
        T::Err: fmt::Display,
    {
        match self.take(name) {
            Some(text) => self.parse(name, &text),
            None => {
                self.errors
                    .push(format!("missing required argument `{name}`"));
                None
            }
        }
    }

    /// Parses an optional argument.
    pub(crate) fn optional<T: FromStr>(&mut self, name: &str) -> Option<Option<T>>
    where
        T::Err: fmt::Display,
    {
        match self.take(name) {
            Some(text) => self.parse(name, &text).map(Some),
            None => Some(None),
        }
    }

    fn parse<T: FromStr>(&mut self, name: &str, text: &str) -> Option<T>
    where
        T::Err: fmt::Display,
    {
        match text.parse::<T>() {
            Ok(value) => Some(value),
            Err(error) => {
                self.errors.push(format!(
                    "invalid value for argument `{name}`: {}",
                    echo(&error.to_string())
                ));
                None
            }
        }
    }

    pub(crate) fn record(&mut self, error: String) {
        self.errors.push(error);
    }

    /// Whether every argument parsed.
    pub(crate) fn arguments_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The invalid-params error that lists every argument problem.
    pub(crate) fn argument_error(&self) -> ErrorObject {
        ErrorObject::invalid_params(format!(
            "invalid arguments for prompt `{}`: {}",
            self.prompt,
            self.errors.join("; ")
        ))
    }
}

item_setters!(PromptBuilder, "prompt", def.metadata);

/// Builds a [`PromptDef`]; what `#[prompt]` expands to drives it.
pub struct PromptBuilder {
    def: PromptDef,
}

impl PromptBuilder {
    /// Starts a prompt called `name`, served by `handler`.
    pub fn new<F>(name: impl Into<Cow<'static, str>>, handler: F) -> Self
    where
        F: Fn(PromptCall) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
            + Send
            + Sync
            + 'static,
    {
        Self {
            def: PromptDef {
                name: name.into(),
                metadata: Metadata::default(),
                arguments: Vec::new(),
                handler: Arc::new(handler),
                completers: Vec::new(),
                forward_completion: None,
                layer: None,
            },
        }
    }

    /// Declares an argument.
    pub fn argument(&mut self, name: &str, description: Option<&str>, required: bool) -> &mut Self {
        if self.def.arguments.iter().any(|a| a.name == name) {
            self.def
                .metadata
                .problems
                .push(format!("two parameters take the argument name `{name}`"));
        }
        self.def.arguments.push(PromptArgument {
            name: name.to_owned(),
            title: None,
            description: description.map(str::to_owned),
            required,
        });
        self
    }

    /// Completes the argument `name` with `completer`.
    pub fn completer(&mut self, name: &str, completer: Completer) -> &mut Self {
        self.def.completers.retain(|(n, _)| n != name);
        self.def.completers.push((name.to_owned(), completer));
        self
    }

    /// Finishes the definition.
    pub fn build(self) -> PromptDef {
        self.def
    }
}
