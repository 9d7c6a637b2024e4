//! The one table of MCP request methods this server knows, and what each one is.
//!
//! A method string is parsed once into [`Method`]; every question the runtime asks about a
//! request (is it known in this era, does it run user code, is it answered inline, does it take
//! an in-flight slot, which parameter names its target) is answered here, not by string lists
//! spread over the dispatcher, the session and the transports.

/// A request method this server serves in some revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    PromptsList,
    PromptsGet,
    CompletionComplete,
    LoggingSetLevel,
    ServerDiscover,
    SubscriptionsListen,
    /// `skills/list` (the skills extension).
    SkillsList,
    /// `skills/get` (the skills extension).
    SkillsGet,
    /// `resources/directory/read` (the skills extension's `directoryRead`).
    ResourcesDirectoryRead,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    TasksResult,
    TasksList,
}

impl Method {
    /// The method's name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Initialize => "initialize",
            Self::Ping => "ping",
            Self::ToolsList => "tools/list",
            Self::ToolsCall => "tools/call",
            Self::ResourcesList => "resources/list",
            Self::ResourcesTemplatesList => "resources/templates/list",
            Self::ResourcesRead => "resources/read",
            Self::ResourcesSubscribe => "resources/subscribe",
            Self::ResourcesUnsubscribe => "resources/unsubscribe",
            Self::PromptsList => "prompts/list",
            Self::PromptsGet => "prompts/get",
            Self::CompletionComplete => "completion/complete",
            Self::LoggingSetLevel => "logging/setLevel",
            Self::ServerDiscover => "server/discover",
            Self::SubscriptionsListen => "subscriptions/listen",
            Self::SkillsList => "skills/list",
            Self::SkillsGet => "skills/get",
            Self::ResourcesDirectoryRead => "resources/directory/read",
            Self::TasksGet => "tasks/get",
            Self::TasksUpdate => "tasks/update",
            Self::TasksCancel => "tasks/cancel",
            Self::TasksResult => "tasks/result",
            Self::TasksList => "tasks/list",
        }
    }

    /// The method a request names; `None` for one no revision of this server knows.
    ///
    /// The arms are tried in turn, so the methods most requests name come first.
    pub(crate) fn parse(method: &str) -> Option<Self> {
        Some(match method {
            "tools/call" => Self::ToolsCall,
            "resources/read" => Self::ResourcesRead,
            "prompts/get" => Self::PromptsGet,
            "initialize" => Self::Initialize,
            "ping" => Self::Ping,
            "tools/list" => Self::ToolsList,
            "resources/list" => Self::ResourcesList,
            "resources/templates/list" => Self::ResourcesTemplatesList,
            "resources/subscribe" => Self::ResourcesSubscribe,
            "resources/unsubscribe" => Self::ResourcesUnsubscribe,
            "prompts/list" => Self::PromptsList,
            "completion/complete" => Self::CompletionComplete,
            "logging/setLevel" => Self::LoggingSetLevel,
            "server/discover" => Self::ServerDiscover,
            "subscriptions/listen" => Self::SubscriptionsListen,
            "skills/list" => Self::SkillsList,
            "skills/get" => Self::SkillsGet,
            "resources/directory/read" => Self::ResourcesDirectoryRead,
            "tasks/get" => Self::TasksGet,
            "tasks/update" => Self::TasksUpdate,
            "tasks/cancel" => Self::TasksCancel,
            "tasks/result" => Self::TasksResult,
            "tasks/list" => Self::TasksList,
            _ => return None,
        })
    }

    /// Whether the handshake era (2025-03-26 to 2025-11-25) has this method.
    /// (2025-11-25's experimental tasks: `tasks/get`, `tasks/result`, `tasks/list`,
    /// `tasks/cancel`.)
    pub(crate) fn in_handshake_era(self) -> bool {
        !matches!(
            self,
            Self::ServerDiscover | Self::SubscriptionsListen | Self::TasksUpdate
        )
    }

    /// Whether the stateless era (2026-07-28) has this method: it has no handshake, no
    /// `ping`, and replaces subscriptions and `logging/setLevel` with per-request state.
    pub(crate) fn in_stateless_era(self) -> bool {
        !matches!(
            self,
            Self::Initialize
                | Self::Ping
                | Self::ResourcesSubscribe
                | Self::ResourcesUnsubscribe
                | Self::LoggingSetLevel
                | Self::TasksResult
                | Self::TasksList
        )
    }

    /// Whether the request runs a handler the server's author wrote (which may take long, send
    /// progress, or ask the client something), so HTTP may answer it on an SSE stream.
    #[cfg(feature = "http")]
    pub(crate) fn runs_user_code(self) -> bool {
        matches!(
            self,
            Self::ToolsCall | Self::PromptsGet | Self::ResourcesRead | Self::TasksResult
        )
    }

    /// Whether a handshake-era session answers it on the spot, in order: a list served from the
    /// registry's cache runs no user code and never waits.
    pub(crate) fn answered_inline(self) -> bool {
        matches!(
            self,
            Self::ToolsList
                | Self::PromptsList
                | Self::ResourcesTemplatesList
                | Self::SkillsList
                | Self::SkillsGet
                | Self::ResourcesDirectoryRead
        )
    }

    /// Whether the request takes a slot of the in-flight window. `ping` and `initialize` are
    /// answered on the spot, so a full window never blocks them.
    pub(crate) fn needs_slot(self) -> bool {
        !matches!(self, Self::Initialize | Self::Ping)
    }

    /// The parameter naming what the request acts on (`name` of a tool or prompt, `uri` of a
    /// resource, `taskId` of a task), for request spans and the `Mcp-Name` header check.
    pub(crate) fn target(self) -> Option<&'static str> {
        match self {
            Self::ToolsCall | Self::PromptsGet => Some("name"),
            Self::ResourcesRead => Some("uri"),
            Self::TasksGet | Self::TasksUpdate | Self::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_and_properties() {
        let handshake = [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "tasks/get",
            "tasks/result",
            "tasks/list",
            "tasks/cancel",
        ];
        let stateless = [
            "server/discover",
            "subscriptions/listen",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "tasks/get",
            "tasks/update",
            "tasks/cancel",
        ];
        for name in handshake.iter().chain(&stateless) {
            let method = Method::parse(name).unwrap();
            assert_eq!(
                method.in_handshake_era(),
                handshake.contains(name),
                "{name}"
            );
            assert_eq!(
                method.in_stateless_era(),
                stateless.contains(name),
                "{name}"
            );
        }
        assert_eq!(Method::parse("tools/cal"), None);
        assert_eq!(Method::parse("notifications/cancelled"), None);
        assert!(!Method::Ping.needs_slot() && Method::ToolsList.needs_slot());
        assert_eq!(Method::ResourcesRead.target(), Some("uri"));
        assert_eq!(Method::ToolsList.target(), None);
    }
}
