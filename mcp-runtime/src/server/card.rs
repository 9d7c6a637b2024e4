//! The Server Card (SEP-2127, the experimental extension `modelcontextprotocol/experimental-ext-server-card`):
//! a static JSON document that tells a client who a remote server is and where to connect before
//! it connects, and the AI Catalog entry that lets a client find the card on a domain.
//!
//! The card is made from the server's own `serverInfo` (name → none: the card's `name` is the
//! reverse-DNS name given to [`ServerCard::new`]; `version`, `title`, `description`, `icons`,
//! `websiteUrl` from the server), the remotes given with [`ServerCard::remote`] (each with every
//! protocol revision the server speaks), and an optional repository. The schema's rules are
//! checked when the server is built: a name of 3 to 200 characters with exactly one `/`
//! (`com.example/weather`), a `description` of 1 to 100 characters (required), a `title` of at
//! most 100, remote URLs that are absolute `http(s)://` URLs. `cargo mcp card` builds the same
//! card from a running server, and validates it against the published schema.

use serde_json::{Map, Value, json};

use crate::protocol::Implementation;

/// `$schema` of every Server Card of this revision of the extension.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// The media type of a Server Card.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The media type of an AI Catalog.
pub const AI_CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";

/// A Server Card to serve (`Server::server_card`) or to write (`cargo mcp card`).
///
/// ```
/// use mcp_runtime::ServerCard;
/// use mcp_runtime::protocol::Implementation;
///
/// let card = ServerCard::new("com.example/weather").remote("https://weather.example.com/mcp");
/// let mut info = Implementation::new("weather", "1.2.0");
/// info.description = Some("Forecasts for any city.".into());
/// let json = card.to_json(&info, &["2025-11-25"]).unwrap();
/// assert_eq!(json["name"], "com.example/weather");
/// assert_eq!(json["remotes"][0]["url"], "https://weather.example.com/mcp");
/// // Without a description the card breaks the schema, and says so.
/// let problems = card.to_json(&Implementation::new("weather", "1.2.0"), &[]).unwrap_err();
/// assert!(problems[0].contains("description"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCard {
    name: String,
    remotes: Vec<String>,
    repository: Option<Repository>,
}

/// Where the server's source is.
#[derive(Debug, Clone, PartialEq)]
struct Repository {
    source: String,
    url: String,
    subfolder: Option<String>,
}

impl ServerCard {
    /// A card for the server called `name` in reverse-DNS form: a namespace you control, one
    /// `/`, and the server's name (`com.example/weather`, `io.github.you/weather`).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            remotes: Vec::new(),
            repository: None,
        }
    }

    /// Adds the public Streamable HTTP URL the server is reached at
    /// (`https://weather.example.com/mcp`). The card is served at this URL plus `/server-card`.
    pub fn remote(mut self, url: impl Into<String>) -> Self {
        self.remotes.push(url.into());
        self
    }

    /// Names the server's source repository: `source` is the host's identifier (`"github"`),
    /// `url` the repository's URL.
    pub fn repository(mut self, source: impl Into<String>, url: impl Into<String>) -> Self {
        self.repository = Some(Repository {
            source: source.into(),
            url: url.into(),
            subfolder: None,
        });
        self
    }

    /// The path of the server in its repository, for a server in a monorepo.
    pub fn repository_subfolder(mut self, subfolder: impl Into<String>) -> Self {
        if let Some(repository) = &mut self.repository {
            repository.subfolder = Some(subfolder.into());
        }
        self
    }

    /// The reverse-DNS name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The remote URLs, in the order given.
    pub fn remotes(&self) -> &[String] {
        &self.remotes
    }

    /// The card for a server that says `info` about itself and speaks `versions`, or every way
    /// it breaks the card's schema.
    pub fn to_json(&self, info: &Implementation, versions: &[&str]) -> Result<Value, Vec<String>> {
        let mut problems = Vec::new();
        if !is_reverse_dns_name(&self.name) {
            problems.push(format!(
                "the Server Card name `{}` must be 3 to 200 characters of a namespace, one `/` and a name (`com.example/weather`): letters, digits, `.` and `-` before the `/`, also `_` after it",
                self.name
            ));
        }
        let description = info.description.as_deref().unwrap_or("");
        match description.chars().count() {
            0 => problems.push(
                "a Server Card needs the server's description: set `Server::description` (1 to 100 characters)".to_owned(),
            ),
            1..=100 => {}
            n => problems.push(format!(
                "the server's description is {n} characters; a Server Card allows at most 100"
            )),
        }
        if let Some(title) = &info.title
            && !(1..=100).contains(&title.chars().count())
        {
            problems
                .push("the server's title must be 1 to 100 characters for a Server Card".into());
        }
        if info.version.len() > 255 {
            problems.push("the server's version is longer than 255 characters".into());
        }
        for url in &self.remotes {
            if !is_http_url(url) {
                problems.push(format!(
                    "the remote `{url}` must be an absolute http:// or https:// URL without spaces"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut card = Map::new();
        card.insert("$schema".into(), json!(SERVER_CARD_SCHEMA));
        card.insert("name".into(), json!(self.name));
        card.insert("version".into(), json!(info.version));
        card.insert("description".into(), json!(description));
        if let Some(title) = &info.title {
            card.insert("title".into(), json!(title));
        }
        if let Some(icons) = info.icons.as_ref().filter(|icons| !icons.is_empty()) {
            card.insert("icons".into(), json!(icons));
        }
        if let Some(website) = &info.website_url {
            card.insert("websiteUrl".into(), json!(website));
        }
        if let Some(repository) = &self.repository {
            let mut object = json!({"source": repository.source, "url": repository.url});
            if let Some(subfolder) = &repository.subfolder {
                object["subfolder"] = json!(subfolder);
            }
            card.insert("repository".into(), object);
        }
        if !self.remotes.is_empty() {
            let remotes: Vec<Value> = self
                .remotes
                .iter()
                .map(|url| {
                    json!({
                        "type": "streamable-http",
                        "url": url,
                        "supportedProtocolVersions": versions,
                    })
                })
                .collect();
            card.insert("remotes".into(), Value::Array(remotes));
        }
        Ok(Value::Object(card))
    }

    /// The AI Catalog (`/.well-known/ai-catalog.json`) that lists this card: by URL (the first
    /// remote plus `/server-card`) when the card has a remote, else inline.
    pub fn catalog(&self, card: &Value) -> Value {
        let mut entry = json!({
            "identifier": self.catalog_identifier(),
            "type": SERVER_CARD_MEDIA_TYPE,
        });
        match self.remotes.first() {
            Some(remote) => {
                entry["url"] = json!(format!("{}/server-card", remote.trim_end_matches('/')));
            }
            None => entry["data"] = card.clone(),
        }
        json!({"specVersion": "1.0", "entries": [entry]})
    }

    /// `urn:air:{publisher}:mcp:{name}`, the publisher being the namespace's domain
    /// (`com.example/weather` is `urn:air:example.com:mcp:weather`).
    fn catalog_identifier(&self) -> String {
        let (namespace, name) = self.name.split_once('/').unwrap_or(("", &self.name));
        let publisher: Vec<&str> = namespace.rsplit('.').collect();
        format!("urn:air:{}:mcp:{name}", publisher.join("."))
    }
}

/// The schema's `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters.
fn is_reverse_dns_name(name: &str) -> bool {
    let Some((namespace, server)) = name.split_once('/') else {
        return false;
    };
    (3..=200).contains(&name.len())
        && !namespace.is_empty()
        && !server.is_empty()
        && namespace
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && server
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// An absolute `http://` or `https://` URL with a host and no whitespace.
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        !rest.is_empty() && !rest.starts_with('/') && !url.chars().any(char::is_whitespace)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> Implementation {
        let mut info = Implementation::new("weather", "1.2.0");
        info.description = Some("Forecasts.".into());
        info.title = Some("Weather".into());
        info.website_url = Some("https://example.com".into());
        info
    }

    #[test]
    fn the_card_says_what_the_server_says_about_itself() {
        let card = ServerCard::new("com.example/weather")
            .remote("https://example.com/mcp")
            .repository("github", "https://github.com/example/weather")
            .repository_subfolder("server");
        let json = card
            .to_json(&info(), &["2025-11-25", "2026-07-28"])
            .unwrap();
        assert_eq!(
            json,
            json!({
                "$schema": SERVER_CARD_SCHEMA,
                "name": "com.example/weather",
                "version": "1.2.0",
                "description": "Forecasts.",
                "title": "Weather",
                "websiteUrl": "https://example.com",
                "repository": {"source": "github", "url": "https://github.com/example/weather", "subfolder": "server"},
                "remotes": [{"type": "streamable-http", "url": "https://example.com/mcp",
                             "supportedProtocolVersions": ["2025-11-25", "2026-07-28"]}]
            })
        );
        assert_eq!(
            card.catalog(&json),
            json!({"specVersion": "1.0", "entries": [{
                "identifier": "urn:air:example.com:mcp:weather",
                "type": "application/mcp-server-card+json",
                "url": "https://example.com/mcp/server-card"
            }]})
        );
    }

    #[test]
    fn without_a_remote_the_catalog_carries_the_card() {
        let card = ServerCard::new("io.github.someone/weather");
        let json = card.to_json(&info(), &[]).unwrap();
        assert!(json.get("remotes").is_none());
        let catalog = card.catalog(&json);
        assert_eq!(
            catalog["entries"][0]["identifier"],
            "urn:air:someone.github.io:mcp:weather"
        );
        assert_eq!(catalog["entries"][0]["data"], json);
    }

    #[test]
    fn what_breaks_the_schema_is_refused_with_every_reason() {
        for name in [
            "weather",
            "a/",
            "/b",
            "com.example/we/ather",
            "com example/w",
            "c/w!",
        ] {
            let problems = ServerCard::new(name).to_json(&info(), &[]).unwrap_err();
            assert!(
                problems[0].contains("Server Card name"),
                "{name}: {problems:?}"
            );
        }
        let mut long = info();
        long.description = Some("x".repeat(101));
        long.title = Some(String::new());
        let problems = ServerCard::new("com.example/w")
            .remote("ftp://example.com")
            .remote("https://example.com/ mcp")
            .to_json(&long, &[])
            .unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].contains("101 characters"));
    }
}
