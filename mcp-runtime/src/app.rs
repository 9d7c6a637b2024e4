//! MCP Apps (the `io.modelcontextprotocol/ui` extension, 2026-01-26): HTML pages a host renders
//! for a tool. A page is a `ui://` resource served as `text/html;profile=mcp-app` with
//! `_meta.ui` (content security policy, permissions, domain, border); a tool links to it with
//! `_meta.ui.resourceUri` (`#[tool(ui = "ui://…")]` or [`ToolBuilder::ui`]). A server whose
//! tool names a page it does not serve is refused when it is built.
//!
//! ```
//! use mcp_runtime::app::UiResource;
//! use mcp_runtime::prelude::*;
//!
//! /// Show the weather.
//! #[tool(ui = "ui://weather/view")]
//! async fn weather(city: String) -> String {
//!     format!("Sunny in {city}")
//! }
//!
//! let page = UiResource::new("ui://weather/view", "weather-view", "<!doctype html><p>…</p>")
//!     .connect_domains(["https://api.example.com"])
//!     .prefers_border(true);
//! let server = Server::builder().tool(weather).resource_def(page.build());
//! assert!(server.build().is_ok());
//! ```
//!
//! # Where it sits
//!
//! It may import the items (`resource`, `tool`, `completion`), `context`, `protocol`, `schema`,
//! `metadata` and `error`; the server imports it.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::protocol::{ResourceContents, TextResourceContents};
use crate::resource::{ResourceBuilder, ResourceDef};
use crate::tool::{ToolBuilder, ToolDef};

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an app page.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// A sandbox permission a page asks the host for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Permission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboardWrite`.
    ClipboardWrite,
}

impl Permission {
    fn key(self) -> &'static str {
        match self {
            Self::Camera => "camera",
            Self::Microphone => "microphone",
            Self::Geolocation => "geolocation",
            Self::ClipboardWrite => "clipboardWrite",
        }
    }
}

/// An app page: a `ui://` HTML resource with its `_meta.ui`. [`UiResource::build`] makes the
/// resource to serve (`Server::resource_def`).
#[derive(Debug, Clone)]
pub struct UiResource {
    uri: String,
    name: String,
    html: Cow<'static, str>,
    description: Option<String>,
    csp: Map<String, Value>,
    permissions: Map<String, Value>,
    domain: Option<String>,
    prefers_border: Option<bool>,
    listed: bool,
}

impl UiResource {
    /// The page at `uri` (`ui://…`) called `name`, whose document is `html` (for example
    /// `include_str!("view.html")`, embedded and rebuilt when the file changes).
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            description: None,
            csp: Map::new(),
            permissions: Map::new(),
            domain: None,
            prefers_border: None,
            listed: true,
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    fn domains<S: Into<String>>(mut self, key: &str, domains: impl IntoIterator<Item = S>) -> Self {
        let list = self
            .csp
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.extend(domains.into_iter().map(|d| Value::String(d.into())));
        }
        self
    }

    /// Origins the page may fetch from (`csp.connectDomains`).
    pub fn connect_domains<S: Into<String>>(self, domains: impl IntoIterator<Item = S>) -> Self {
        self.domains("connectDomains", domains)
    }

    /// Origins of images, scripts, styles, fonts and media (`csp.resourceDomains`).
    pub fn resource_domains<S: Into<String>>(self, domains: impl IntoIterator<Item = S>) -> Self {
        self.domains("resourceDomains", domains)
    }

    /// Origins of nested frames (`csp.frameDomains`).
    pub fn frame_domains<S: Into<String>>(self, domains: impl IntoIterator<Item = S>) -> Self {
        self.domains("frameDomains", domains)
    }

    /// Allowed base URIs (`csp.baseUriDomains`).
    pub fn base_uri_domains<S: Into<String>>(self, domains: impl IntoIterator<Item = S>) -> Self {
        self.domains("baseUriDomains", domains)
    }

    /// Asks for a sandbox permission.
    pub fn permission(mut self, permission: Permission) -> Self {
        self.permissions
            .insert(permission.key().to_owned(), Value::Object(Map::new()));
        self
    }

    /// The dedicated origin the host should give the page (`domain`).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border around the page (`prefersBorder`).
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.prefers_border = Some(prefers);
        self
    }

    /// Leaves the page out of `resources/list`: hosts find it through the tool that links it.
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// `_meta.ui` of the page.
    fn ui_meta(&self) -> Value {
        let mut ui = Map::new();
        if !self.csp.is_empty() {
            ui.insert("csp".into(), Value::Object(self.csp.clone()));
        }
        if !self.permissions.is_empty() {
            ui.insert(
                "permissions".into(),
                Value::Object(self.permissions.clone()),
            );
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), Value::from(domain.as_str()));
        }
        if let Some(prefers) = self.prefers_border {
            ui.insert("prefersBorder".into(), Value::Bool(prefers));
        }
        Value::Object(ui)
    }

    /// The resource serving the page; `_meta.ui` is on its `resources/list` entry and on what
    /// `resources/read` returns. A URI that is not `ui://…` fails the server build.
    pub fn build(self) -> ResourceDef {
        let ui = self.ui_meta();
        let mut meta = Map::new();
        meta.insert("ui".into(), ui);
        let contents_meta = meta.clone();
        let uri = self.uri.clone();
        let html = self.html.clone();
        let mut builder = ResourceBuilder::new(self.uri.clone(), self.name.clone(), move |_| {
            let contents = ResourceContents::Text(TextResourceContents {
                uri: uri.clone(),
                mime_type: Some(MIME_TYPE.to_owned()),
                text: html.to_string(),
                meta: Some(contents_meta.clone()),
            });
            Box::pin(std::future::ready(Ok(vec![contents])))
        });
        builder.mime_type(MIME_TYPE).meta(Value::Object(meta));
        if let Some(description) = self.description {
            builder.description(description);
        }
        let mut def = builder.build();
        if !self.uri.starts_with("ui://") || self.uri.len() == "ui://".len() {
            def.metadata.metadata.problems.push(format!(
                "an app page is served at a `ui://` URI, not `{}`",
                self.uri
            ));
        }
        def.listed = self.listed;
        def
    }
}

impl ToolBuilder {
    /// Links the tool to the app page at `uri` (`_meta.ui.resourceUri`), visible to the model
    /// and the app (`_meta.ui.visibility`). The server must serve that page.
    pub fn ui(&mut self, uri: &str) -> &mut Self {
        self.ui_with_visibility(uri, &["model", "app"])
    }

    /// Links the tool to the app page at `uri`, with `visibility` (`"model"`, `"app"`): a tool
    /// only the app calls is `&["app"]`.
    pub fn ui_with_visibility(&mut self, uri: &str, visibility: &[&str]) -> &mut Self {
        let metadata = self.metadata_mut();
        if !uri.starts_with("ui://") {
            metadata
                .problems
                .push(format!("`ui` names `{uri}`, not a `ui://` URI"));
        }
        if let Some(bad) = visibility.iter().find(|v| !matches!(**v, "model" | "app")) {
            metadata
                .problems
                .push(format!("visibility `{bad}` is neither `model` nor `app`"));
        }
        let meta = metadata.meta.get_or_insert_with(Map::new);
        meta.insert(
            "ui".into(),
            json!({ "resourceUri": uri, "visibility": visibility }),
        );
        self
    }
}

/// The app page `tool` links to, if any (`_meta.ui.resourceUri`, or the deprecated flat
/// `_meta["ui/resourceUri"]`).
pub(crate) fn linked_page(tool: &ToolDef) -> Option<&str> {
    let meta = tool.metadata.meta.as_ref()?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
}

/// Every tool that links to an app page the server does not serve: `(tool, page)`.
pub(crate) fn unserved_links<'a>(
    tools: &'a [ToolDef],
    resources: &[ResourceDef],
) -> Vec<(&'a ToolDef, &'a str)> {
    tools
        .iter()
        .filter_map(|tool| Some((tool, linked_page(tool)?)))
        .filter(|(_, page)| {
            !resources
                .iter()
                .any(|r| !r.is_template() && r.uri() == *page)
        })
        .collect()
}
