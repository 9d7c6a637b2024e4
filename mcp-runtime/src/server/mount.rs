//! Mounting one server's items inside another, under a namespace (`Server::mount`): the
//! in-process half of a gateway. The mounted items are ordinary items of the outer server,
//! renamed, so everything the outer server does (its limits, scopes, layers, both eras, tasks)
//! applies to them, and their handlers see the outer request's context. The mounted server's
//! own layers wrap its items, inside the outer server's.

use std::sync::Arc;

use super::exchange::enclose_item;
use super::{Items, Server};
use crate::error::{DefinitionError, is_valid_tool_name};
use crate::registration::Item;

/// What goes between a namespace and an item's own name: `weather` + `forecast` is
/// `weather_forecast`.
pub(crate) const SEPARATOR: char = '_';

/// Whether `namespace` can prefix names: 1 to 63 characters of the tool-name set, so that
/// `{namespace}_x` is a valid name.
pub(crate) fn is_valid_namespace(namespace: &str) -> bool {
    namespace.len() < 64 && is_valid_tool_name(namespace)
}

/// `{namespace}_{name}`.
pub(crate) fn namespaced(namespace: &str, name: &str) -> String {
    let mut out = String::with_capacity(namespace.len() + 1 + name.len());
    out.push_str(namespace);
    out.push(SEPARATOR);
    out.push_str(name);
    out
}

impl Server {
    /// Serves `server`'s tools and prompts under `namespace` too, renamed `{namespace}_{name}`
    /// (tool `forecast` of a server mounted as `weather` is `weather_forecast`), and its
    /// resources and resource templates at their own URIs.
    ///
    /// The mounted items become this server's own: they are listed, called, limited,
    /// authorized and logged as its local items are, in both eras, and their handlers run in
    /// the context of this server's request (`ctx.elicit` reaches this server's client). What
    /// `server` brings with it:
    ///
    /// - its selection: [`Server::builder`]`().tool(..)` items, [`Server::tool_def`] and
    ///   friends, a `#[server]` impl block ([`McpServer::into_server`](crate::McpServer)), and
    ///   what it mounted itself (nested names: `outer_inner_tool`). A `#[tool]` function it
    ///   selects is left out of this server's own [`Server::new`] selection, so it is served
    ///   once, under the namespace; a [`Server::new`] mounted inside another serves every item
    ///   of the binary, and clashes;
    /// - its [`required_scopes`](Server::required_scopes), added to each of its items' scopes;
    /// - its layers ([`Server::layer`]): each of its items' requests go through them, inside
    ///   this server's layers and outside the item's own ([`ToolDef::layer`](crate::tool::ToolDef::layer));
    /// - its opt-ins to items added while serving ([`Server::dynamic_tools`] and friends).
    ///
    /// Its name, instructions, limits, transport settings, OAuth and skills are not used: this
    /// server's apply. A server that proxies upstreams (`Server::proxy`) cannot be mounted:
    /// proxy them on this server instead.
    ///
    /// [`Server::build`] checks the whole: a namespace must be 1 to 63 characters of
    /// `A-Z a-z 0-9 _ - .` and used once; a renamed tool or prompt that clashes with another
    /// item, or whose new name is longer than 64 characters, and a resource URI or template
    /// that another item serves too, are refused with both places named, the mounted one
    /// marked `(mounted as `{namespace}`)`.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    ///
    /// /// Tomorrow's weather in a city.
    /// #[tool]
    /// async fn forecast(city: String) -> String {
    ///     format!("Sunny in {city}")
    /// }
    ///
    /// /// Add two integers.
    /// #[tool]
    /// async fn add(a: i64, b: i64) -> i64 {
    ///     a + b
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let weather = Server::builder().tool(forecast);
    /// let server = Server::builder().tool(add).mount("weather", weather);
    /// # use mcp_runtime::testing::Client;
    /// # use serde_json::json;
    /// # let client = Client::connect(server).await?;
    /// # let names: Vec<_> = client.list_tools().await?.iter().map(|t| t["name"].clone()).collect();
    /// # assert_eq!(names, [json!("add"), json!("weather_forecast")]);
    /// # let sunny = client.call_tool("weather_forecast", json!({"city": "Oslo"})).await?;
    /// # assert_eq!(sunny.text(), "Sunny in Oslo");
    /// # Ok(())
    /// # }
    /// ```
    pub fn mount(mut self, namespace: impl Into<String>, mut server: Server) -> Self {
        let namespace = namespace.into();
        if !is_valid_namespace(&namespace) {
            self.pending_errors.push(DefinitionError::Invalid {
                kind: "server",
                name: namespace.clone(),
                location: "Server::mount".to_owned(),
                problem: "a namespace is 1 to 63 characters of `A-Z a-z 0-9 _ - .`".to_owned(),
            });
            return self;
        }
        self.claim_namespace(&namespace, "Server::mount");
        if server.attachment.is_some() {
            self.pending_errors.push(DefinitionError::Invalid {
                kind: "server",
                name: namespace.clone(),
                location: "Server::mount".to_owned(),
                problem: "the mounted server proxies upstream servers: proxy them on the outer \
                          server instead (`Server::proxy`)"
                    .to_owned(),
            });
        }
        let mut errors = std::mem::take(&mut server.pending_errors);
        let selected = server.selected_entries(&mut errors);
        let mut items = std::mem::take(&mut server.extra);
        for entry in &selected {
            self.mounted.push((entry.type_id)());
            match entry.item {
                Item::Tool(build) => items.tools.push(build()),
                Item::Resource(build) => items.resources.push(build()),
                Item::Prompt(build) => items.prompts.push(build()),
            }
        }
        self.mounted.append(&mut server.mounted);
        #[cfg(feature = "skills")]
        {
            errors.append(&mut server.skill_errors);
            if !server.skills.is_empty() {
                errors.push(DefinitionError::Invalid {
                    kind: "server",
                    name: namespace.clone(),
                    location: "Server::mount".to_owned(),
                    problem: "the mounted server serves skills, which are not mounted: add them \
                              to the outer server (`Server::skills`)"
                        .to_owned(),
                });
            }
        }
        let origin: Arc<str> = Arc::from(format!("mounted as `{namespace}`"));
        let scopes = &server.options.scopes;
        let layers = server.middleware.take();
        let Items {
            tools,
            resources,
            prompts,
        } = items;
        for mut tool in tools {
            tool.name = namespaced(&namespace, &tool.name).into();
            mark(&mut tool.metadata, &origin, scopes);
            if let Some(layers) = &layers {
                tool.layer = Some(enclose_item(tool.layer.take(), layers));
            }
            self.extra.tools.push(tool);
        }
        for mut prompt in prompts {
            prompt.name = namespaced(&namespace, &prompt.name).into();
            mark(&mut prompt.metadata, &origin, scopes);
            if let Some(layers) = &layers {
                prompt.layer = Some(enclose_item(prompt.layer.take(), layers));
            }
            self.extra.prompts.push(prompt);
        }
        for mut resource in resources {
            mark(&mut resource.metadata.metadata, &origin, scopes);
            if let Some(layers) = &layers {
                resource.layer = Some(enclose_item(resource.layer.take(), layers));
            }
            self.extra.resources.push(resource);
        }
        self.dynamic.tools |= server.dynamic.tools;
        self.dynamic.resources |= server.dynamic.resources;
        self.dynamic.prompts |= server.dynamic.prompts;
        self.pending_errors.append(&mut errors);
        self
    }
}

/// Marks a mounted item: where it came from, and the scopes its server required of every item.
fn mark(metadata: &mut crate::metadata::Metadata, origin: &Arc<str>, scopes: &[String]) {
    metadata.origin = Some(match &metadata.origin {
        // Mounted twice over: both namespaces, innermost first.
        Some(inner) => Arc::from(format!("{inner}, {origin}")),
        None => Arc::clone(origin),
    });
    for scope in scopes {
        if !metadata.scopes.iter().any(|s| s == scope) {
            metadata.scopes.push(scope.clone().into());
        }
    }
}
