//! What a server serves: tools, resources and prompts, collected once, validated, sorted, and
//! indexed. List results are serialized once per protocol revision, on first use, and shared.
//!
//! A [`Registry`] is one immutable snapshot. Changes at run time never edit it: they build the
//! next snapshot from its [`Catalogue`] and swap it in whole (see `dynamic.rs`), so a request,
//! which works on the snapshot it took when it started, sees one consistent set of items.
//!
//! A disabled item stays in its registry, validated with the rest (its name stays taken), but
//! is out of every index and list: nothing can reach it until it is enabled again.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::{FastMap, pagination};
use crate::completion::Completer;
use crate::error::{DefinitionError, is_valid_tool_name};
use crate::metadata::Metadata;
use crate::prompt::PromptDef;
use crate::protocol::{ErrorObject, ProtocolVersion, echo};
use crate::resource::{ResourceDef, ResourceInfo, UriTemplate};
use crate::schema::SchemaStyle;
use crate::server::Items;
use crate::tool::ToolDef;

/// What the tool and prompt registries validate, index and list alike.
pub(crate) trait Named {
    /// The key of the list in its result, and the words errors use: `("tools", "tool", "tool
    /// name")`.
    const KIND: (&'static str, &'static str, &'static str);
    fn name(&self) -> &str;
    fn metadata(&self) -> &Metadata;
    fn problems(&self) -> &[String];
    fn to_wire(&self, version: ProtocolVersion, style: SchemaStyle) -> Value;
    /// The OAuth scopes the item needs of its own.
    fn scopes(&self) -> &[std::borrow::Cow<'static, str>];
}

impl Named for ToolDef {
    const KIND: (&'static str, &'static str, &'static str) = ("tools", "tool", "tool name");
    fn name(&self) -> &str {
        &self.name
    }
    fn metadata(&self) -> &Metadata {
        &self.metadata
    }
    fn problems(&self) -> &[String] {
        &self.metadata.problems
    }
    fn to_wire(&self, version: ProtocolVersion, style: SchemaStyle) -> Value {
        ToolDef::to_wire(self, version, style)
    }
    fn scopes(&self) -> &[std::borrow::Cow<'static, str>] {
        &self.metadata.scopes
    }
}

impl Named for PromptDef {
    const KIND: (&'static str, &'static str, &'static str) = ("prompts", "prompt", "prompt name");
    fn name(&self) -> &str {
        &self.name
    }
    fn metadata(&self) -> &Metadata {
        &self.metadata
    }
    fn problems(&self) -> &[String] {
        &self.metadata.problems
    }
    fn to_wire(&self, version: ProtocolVersion, _: SchemaStyle) -> Value {
        PromptDef::to_wire(self, version)
    }
    fn scopes(&self) -> &[std::borrow::Cow<'static, str>] {
        &self.metadata.scopes
    }
}

/// Sorts items by name, records every invalid name, definition problem and duplicate (naming
/// both locations), and indexes the names.
fn sort_and_index<T: Named>(
    items: &mut [T],
    errors: &mut Vec<DefinitionError>,
) -> (Vec<Arc<str>>, FastMap<Arc<str>, usize>) {
    let (_, kind, unique) = T::KIND;
    items.sort_by(|a, b| a.name().cmp(b.name()));
    for item in items.iter() {
        if !is_valid_tool_name(item.name()) {
            errors.push(DefinitionError::InvalidName {
                kind,
                name: item.name().to_owned(),
                location: item.metadata().place(),
            });
        }
        for problem in item.problems() {
            errors.push(DefinitionError::Invalid {
                kind,
                name: item.name().to_owned(),
                location: item.metadata().place(),
                problem: problem.clone(),
            });
        }
    }
    for pair in items.windows(2) {
        if pair[0].name() == pair[1].name() {
            errors.push(DefinitionError::Duplicate {
                kind: unique,
                name: pair[0].name().to_owned(),
                first: pair[0].metadata().place(),
                second: pair[1].metadata().place(),
            });
        }
    }
    let names: Vec<Arc<str>> = items.iter().map(|item| Arc::from(item.name())).collect();
    let by_name = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    (names, by_name)
}

/// One cache slot per protocol revision.
type PerVersion<T> = [OnceLock<T>; ProtocolVersion::ALL.len()];

fn slot(version: ProtocolVersion) -> usize {
    ProtocolVersion::ALL
        .iter()
        .position(|v| *v == version)
        .unwrap_or(0)
}

/// The tools of a built server.
pub(crate) type ToolRegistry = Listed<ToolDef>;

/// The prompts of a built server.
pub(crate) type PromptRegistry = Listed<PromptDef>;

/// Tools or prompts: validated, sorted, indexed by name, their list serialized once per
/// protocol revision (the first page too) on first use.
pub(crate) struct Listed<T> {
    /// Every item, enabled or not, sorted by name.
    items: Vec<T>,
    names: Vec<Arc<str>>,
    /// The enabled items only.
    by_name: FastMap<Arc<str>, usize>,
    disabled: HashSet<String>,
    served: bool,
    style: SchemaStyle,
    page_size: usize,
    generation: u64,
    wire: PerVersion<Vec<String>>,
    first_page: PerVersion<Arc<str>>,
}

impl<T: Named> Listed<T> {
    fn new(
        mut items: Vec<T>,
        disabled: HashSet<String>,
        served: bool,
        settings: &Settings,
        generation: u64,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let (names, mut by_name) = sort_and_index(&mut items, errors);
        by_name.retain(|name, _| !disabled.contains(&**name));
        Self {
            items,
            names,
            by_name,
            disabled,
            served,
            style: settings.style,
            page_size: settings.page_size,
            generation,
            wire: Default::default(),
            first_page: Default::default(),
        }
    }

    /// Whether this kind's methods are unknown on this server: it was built with none and
    /// without [`Server::dynamic_tools`](crate::Server::dynamic_tools) (or `dynamic_prompts`),
    /// so it never advertised them. A server that did stays one even when every item is removed
    /// or disabled: the list is then empty.
    pub(crate) fn is_empty(&self) -> bool {
        !self.served
    }

    /// The names of the enabled items, sorted.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn enabled_names(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .map(|name| &**name)
            .filter(|name| !self.disabled.contains(*name))
    }

    /// Whether an item, enabled or not, is called `name`.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.names.binary_search_by(|n| (**n).cmp(name)).is_ok()
    }

    /// The enabled item called `name`, with its shared name.
    pub(crate) fn get(&self, name: &str) -> Option<(&T, &Arc<str>)> {
        self.by_name
            .get(name)
            .map(|&i| (&self.items[i], &self.names[i]))
    }

    /// The enabled item called `name`: its index in this snapshot (by which the telemetry keeps
    /// its metric cells) and its shared name.
    pub(crate) fn position(&self, name: &str) -> Option<(usize, &Arc<str>)> {
        self.by_name.get(name).map(|&i| (i, &self.names[i]))
    }

    /// The serialized list result page at `from` for `version`.
    pub(crate) fn list(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
    ) -> Result<Arc<str>, ErrorObject> {
        let (key, _, _) = T::KIND;
        let items = self.wire[slot(version)].get_or_init(|| {
            self.items
                .iter()
                .filter(|item| !self.disabled.contains(item.name()))
                .map(|item| item.to_wire(version, self.style).to_string())
                .collect()
        });
        let (page_size, generation) = (self.page_size, self.generation);
        if from.offset == 0 {
            let page = self.first_page[slot(version)].get_or_init(|| {
                let first = pagination::page(key, items, from, page_size, generation);
                Arc::from(first.unwrap_or_default())
            });
            return Ok(Arc::clone(page));
        }
        pagination::page(key, items, from, page_size, generation).map(Arc::from)
    }

    /// The list result page at `from` of the items `keep` lets through (lists filtered per
    /// caller are never cached).
    pub(crate) fn list_where(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
        keep: &dyn Fn(&[std::borrow::Cow<'static, str>]) -> bool,
    ) -> Result<Arc<str>, ErrorObject> {
        let (key, _, _) = T::KIND;
        let items: Vec<String> = self
            .items
            .iter()
            .filter(|item| !self.disabled.contains(item.name()) && keep(item.scopes()))
            .map(|item| item.to_wire(version, self.style).to_string())
            .collect();
        pagination::page(key, &items, from, self.page_size, self.generation).map(Arc::from)
    }
}

impl PromptRegistry {
    /// The completer for argument `argument` of prompt `name`.
    pub(crate) fn completer(
        &self,
        name: &str,
        argument: &str,
    ) -> Result<Option<&Completer>, ErrorObject> {
        let (prompt, _) = self.get(name).ok_or_else(|| {
            ErrorObject::invalid_params(format!("unknown prompt `{}`", echo(name)))
        })?;
        Ok(prompt
            .completers
            .iter()
            .find(|(n, _)| n == argument)
            .map(|(_, c)| c))
    }
}

/// The resources and resource templates of a built server.
pub(crate) struct ResourceRegistry {
    /// Every static resource, enabled or not, sorted by URI.
    statics: Vec<ResourceDef>,
    /// The enabled static resources only.
    by_uri: FastMap<String, usize>,
    /// Templates, enabled or not, most specific first: the first enabled one that matches a
    /// URI reads it.
    templates: Vec<ResourceDef>,
    /// The URIs and URI templates of the disabled ones (a template always has a `{`, a URI
    /// never, so one set holds both).
    disabled: HashSet<String>,
    served: bool,
    page_size: usize,
    generation: u64,
    static_items: PerVersion<Vec<String>>,
    template_items: PerVersion<Vec<String>>,
}

impl ResourceRegistry {
    /// The URIs and URI templates of the enabled resources.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn enabled_uris(&self) -> impl Iterator<Item = &str> {
        self.statics
            .iter()
            .chain(&self.templates)
            .map(ResourceDef::uri)
            .filter(|uri| !self.disabled.contains(*uri))
    }

    fn new(
        defs: Vec<ResourceDef>,
        disabled: HashSet<String>,
        settings: &Settings,
        generation: u64,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let (mut templates, mut statics): (Vec<_>, Vec<_>) =
            defs.into_iter().partition(ResourceDef::is_template);
        for def in statics.iter().chain(&templates) {
            for problem in def.problems() {
                errors.push(DefinitionError::Invalid {
                    kind: "resource",
                    name: def.uri.to_string(),
                    location: def.metadata.metadata.place(),
                    problem: problem.clone(),
                });
            }
        }
        statics.sort_by(|a, b| a.uri.cmp(&b.uri));
        for pair in statics.windows(2) {
            if pair[0].uri == pair[1].uri {
                errors.push(DefinitionError::Duplicate {
                    kind: "resource URI",
                    name: pair[0].uri.to_string(),
                    first: pair[0].metadata.metadata.place(),
                    second: pair[1].metadata.metadata.place(),
                });
            }
        }
        templates.sort_by(|a, b| {
            let (ta, tb) = (a.template.as_ref(), b.template.as_ref());
            ta.map(UriTemplate::specificity)
                .cmp(&tb.map(UriTemplate::specificity))
                .then_with(|| a.uri.cmp(&b.uri))
        });
        for (i, a) in templates.iter().enumerate() {
            for b in &templates[i + 1..] {
                if let (Some(ta), Some(tb)) = (&a.template, &b.template)
                    && UriTemplate::indistinguishable(ta, tb)
                {
                    errors.push(DefinitionError::Ambiguous {
                        first: format!("`{}` at {}", a.uri, a.metadata.metadata.place()),
                        second: format!("`{}` at {}", b.uri, b.metadata.metadata.place()),
                    });
                }
            }
        }
        let by_uri = statics
            .iter()
            .enumerate()
            .filter(|(_, d)| !disabled.contains(&*d.uri))
            .map(|(i, d)| (d.uri.to_string(), i))
            .collect();
        Self {
            statics,
            by_uri,
            templates,
            disabled,
            served: settings.served.resources,
            page_size: settings.page_size,
            generation,
            static_items: Default::default(),
            template_items: Default::default(),
        }
    }

    /// Whether `resources/*` are unknown methods on this server; see [`ToolRegistry::is_empty`].
    pub(crate) fn is_empty(&self) -> bool {
        !self.served
    }

    /// The enabled templates, most specific first.
    fn enabled_templates(&self) -> impl Iterator<Item = &ResourceDef> {
        self.templates
            .iter()
            .filter(|t| !self.disabled.contains(&*t.uri))
    }

    /// The resource that reads `uri`: a static one by exact URI, else the first (most specific)
    /// template that matches, with the variables it bound.
    pub(crate) fn resolve(
        &self,
        uri: &str,
    ) -> Option<(&ResourceDef, Option<crate::resource::Bindings>)> {
        if let Some(&i) = self.by_uri.get(uri) {
            return Some((&self.statics[i], None));
        }
        self.enabled_templates().find_map(|def| {
            let bindings = def.template.as_ref()?.match_uri(uri)?;
            Some((def, Some(bindings)))
        })
    }

    /// `resources/list`: static resources, then the instances each template's `list` returns.
    pub(crate) async fn list(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
    ) -> Result<String, ErrorObject> {
        let statics = self.static_items[slot(version)].get_or_init(|| {
            self.statics
                .iter()
                .filter(|d| d.listed && !self.disabled.contains(&*d.uri))
                .map(|d| d.resource_to_wire(version).to_string())
                .collect()
        });
        let (page_size, generation) = (self.page_size, self.generation);
        let listers: Vec<_> = self
            .enabled_templates()
            .filter_map(|t| t.list.clone())
            .collect();
        if listers.is_empty() {
            return pagination::page("resources", statics, from, page_size, generation);
        }
        let mut items = statics.clone();
        append_instances(&mut items, listers, version).await;
        pagination::page("resources", &items, from, page_size, generation)
    }

    /// `resources/list` of the resources (and templates' instances) `keep` lets through.
    pub(crate) async fn list_where(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
        keep: &(dyn Fn(&[std::borrow::Cow<'static, str>]) -> bool + Sync),
    ) -> Result<String, ErrorObject> {
        let mut items: Vec<String> = self
            .statics
            .iter()
            .filter(|d| {
                d.listed && !self.disabled.contains(&*d.uri) && keep(&d.metadata.metadata.scopes)
            })
            .map(|d| d.resource_to_wire(version).to_string())
            .collect();
        let listers: Vec<_> = self
            .enabled_templates()
            .filter(|t| keep(&t.metadata.metadata.scopes))
            .filter_map(|t| t.list.clone())
            .collect();
        append_instances(&mut items, listers, version).await;
        pagination::page("resources", &items, from, self.page_size, self.generation)
    }

    /// `resources/templates/list` of the templates `keep` lets through.
    pub(crate) fn list_templates_where(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
        keep: &dyn Fn(&[std::borrow::Cow<'static, str>]) -> bool,
    ) -> Result<String, ErrorObject> {
        let items: Vec<String> = self
            .enabled_templates()
            .filter(|t| keep(&t.metadata.metadata.scopes))
            .map(|t| t.template_to_wire(version).to_string())
            .collect();
        pagination::page(
            "resourceTemplates",
            &items,
            from,
            self.page_size,
            self.generation,
        )
    }

    /// `resources/templates/list`.
    pub(crate) fn list_templates(
        &self,
        version: ProtocolVersion,
        from: pagination::Position,
    ) -> Result<String, ErrorObject> {
        let items = self.template_items[slot(version)].get_or_init(|| {
            self.enabled_templates()
                .map(|t| t.template_to_wire(version).to_string())
                .collect()
        });
        let (page_size, generation) = (self.page_size, self.generation);
        pagination::page("resourceTemplates", items, from, page_size, generation)
    }

    /// Whether a static resource at `uri`, or a template written `uri`, enabled or not, is
    /// served.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.statics.binary_search_by(|d| (*d.uri).cmp(uri)).is_ok()
            || self.templates.iter().any(|t| t.uri == uri)
    }

    /// The enabled template written `template`.
    pub(crate) fn template(&self, template: &str) -> Option<&ResourceDef> {
        self.enabled_templates().find(|t| t.uri == template)
    }

    /// The completer for variable `variable` of the template written `template`.
    pub(crate) fn completer(
        &self,
        template: &str,
        variable: &str,
    ) -> Result<Option<&Completer>, ErrorObject> {
        let def = self
            .enabled_templates()
            .find(|t| t.uri == template)
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "unknown resource template `{}`",
                    echo(template)
                ))
            })?;
        Ok(def
            .completers
            .iter()
            .find(|(n, _)| n == variable)
            .map(|(_, c)| c))
    }
}

/// Which kinds of item a server serves: the ones its capabilities advertise. Fixed when the
/// server is built, since clients learn them once, at `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Served {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
    /// `completion/complete`.
    pub(crate) completions: bool,
}

/// What every snapshot of a server's registry is built with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) style: SchemaStyle,
    pub(crate) page_size: usize,
    pub(crate) served: Served,
}

/// The names of disabled items: tool names, prompt names, resource URIs and URI templates.
#[derive(Debug, Clone, Default)]
pub(crate) struct Disabled {
    pub(crate) tools: HashSet<String>,
    pub(crate) resources: HashSet<String>,
    pub(crate) prompts: HashSet<String>,
}

/// Every definition of a snapshot, enabled or not: what a change edits to build the next one.
pub(crate) struct Catalogue {
    pub(crate) items: Items,
    pub(crate) disabled: Disabled,
}

/// Everything a built server serves at one moment: an immutable snapshot.
pub(crate) struct Registry {
    pub(crate) tools: ToolRegistry,
    pub(crate) resources: ResourceRegistry,
    pub(crate) prompts: PromptRegistry,
    settings: Settings,
    /// Counts the snapshots of one server, from 0 at build; cursors carry it.
    generation: u64,
    /// Some item has middleware of its own (`ToolDef::layer`): requests go through the
    /// middleware path to find it.
    pub(crate) layered: bool,
}

impl Registry {
    /// Validates and indexes `catalogue`, recording every problem in `errors`.
    pub(crate) fn new(
        catalogue: Catalogue,
        settings: Settings,
        generation: u64,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let Catalogue { items, disabled } = catalogue;
        let layered = items.tools.iter().any(|t| t.layer.is_some())
            || items.prompts.iter().any(|p| p.layer.is_some())
            || items.resources.iter().any(|r| r.layer.is_some());
        Self {
            layered,
            tools: Listed::new(
                items.tools,
                disabled.tools,
                settings.served.tools,
                &settings,
                generation,
                errors,
            ),
            resources: ResourceRegistry::new(
                items.resources,
                disabled.resources,
                &settings,
                generation,
                errors,
            ),
            prompts: Listed::new(
                items.prompts,
                disabled.prompts,
                settings.served.prompts,
                &settings,
                generation,
                errors,
            ),
            settings,
            generation,
        }
    }

    pub(crate) fn settings(&self) -> Settings {
        self.settings
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// A copy of every definition (handlers are shared, not copied), to edit.
    pub(crate) fn catalogue(&self) -> Catalogue {
        Catalogue {
            items: Items {
                tools: self.tools.items.clone(),
                resources: self
                    .resources
                    .statics
                    .iter()
                    .chain(&self.resources.templates)
                    .cloned()
                    .collect(),
                prompts: self.prompts.items.clone(),
            },
            disabled: Disabled {
                tools: self.tools.disabled.clone(),
                resources: self.resources.disabled.clone(),
                prompts: self.prompts.disabled.clone(),
            },
        }
    }
}

/// Appends the instances each template's `list` returns, as this revision shows them.
async fn append_instances(
    items: &mut Vec<String>,
    listers: Vec<crate::resource::ListHandler>,
    version: ProtocolVersion,
) {
    for list in listers {
        let instances: Vec<ResourceInfo> = list().await;
        items.extend(
            instances
                .iter()
                .filter_map(|i| i.for_version(version))
                .map(|i| i.to_string()),
        );
    }
}
