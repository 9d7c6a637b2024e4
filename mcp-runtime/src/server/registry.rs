//! What a server serves: tools, resources and prompts, collected once, validated, sorted, and
//! indexed. List results are serialized once per protocol revision, on first use, and shared.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::pagination;
use crate::completion::Completer;
use crate::error::{DefinitionError, is_valid_tool_name};
use crate::prompt::PromptDef;
use crate::protocol::{ErrorObject, ProtocolVersion};
use crate::resource::{ResourceDef, ResourceInfo, UriTemplate};
use crate::schema::SchemaStyle;
use crate::tool::{SourceLocation, ToolDef};

fn at(location: Option<SourceLocation>) -> String {
    location.map_or_else(|| "(registered at run time)".to_owned(), |l| l.to_string())
}

/// What the tool and prompt registries validate and index alike.
trait Named {
    fn name(&self) -> &str;
    fn location(&self) -> Option<SourceLocation>;
    fn problems(&self) -> &[String];
}

impl Named for ToolDef {
    fn name(&self) -> &str {
        &self.name
    }
    fn location(&self) -> Option<SourceLocation> {
        self.location
    }
    fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl Named for PromptDef {
    fn name(&self) -> &str {
        &self.name
    }
    fn location(&self) -> Option<SourceLocation> {
        self.location
    }
    fn problems(&self) -> &[String] {
        &self.problems
    }
}

/// Sorts items by name, records every invalid name, definition problem and duplicate (naming
/// both locations), and indexes the names.
fn sort_and_index<T: Named>(
    items: &mut [T],
    (kind, unique): (&'static str, &'static str),
    errors: &mut Vec<DefinitionError>,
) -> (Vec<Arc<str>>, HashMap<Arc<str>, usize>) {
    items.sort_by(|a, b| a.name().cmp(b.name()));
    for item in items.iter() {
        if !is_valid_tool_name(item.name()) {
            errors.push(DefinitionError::InvalidName {
                kind,
                name: item.name().to_owned(),
                location: at(item.location()),
            });
        }
        for problem in item.problems() {
            errors.push(DefinitionError::Invalid {
                kind,
                name: item.name().to_owned(),
                location: at(item.location()),
                problem: problem.clone(),
            });
        }
    }
    for pair in items.windows(2) {
        if pair[0].name() == pair[1].name() {
            errors.push(DefinitionError::Duplicate {
                kind: unique,
                name: pair[0].name().to_owned(),
                first: at(pair[0].location()),
                second: at(pair[1].location()),
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
pub(crate) struct ToolRegistry {
    tools: Vec<ToolDef>,
    names: Vec<Arc<str>>,
    by_name: HashMap<Arc<str>, usize>,
    style: SchemaStyle,
    page_size: usize,
    items: PerVersion<Vec<String>>,
    first_page: PerVersion<Arc<str>>,
}

impl ToolRegistry {
    pub(crate) fn new(
        mut tools: Vec<ToolDef>,
        style: SchemaStyle,
        page_size: usize,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let (names, by_name) = sort_and_index(&mut tools, ("tool", "tool name"), errors);
        Self {
            tools,
            names,
            by_name,
            style,
            page_size,
            items: Default::default(),
            first_page: Default::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool called `name`, with its shared name.
    pub(crate) fn get(&self, name: &str) -> Option<(&ToolDef, &Arc<str>)> {
        self.by_name
            .get(name)
            .map(|&i| (&self.tools[i], &self.names[i]))
    }

    /// The serialized `tools/list` result page at `offset` for `version`.
    pub(crate) fn list(
        &self,
        version: ProtocolVersion,
        offset: usize,
    ) -> Result<Arc<str>, ErrorObject> {
        let items = self.items[slot(version)].get_or_init(|| {
            self.tools
                .iter()
                .map(|t| t.to_wire(version, self.style).to_string())
                .collect()
        });
        if offset == 0 {
            let page = self.first_page[slot(version)].get_or_init(|| {
                Arc::from(pagination::page("tools", items, 0, self.page_size).unwrap_or_default())
            });
            return Ok(Arc::clone(page));
        }
        pagination::page("tools", items, offset, self.page_size).map(Arc::from)
    }
}

/// The prompts of a built server.
pub(crate) struct PromptRegistry {
    prompts: Vec<PromptDef>,
    names: Vec<Arc<str>>,
    by_name: HashMap<Arc<str>, usize>,
    page_size: usize,
    items: PerVersion<Vec<String>>,
}

impl PromptRegistry {
    pub(crate) fn new(
        mut prompts: Vec<PromptDef>,
        page_size: usize,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let (names, by_name) = sort_and_index(&mut prompts, ("prompt", "prompt name"), errors);
        Self {
            prompts,
            names,
            by_name,
            page_size,
            items: Default::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    pub(crate) fn get(&self, name: &str) -> Option<(&PromptDef, &Arc<str>)> {
        self.by_name
            .get(name)
            .map(|&i| (&self.prompts[i], &self.names[i]))
    }

    pub(crate) fn has_completions(&self) -> bool {
        self.prompts.iter().any(|p| !p.completers.is_empty())
    }

    pub(crate) fn list(
        &self,
        version: ProtocolVersion,
        offset: usize,
    ) -> Result<String, ErrorObject> {
        let items = self.items[slot(version)].get_or_init(|| {
            self.prompts
                .iter()
                .map(|p| p.to_wire(version).to_string())
                .collect()
        });
        pagination::page("prompts", items, offset, self.page_size)
    }

    /// The completer for argument `argument` of prompt `name`.
    pub(crate) fn completer(
        &self,
        name: &str,
        argument: &str,
    ) -> Result<Option<&Completer>, ErrorObject> {
        let (prompt, _) = self
            .get(name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt `{name}`")))?;
        Ok(prompt
            .completers
            .iter()
            .find(|(n, _)| n == argument)
            .map(|(_, c)| c))
    }
}

/// The resources and resource templates of a built server.
pub(crate) struct ResourceRegistry {
    statics: Vec<ResourceDef>,
    by_uri: HashMap<String, usize>,
    /// Templates, most specific first: the first that matches a URI reads it.
    templates: Vec<ResourceDef>,
    page_size: usize,
    static_items: PerVersion<Vec<String>>,
    template_items: PerVersion<Vec<String>>,
}

impl ResourceRegistry {
    pub(crate) fn new(
        defs: Vec<ResourceDef>,
        page_size: usize,
        errors: &mut Vec<DefinitionError>,
    ) -> Self {
        let (mut templates, mut statics): (Vec<_>, Vec<_>) =
            defs.into_iter().partition(ResourceDef::is_template);
        for def in statics.iter().chain(&templates) {
            for problem in &def.problems {
                errors.push(DefinitionError::Invalid {
                    kind: "resource",
                    name: def.uri.to_string(),
                    location: at(def.location),
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
                    first: at(pair[0].location),
                    second: at(pair[1].location),
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
                        first: format!("`{}` at {}", a.uri, at(a.location)),
                        second: format!("`{}` at {}", b.uri, at(b.location)),
                    });
                }
            }
        }
        let by_uri = statics
            .iter()
            .enumerate()
            .map(|(i, d)| (d.uri.to_string(), i))
            .collect();
        Self {
            statics,
            by_uri,
            templates,
            page_size,
            static_items: Default::default(),
            template_items: Default::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.statics.is_empty() && self.templates.is_empty()
    }

    pub(crate) fn has_completions(&self) -> bool {
        self.templates.iter().any(|t| !t.completers.is_empty())
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
        self.templates.iter().find_map(|def| {
            let bindings = def.template.as_ref()?.match_uri(uri)?;
            Some((def, Some(bindings)))
        })
    }

    /// `resources/list`: static resources, then the instances each template's `list` returns.
    pub(crate) async fn list(
        &self,
        version: ProtocolVersion,
        offset: usize,
    ) -> Result<String, ErrorObject> {
        let statics = self.static_items[slot(version)].get_or_init(|| {
            self.statics
                .iter()
                .map(|d| d.info().for_version(version).to_string())
                .collect()
        });
        let listers: Vec<_> = self
            .templates
            .iter()
            .filter_map(|t| t.list.clone())
            .collect();
        if listers.is_empty() {
            return pagination::page("resources", statics, offset, self.page_size);
        }
        let mut items = statics.clone();
        for list in listers {
            let instances: Vec<ResourceInfo> = list().await;
            items.extend(instances.iter().map(|i| i.for_version(version).to_string()));
        }
        pagination::page("resources", &items, offset, self.page_size)
    }

    /// `resources/templates/list`.
    pub(crate) fn list_templates(
        &self,
        version: ProtocolVersion,
        offset: usize,
    ) -> Result<String, ErrorObject> {
        let items = self.template_items[slot(version)].get_or_init(|| {
            self.templates
                .iter()
                .map(|t| t.template_to_wire(version).to_string())
                .collect()
        });
        pagination::page("resourceTemplates", items, offset, self.page_size)
    }

    /// The completer for variable `variable` of the template written `template`.
    pub(crate) fn completer(
        &self,
        template: &str,
        variable: &str,
    ) -> Result<Option<&Completer>, ErrorObject> {
        let def = self
            .templates
            .iter()
            .find(|t| t.uri == template)
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!("unknown resource template `{template}`"))
            })?;
        Ok(def
            .completers
            .iter()
            .find(|(n, _)| n == variable)
            .map(|(_, c)| c))
    }
}

/// Everything a built server serves.
pub(crate) struct Registry {
    pub(crate) tools: ToolRegistry,
    pub(crate) resources: ResourceRegistry,
    pub(crate) prompts: PromptRegistry,
}

impl Registry {
    pub(crate) fn has_completions(&self) -> bool {
        self.prompts.has_completions() || self.resources.has_completions()
    }
}
