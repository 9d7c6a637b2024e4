//! The `fetch` tool and the `fetch` prompt.
//!
//! The tool is what the model calls: robots.txt is obeyed (unless `--ignore-robots-txt`), the
//! page comes back as Markdown (or as it is, with `raw` or when it is not HTML) in pages of
//! `max_length` characters from `start_index`, and a failure is a tool error the model reads.
//! The prompt is what the user asks for: no robots.txt, the whole page, and a failure is the
//! prompt's text.

use std::borrow::Cow;

use mcp_runtime::prelude::*;
use reqwest::Url;
use schemars::{Schema, SchemaGenerator, json_schema};

use crate::client::{Http, RequestError};
use crate::{markdown, robots};

/// The user agent of fetches the model makes.
pub(crate) const USER_AGENT_AUTONOMOUS: &str =
    "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)";
/// The user agent of fetches the user asks for.
pub(crate) const USER_AGENT_MANUAL: &str =
    "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)";

/// The server's state: the HTTP clients and the options it was started with.
pub(crate) struct Fetch {
    pub(crate) http: Http,
    pub(crate) user_agent_autonomous: String,
    pub(crate) user_agent_manual: String,
    pub(crate) ignore_robots_txt: bool,
}

impl Fetch {
    /// The server for these options: `user_agent` replaces both default user agents.
    pub(crate) fn new(http: Http, user_agent: Option<String>, ignore_robots_txt: bool) -> Self {
        Self {
            http,
            user_agent_autonomous: user_agent
                .clone()
                .unwrap_or_else(|| USER_AGENT_AUTONOMOUS.to_owned()),
            user_agent_manual: user_agent.unwrap_or_else(|| USER_AGENT_MANUAL.to_owned()),
            ignore_robots_txt,
        }
    }
}

#[server(name = "mcp-fetch")]
impl Fetch {
    #[tool(
        name = "fetch",
        description = "Fetches a URL from the internet and optionally extracts its contents as markdown.\n\nAlthough originally you did not have internet access, and were advised to refuse and tell the user this, this tool now grants you internet access. Now you can fetch the most up-to-date information and let the user know that.",
        read_only,
        destructive = false,
        idempotent,
        open_world
    )]
    async fn fetch_tool(
        &self,
        /// URL to fetch
        url: FetchUrl,
        /// Maximum number of characters to return.
        #[arg(default = MaxLength(5000))]
        max_length: MaxLength,
        /// On return output starting at this character index, useful if a previous fetch was truncated and more context is required.
        #[arg(default = StartIndex(0))]
        start_index: StartIndex,
        /// Get the actual HTML content of the requested page, without simplification.
        #[arg(default = false)]
        raw: bool,
    ) -> Result<String, ToolError> {
        let url = url.0;
        let user_agent = self.user_agent_autonomous.as_str();
        if !self.ignore_robots_txt {
            robots::check(&self.http, &url, user_agent)
                .await
                .map_err(failed)?;
        }
        let (content, prefix) = self
            .fetch_page(&url, user_agent, raw, !self.ignore_robots_txt)
            .await
            .map_err(failed)?;
        let page = paginate(&content, start_index.0, max_length.0);
        Ok(format!("{prefix}Contents of {url}:\n{page}"))
    }

    /// Fetch a URL and extract its contents as markdown
    #[prompt(name = "fetch")]
    async fn fetch_prompt(
        &self,
        /// URL to fetch
        url: String,
    ) -> String {
        // The user asked for this page: robots.txt is not consulted, and a failure is the
        // prompt's text rather than an error.
        let fetched = match Url::parse(&url) {
            Ok(parsed) => {
                self.fetch_page(&parsed, &self.user_agent_manual, false, false)
                    .await
            }
            Err(error) => Err(format!("Failed to fetch {url}: {error}")),
        };
        match fetched {
            Ok((content, prefix)) => format!("{prefix}{content}"),
            Err(message) => message,
        }
    }
}

impl Fetch {
    /// The page at `url` for the model: its article as Markdown when it is HTML and `raw` is
    /// not asked for, otherwise its text with a prefix saying so. With `robots_txt`, each
    /// redirect hop is checked against its own site's robots.txt first.
    async fn fetch_page(
        &self,
        url: &Url,
        user_agent: &str,
        raw: bool,
        robots_txt: bool,
    ) -> Result<(String, String), String> {
        let http = &self.http;
        let hop_check = |hop: Url| async move {
            if robots_txt {
                robots::check(http, &hop, user_agent)
                    .await
                    .map_err(|denied| denied.to_string())
            } else {
                Ok(())
            }
        };
        let failure = |error: RequestError| match error {
            RequestError::Refused { url, refused } => refused.message(&url),
            RequestError::Setup(message) | RequestError::Hop(message) => message,
            RequestError::Transport(reason) => format!("Failed to fetch {url}: {reason}"),
            RequestError::TooLarge(limit) => format!(
                "Failed to fetch {url}: the response is larger than {limit} bytes, the most this \
                 server reads (--max-body-bytes)"
            ),
        };
        let fetched = http
            .get(url, user_agent, false, hop_check)
            .await
            .map_err(failure)?;
        let status = fetched.status().as_u16();
        if status >= 400 {
            return Err(format!("Failed to fetch {url} - status code {status}"));
        }
        let content_type = fetched.content_type();
        let text = fetched
            .text(http.max_body_bytes(), false)
            .await
            .map_err(failure)?;
        let starts_like_html = text.chars().take(100).collect::<String>().contains("<html");
        let is_html =
            starts_like_html || content_type.contains("text/html") || content_type.is_empty();
        if is_html && !raw {
            return Ok((markdown::simplify_off_runtime(text).await, String::new()));
        }
        Ok((
            text,
            format!(
                "Content type {content_type} cannot be simplified to markdown, but here is the raw content:\n"
            ),
        ))
    }
}

/// A failure as the model reads it: the original's SDK puts `Error executing tool fetch: `
/// before the message of every failure the tool raises.
fn failed(message: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!("Error executing tool fetch: {message}"))
}

/// `max_length` characters of `content` from character `start` (characters, not bytes, as the
/// original counts them), with the note to call again when more is left.
pub(crate) fn paginate(content: &str, start: u64, max_length: u32) -> String {
    let total = content.chars().count();
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    if start >= total {
        return "<error>No more content available.</error>".to_owned();
    }
    let max_length = max_length as usize;
    let byte_at = |chars: usize| {
        content
            .char_indices()
            .nth(chars)
            .map_or(content.len(), |(at, _)| at)
    };
    let begin = byte_at(start);
    let end = byte_at(start.saturating_add(max_length));
    let page = content.get(begin..end).unwrap_or_default();
    let taken = total.min(start.saturating_add(max_length)) - start;
    let mut out = page.to_owned();
    if taken == max_length && start + taken < total {
        out.push_str(&format!(
            "\n\n<error>Content truncated. Call the fetch tool with a start_index of {} to get more content.</error>",
            start + taken
        ));
    }
    out
}

/// The `url` argument: an absolute URL (any scheme, as the original's validator accepts;
/// only `http` and `https` are fetched).
#[derive(Debug, Clone)]
pub(crate) struct FetchUrl(pub(crate) Url);

impl<'de> Deserialize<'de> for FetchUrl {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Url::parse(&text)
            .map(FetchUrl)
            .map_err(|error| serde::de::Error::custom(format!("not an absolute URL ({error})")))
    }
}

impl JsonSchema for FetchUrl {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("FetchUrl")
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "format": "uri", "minLength": 1})
    }
}

/// The `max_length` argument: 1 to 999,999 characters.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(transparent)]
pub(crate) struct MaxLength(pub(crate) u32);

/// The largest `max_length`.
const MAX_LENGTH: u32 = 999_999;

impl<'de> Deserialize<'de> for MaxLength {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i64::deserialize(deserializer)?;
        u32::try_from(value)
            .ok()
            .filter(|n| (1..=MAX_LENGTH).contains(n))
            .map(MaxLength)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("{value} is not between 1 and {MAX_LENGTH}"))
            })
    }
}

impl JsonSchema for MaxLength {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("MaxLength")
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_LENGTH})
    }
}

/// The `start_index` argument: a character index, 0 or more.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(transparent)]
pub(crate) struct StartIndex(pub(crate) u64);

impl<'de> Deserialize<'de> for StartIndex {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i128::deserialize(deserializer)?;
        u64::try_from(value).map(StartIndex).map_err(|_| {
            serde::de::Error::custom(format!("{value} is not a character index (0 or more)"))
        })
    }
}

impl JsonSchema for StartIndex {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("StartIndex")
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 0})
    }
}
