//! An upstream's items as this server's own: definitions made from what it lists, whose
//! handlers forward to it, and the reconciliation that keeps the registry in step with every
//! upstream's last listing through the runtime's run-time changes.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::link::{Entry, Gateway, Kind, Link, Registered, failure, lock};
use super::names::served_names;
use super::relay::CallRelay;
use super::task::downstream_capabilities;
use crate::client::{
    Client, ClientError, CompletionRef, Prompt, RequestOptions, ResourceTemplate, Tool,
};
use crate::completion::Completions;
use crate::context::Context;
use crate::handle::{Broadcast as _, ListKind};
use crate::prompt::{GetPromptResult, PromptBuilder, PromptCall, PromptDef};
use crate::protocol::{
    CLIENT_CAPABILITIES_KEY, ErrorObject, LOG_LEVEL_KEY, ProtocolVersion, ResourceContents,
    error_codes,
};
use crate::resource::{ResourceBuilder, ResourceCall, ResourceDef, ResourceError, ResourceInfo};
use crate::server::Changes;
use crate::tool::{CallToolResult, TaskSupport, ToolBuilder, ToolCall, ToolDef};

/// An item some upstream lists, ready to be made a definition.
enum Listed {
    Tool(String, Tool),
    Prompt(String, Prompt),
    Resource(ResourceInfo),
    Template(ResourceTemplate),
}

impl Gateway {
    /// Makes the registry serve what every upstream last listed: items in no listing removed,
    /// new or changed ones added, in one change (one `list_changed` per kind that changed),
    /// clashes settled by who came first (local items, then upstreams in order).
    pub(crate) fn reconcile(&self) {
        let Some(core) = self.core.upgrade() else {
            return;
        };
        let mut registered = lock(&self.registered);
        let snapshot = core.registry();
        let ours = |kind: Kind, name: &str, registered: &Registered| {
            registered.served.contains_key(&(kind, name.to_owned()))
        };
        let mut desired: HashMap<(Kind, String), (Entry, Listed)> = HashMap::new();
        // The order items are added in: the upstreams' order, then each one's listing order,
        // so of two items the runtime cannot serve together the first listed is served.
        let mut order: Vec<(Kind, String)> = Vec::new();
        for link in &self.links {
            let listing = lock(&link.listing);
            let mut items: Vec<(Kind, String, String, Listed)> = Vec::new();
            let tool_names = served_names(&link.namespace, listing.tools.iter().map(|t| &*t.name));
            for (tool, served) in listing.tools.iter().zip(tool_names) {
                let fingerprint = serde_json::to_string(tool).unwrap_or_default();
                items.push((
                    Kind::Tool,
                    served.clone(),
                    fingerprint,
                    Listed::Tool(served, tool.clone()),
                ));
            }
            let prompt_names =
                served_names(&link.namespace, listing.prompts.iter().map(|p| &*p.name));
            for (prompt, served) in listing.prompts.iter().zip(prompt_names) {
                let fingerprint = serde_json::to_string(prompt).unwrap_or_default();
                items.push((
                    Kind::Prompt,
                    served.clone(),
                    fingerprint,
                    Listed::Prompt(served, prompt.clone()),
                ));
            }
            for resource in &listing.resources {
                let fingerprint = serde_json::to_string(resource).unwrap_or_default();
                items.push((
                    Kind::Resource,
                    resource.uri.clone(),
                    fingerprint,
                    Listed::Resource(resource.clone()),
                ));
            }
            for template in &listing.templates {
                let fingerprint = serde_json::to_string(template).unwrap_or_default();
                items.push((
                    Kind::Resource,
                    template.uri_template.clone(),
                    fingerprint,
                    Listed::Template(template.clone()),
                ));
            }
            drop(listing);
            for (kind, name, fingerprint, listed) in items {
                let key = (kind, name.clone());
                let local = match kind {
                    Kind::Tool => snapshot.tools.contains(&name),
                    Kind::Prompt => snapshot.prompts.contains(&name),
                    Kind::Resource => snapshot.resources.contains(&name),
                } && !ours(kind, &name, &registered);
                if local {
                    registered.warn_once(format!("local {kind:?} {name} {}", link.index), || {
                        tracing::warn!(upstream = %link.label, kind = ?kind, %name, "an upstream item is not served: a local item has its name (URI)");
                    });
                    continue;
                }
                if let Some((first, _)) = desired.get(&key) {
                    if first.link == link.index {
                        registered.warn_once(format!("twice {kind:?} {name} {}", link.index), || {
                            tracing::warn!(upstream = %link.label, kind = ?kind, %name, "an upstream item is not served: the upstream lists its name (URI) twice, the first is served");
                        });
                    } else {
                        let first = &self.links[first.link].label;
                        registered.warn_once(format!("clash {kind:?} {name} {}", link.index), || {
                            tracing::warn!(upstream = %link.label, kind = ?kind, %name, first = %first, "an upstream item is not served: another upstream's has its name (URI)");
                        });
                    }
                    continue;
                }
                let entry = Entry {
                    link: link.index,
                    fingerprint,
                };
                order.push(key.clone());
                desired.insert(key, (entry, listed));
            }
        }
        let mut removals = Vec::new();
        for (key, entry) in &registered.served {
            if desired.get(key).is_none_or(|(wanted, _)| wanted != entry) {
                removals.push(key.clone());
            }
        }
        let mut additions = Vec::new();
        for key in order {
            let Some((entry, listed)) = desired.remove(&key) else {
                continue;
            };
            if registered.served.get(&key) != Some(&entry) {
                additions.push((key, entry, listed));
            }
        }
        if removals.is_empty() && additions.is_empty() {
            return;
        }
        let mut changes = Changes::new();
        for (kind, name) in &removals {
            remove(&mut changes, *kind, name);
        }
        let mut defs = Vec::with_capacity(additions.len());
        for (key, entry, listed) in additions {
            let link = &self.links[entry.link];
            let def = self.definition(link, listed);
            let problems = def.problems();
            if !problems.is_empty() {
                // What the runtime would refuse (a URI template that does not parse, an input
                // schema that is no object): left out, so the rest go in together.
                let label = link.label.clone();
                registered.warn_once(format!("refused {:?} {} {}", key.0, key.1, entry.fingerprint), || {
                    tracing::warn!(upstream = %label, kind = ?key.0, name = %key.1, problem = %problems.join("; "), "an upstream item is not served: this server cannot serve it as listed");
                });
                continue;
            }
            add(&mut changes, def.clone());
            defs.push((key, entry, def));
        }
        // Applied without announcing, then announced once per list that changed, however
        // the change had to be made.
        let mut changed = Vec::new();
        match core.apply_changes(changes) {
            Ok(kinds) => {
                changed = kinds;
                for key in removals {
                    registered.served.remove(&key);
                }
                for (key, entry, _) in defs {
                    registered.served.insert(key, entry);
                }
            }
            Err(error) => {
                // Something refused the whole: an item added at run time meanwhile, a
                // template no request could tell from another's. Removals one at a time
                // (one removed at run time is gone already), then additions by halves, so
                // each refused one is found in a few tries and left out.
                tracing::debug!(%error, "a gateway refresh applied in parts");
                for key in removals {
                    let mut one = Changes::new();
                    remove(&mut one, key.0, &key.1);
                    if let Ok(kinds) = core.apply_changes(one) {
                        merge(&mut changed, kinds);
                    }
                    registered.served.remove(&key);
                }
                self.add_by_halves(&core, &mut registered, defs, &mut changed);
            }
        }
        for kind in changed {
            core.list_changed(kind);
        }
    }

    /// Adds `defs` (none announced): all at once, else each half on its own, down to the
    /// single definitions refused, which are left out with a warning.
    fn add_by_halves(
        &self,
        core: &crate::server::Core,
        registered: &mut Registered,
        mut defs: Vec<((Kind, String), Entry, Definition)>,
        changed: &mut Vec<ListKind>,
    ) {
        if defs.is_empty() {
            return;
        }
        let mut changes = Changes::new();
        for (_, _, def) in &defs {
            add(&mut changes, def.clone());
        }
        match core.apply_changes(changes) {
            Ok(kinds) => {
                merge(changed, kinds);
                for (key, entry, _) in defs {
                    registered.served.insert(key, entry);
                }
            }
            Err(error) if defs.len() == 1 => {
                let (key, entry, _) = &defs[0];
                let label = self.links[entry.link].label.clone();
                registered.warn_once(format!("refused {:?} {} {}", key.0, key.1, entry.fingerprint), || {
                    tracing::warn!(upstream = %label, kind = ?key.0, name = %key.1, %error, "an upstream item is not served");
                });
            }
            Err(_) => {
                let second = defs.split_off(defs.len() / 2);
                self.add_by_halves(core, registered, defs, changed);
                self.add_by_halves(core, registered, second, changed);
            }
        }
    }

    /// The upstream whose item serves `uri` here, if one does.
    pub(crate) fn owner_of(&self, uri: &str) -> Option<Arc<Link>> {
        let core = self.core.upgrade()?;
        let registry = core.registry();
        let (def, _) = registry.resources.resolve(uri)?;
        let registered = lock(&self.registered);
        let entry = registered
            .served
            .get(&(Kind::Resource, def.uri().to_owned()))?;
        Some(Arc::clone(&self.links[entry.link]))
    }

    fn definition(&self, link: &Arc<Link>, listed: Listed) -> Definition {
        let gateway = self.me.clone();
        match listed {
            Listed::Tool(served, tool) => Definition::Tool(tool_def(link, gateway, served, tool)),
            Listed::Prompt(served, prompt) => {
                Definition::Prompt(prompt_def(link, gateway, served, prompt))
            }
            Listed::Resource(resource) => {
                Definition::Resource(resource_def(link, gateway, resource))
            }
            Listed::Template(template) => {
                Definition::Resource(template_def(link, gateway, template))
            }
        }
    }
}

#[derive(Clone)]
enum Definition {
    Tool(ToolDef),
    Prompt(PromptDef),
    Resource(ResourceDef),
}

impl Definition {
    /// What the runtime finds wrong with it, as its builder recorded.
    fn problems(&self) -> &[String] {
        match self {
            Definition::Tool(def) => &def.metadata.problems,
            Definition::Prompt(def) => &def.metadata.problems,
            Definition::Resource(def) => def.problems(),
        }
    }
}

/// Adds the lists in `kinds` to `changed`, once each.
fn merge(changed: &mut Vec<ListKind>, kinds: Vec<ListKind>) {
    for kind in kinds {
        if !changed.contains(&kind) {
            changed.push(kind);
        }
    }
}

fn remove(changes: &mut Changes, kind: Kind, name: &str) {
    match kind {
        Kind::Tool => changes.remove_tool(name),
        Kind::Prompt => changes.remove_prompt(name),
        Kind::Resource => changes.remove_resource(name),
    };
}

fn add(changes: &mut Changes, def: Definition) {
    match def {
        Definition::Tool(def) => changes.add_tool(def),
        Definition::Prompt(def) => changes.add_prompt(def),
        Definition::Resource(def) => changes.add_resource(def),
    };
}

/// Marks a proxied definition's metadata: where it came from, and its upstream's scopes.
fn mark(metadata: &mut crate::metadata::Metadata, link: &Link) {
    metadata.origin = Some(Arc::clone(&link.origin));
    for scope in &link.upstream.scopes {
        metadata.scopes.push(scope.clone().into());
    }
}

fn tool_def(link: &Arc<Link>, gateway: Weak<Gateway>, served: String, tool: Tool) -> ToolDef {
    let support = match tool
        .extra
        .get("execution")
        .and_then(|e| e.get("taskSupport"))
        .and_then(Value::as_str)
    {
        Some("required") => TaskSupport::Required,
        Some("optional") => TaskSupport::Optional,
        _ => TaskSupport::Forbidden,
    };
    let mut builder = ToolBuilder::new(served, |_| {
        Box::pin(async { CallToolResult::error("a proxied tool is served by its relay") })
    });
    let mut input = tool.input_schema;
    input.entry("type").or_insert_with(|| Value::from("object"));
    builder.raw_input_schema(Value::Object(input));
    if let Some(output) = tool.output_schema {
        builder.raw_output_schema(output);
    }
    if let Some(title) = tool.title {
        builder.title(title);
    }
    if let Some(description) = tool.description {
        builder.description(description);
    }
    if let Some(icons) = tool.icons {
        builder.icons(icons);
    }
    if let Some(meta) = tool.meta {
        builder.meta(meta);
    }
    if let Some(annotations) = tool.annotations {
        builder.annotations(annotations);
    }
    builder.task_support(support);
    let relayed = Arc::clone(link);
    let upstream_name: Arc<str> = Arc::from(tool.name);
    builder.relay(Arc::new(move |call| {
        Box::pin(call_tool(
            Arc::clone(&relayed),
            gateway.clone(),
            Arc::clone(&upstream_name),
            support,
            call,
        ))
    }));
    let mut def = builder.build();
    mark(&mut def.metadata, link);
    def.layer = link.item_layer();
    def
}

fn prompt_def(
    link: &Arc<Link>,
    gateway: Weak<Gateway>,
    served: String,
    prompt: Prompt,
) -> PromptDef {
    let relayed = Arc::clone(link);
    let upstream_name: Arc<str> = Arc::from(prompt.name.as_str());
    let name = Arc::clone(&upstream_name);
    let for_get = gateway.clone();
    let mut builder = PromptBuilder::new(served, move |call| {
        Box::pin(get_prompt(
            Arc::clone(&relayed),
            for_get.clone(),
            Arc::clone(&name),
            call,
        ))
    });
    if let Some(title) = prompt.title {
        builder.title(title);
    }
    if let Some(description) = prompt.description {
        builder.description(description);
    }
    if let Some(icons) = prompt.icons {
        builder.icons(icons);
    }
    if let Some(meta) = prompt.meta {
        builder.meta(meta);
    }
    let mut def = builder.build();
    def.arguments = prompt.arguments;
    def.forward_completion = Some(forward_completion(
        link,
        CompletionRef::Prompt(upstream_name.to_string()),
    ));
    mark(&mut def.metadata, link);
    def.layer = link.item_layer();
    def
}

fn resource_def(link: &Arc<Link>, gateway: Weak<Gateway>, resource: ResourceInfo) -> ResourceDef {
    let relayed = Arc::clone(link);
    let mut builder = ResourceBuilder::new(resource.uri, resource.name, move |call| {
        Box::pin(read_resource(Arc::clone(&relayed), gateway.clone(), call))
    });
    if let Some(title) = resource.title {
        builder.title(title);
    }
    if let Some(description) = resource.description {
        builder.description(description);
    }
    if let Some(mime_type) = &resource.mime_type {
        builder.mime_type(mime_type);
    }
    if let Some(size) = resource.size {
        builder.size(size);
    }
    if let Some(annotations) = resource.annotations {
        builder.annotations(annotations);
    }
    if let Some(icons) = resource.icons {
        builder.icons(icons);
    }
    if let Some(meta) = resource.meta {
        builder.meta(meta);
    }
    let mut def = builder.build();
    mark(&mut def.metadata.metadata, link);
    def.layer = link.item_layer();
    def
}

fn template_def(
    link: &Arc<Link>,
    gateway: Weak<Gateway>,
    template: ResourceTemplate,
) -> ResourceDef {
    let relayed = Arc::clone(link);
    let uri = template.uri_template.clone();
    let mut builder = ResourceBuilder::new(template.uri_template, template.name, move |call| {
        Box::pin(read_resource(Arc::clone(&relayed), gateway.clone(), call))
    });
    if let Some(title) = template.title {
        builder.title(title);
    }
    if let Some(description) = template.description {
        builder.description(description);
    }
    if let Some(mime_type) = &template.mime_type {
        builder.mime_type(mime_type);
    }
    if let Some(annotations) = template.annotations {
        builder.annotations(annotations);
    }
    if let Some(icons) = template.icons {
        builder.icons(icons);
    }
    if let Some(meta) = template.meta {
        builder.meta(meta);
    }
    // The upstream checks its own variables: the URI goes to it as it came.
    builder.allow_traversal();
    let mut def = builder.build();
    def.forward_completion = Some(forward_completion(
        link,
        CompletionRef::ResourceTemplate(uri),
    ));
    mark(&mut def.metadata.metadata, link);
    def.layer = link.item_layer();
    def
}

/// The options of a forwarded request: no timeout of its own, the call's relay handler, its
/// progress and log level, the downstream `_meta`, and (for an upstream task) the tasks
/// extension declared.
fn forward_options(
    link: &Arc<Link>,
    gateway: &Weak<Gateway>,
    client: &Client,
    ctx: &Context,
    ended: tokio::sync::watch::Receiver<bool>,
    tasks: bool,
) -> RequestOptions {
    let mut options = RequestOptions::new()
        .timeout(Duration::MAX)
        .handler(CallRelay {
            ctx: ctx.clone(),
            ended,
            link: Arc::downgrade(link),
            gateway: gateway.clone(),
        });
    if ctx.meta().progress_token().is_some() {
        let ctx = ctx.clone();
        options = options.on_progress(move |progress| {
            ctx.progress_now(progress.progress, progress.total, progress.message);
        });
    }
    let mut meta: Map<String, Value> = ctx
        .meta()
        .0
        .iter()
        .filter(|(key, _)| *key != "progressToken" && !key.starts_with(PROTOCOL_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if client.is_stateless() {
        if let Some(level) = ctx.log_level() {
            meta.insert(LOG_LEVEL_KEY.into(), Value::from(level.as_str()));
        }
        meta.insert(
            CLIENT_CAPABILITIES_KEY.into(),
            Value::Object(downstream_capabilities(ctx, tasks)),
        );
    }
    if !meta.is_empty() {
        options = options.meta(meta);
    }
    options
}

/// The prefix of the protocol's own `_meta` keys, which are not forwarded either way.
const PROTOCOL_PREFIX: &str = "io.modelcontextprotocol/";

/// Drops the protocol's own keys from a result's `_meta` (the upstream's server info, ...).
pub(super) fn strip_meta(meta: &mut Option<Map<String, Value>>) {
    if let Some(map) = meta {
        map.retain(|key, _| !key.starts_with(PROTOCOL_PREFIX));
        if map.is_empty() {
            *meta = None;
        }
    }
}

/// Reads a result the upstream sent.
pub(super) fn decode<T: DeserializeOwned>(
    link: &Link,
    what: &str,
    result: Value,
) -> Result<T, String> {
    serde_json::from_value(result).map_err(|error| {
        format!(
            "{} answered `{what}` with a result this gateway cannot read: {error}",
            link.label
        )
    })
}

async fn call_tool(
    link: Arc<Link>,
    gateway: Weak<Gateway>,
    upstream_name: Arc<str>,
    support: TaskSupport,
    mut call: ToolCall,
) -> Result<CallToolResult, ErrorObject> {
    let required = support == TaskSupport::Required;
    let ctx = call.context().clone();
    let arguments = call.take_arguments();
    let client = match link.client() {
        Ok(client) => client,
        Err(why) => return Ok(CallToolResult::error(why)),
    };
    // A place in the caller's share of the upstream's (waiting for one of its own past it).
    let _slot = link.slot(&ctx).await;
    let (_open, ended) = link.open_call(ctx.clone());
    let stateless = client.is_stateless();
    // The upstream runs it as a task when it must, or when this server runs the call as one
    // (so what ends the upstream task, a failure say, ends this one the same way).
    let as_task = required
        || (support == TaskSupport::Optional
            && ctx.is_task()
            && (stateless || client.protocol_version() >= ProtocolVersion::V2025_11_25));
    let options = forward_options(&link, &gateway, &client, &ctx, ended, as_task);
    let mut params = json!({"name": &*upstream_name, "arguments": arguments});
    if as_task && !stateless {
        // 2025-11-25's experimental tasks: the tool runs only as one.
        params["task"] = json!({});
    }
    let request = client.request_with("tools/call", params, &options);
    // A task's questions before it exists are rounds of this call (2026-07-28).
    let outcome = if required && stateless {
        ctx.before_task(request).await
    } else {
        request.await
    };
    // What the upstream sent before its answer (log messages) reaches this call's client
    // first, while the call is still the one in flight.
    client.notifications_handled().await;
    let result = match outcome {
        Ok(result) => result,
        Err(ClientError::Rpc(error)) => return Err(error),
        Err(error) => return Ok(CallToolResult::error(failure(&link, &error))),
    };
    let result = if super::task::is_task(&result) {
        super::task::drive(&link, &client, &ctx, &options, result).await?
    } else {
        result
    };
    let mut result: CallToolResult = match decode(&link, "tools/call", result) {
        Ok(result) => result,
        Err(why) => return Ok(CallToolResult::error(why)),
    };
    strip_meta(&mut result.meta);
    Ok(result)
}

async fn get_prompt(
    link: Arc<Link>,
    gateway: Weak<Gateway>,
    upstream_name: Arc<str>,
    mut call: PromptCall,
) -> Result<GetPromptResult, ErrorObject> {
    let ctx = call.context().clone();
    let arguments = std::mem::take(&mut call.arguments);
    let client = link.client().map_err(ErrorObject::internal)?;
    let _slot = link.slot(&ctx).await;
    let (_open, ended) = link.open_call(ctx.clone());
    let options = forward_options(&link, &gateway, &client, &ctx, ended, false);
    let mut params = json!({"name": &*upstream_name});
    if !arguments.is_empty() {
        params["arguments"] = Value::Object(arguments);
    }
    let outcome = client.request_with("prompts/get", params, &options).await;
    client.notifications_handled().await;
    let result = match outcome {
        Ok(result) => result,
        Err(ClientError::Rpc(error)) => return Err(error),
        Err(error) => return Err(ErrorObject::internal(failure(&link, &error))),
    };
    let mut result: GetPromptResult =
        decode(&link, "prompts/get", result).map_err(ErrorObject::internal)?;
    strip_meta(&mut result.meta);
    Ok(result)
}

async fn read_resource(
    link: Arc<Link>,
    gateway: Weak<Gateway>,
    call: ResourceCall,
) -> Result<Vec<ResourceContents>, ResourceError> {
    let ctx = call.context().clone();
    let client = link.client().map_err(ResourceError::Internal)?;
    let _slot = link.slot(&ctx).await;
    let (_open, ended) = link.open_call(ctx.clone());
    let options = forward_options(&link, &gateway, &client, &ctx, ended, false);
    let params = json!({"uri": call.uri()});
    let outcome = client
        .request_with("resources/read", params, &options)
        .await;
    client.notifications_handled().await;
    let result = match outcome {
        Ok(result) => result,
        Err(ClientError::Rpc(error)) => {
            // Not found is -32002 in the handshake era, -32602 with `data.uri` from
            // 2026-07-28: either way this server answers its own revision's.
            let not_found = error.code == error_codes::RESOURCE_NOT_FOUND
                || (error.code == error_codes::INVALID_PARAMS
                    && error.data.as_ref().is_some_and(|d| d.get("uri").is_some()));
            return Err(if not_found {
                ResourceError::NotFound
            } else if error.code == error_codes::INVALID_PARAMS {
                ResourceError::InvalidParams(error.message.to_string())
            } else {
                ResourceError::Internal(error.message.to_string())
            });
        }
        Err(error) => return Err(ResourceError::Internal(failure(&link, &error))),
    };
    let read: crate::client::ReadResourceResult =
        decode(&link, "resources/read", result).map_err(ResourceError::Internal)?;
    Ok(read.contents)
}

/// Completes a proxied prompt's arguments (a template's variables) at the upstream.
fn forward_completion(
    link: &Arc<Link>,
    reference: CompletionRef,
) -> crate::completion::ForwardCompleter {
    let link = Arc::clone(link);
    Arc::new(move |argument, value, context| {
        let link = Arc::clone(&link);
        let reference = reference.clone();
        Box::pin(async move {
            let client = link.client().map_err(ErrorObject::internal)?;
            if client.server_info().capabilities.completions.is_none() {
                return Ok(Completions::default());
            }
            let context = (!context.is_empty()).then_some(context);
            match client
                .complete(&reference, &argument, &value, context)
                .await
            {
                Ok(completion) => Ok(Completions {
                    values: completion.values,
                    total: completion.total,
                    has_more: completion.has_more.unwrap_or(false),
                }),
                Err(ClientError::Rpc(error)) => Err(error),
                Err(error) => Err(ErrorObject::internal(failure(&link, &error))),
            }
        })
    })
}
