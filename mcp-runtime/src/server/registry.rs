//! The tools a server serves: collected once, validated, sorted by name, and indexed.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::error::{DefinitionError, is_valid_tool_name};
use crate::protocol::ProtocolVersion;
use crate::schema::SchemaStyle;
use crate::tool::ToolDef;

/// The tools of a built server. `tools/list` results are serialized once per protocol revision,
/// on first use, and shared by every later request.
pub(crate) struct ToolRegistry {
    tools: Vec<ToolDef>,
    names: Vec<Arc<str>>,
    by_name: HashMap<Arc<str>, usize>,
    style: SchemaStyle,
    lists: [OnceLock<Arc<str>>; ProtocolVersion::ALL.len()],
}

impl ToolRegistry {
    /// Validates and indexes `tools`. Every problem is collected, so one build reports them all.
    pub(crate) fn new(
        mut tools: Vec<ToolDef>,
        style: SchemaStyle,
    ) -> Result<Self, Vec<DefinitionError>> {
        let mut errors = Vec::new();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        for tool in &tools {
            let location = tool
                .location
                .map_or_else(|| "(registered at run time)".to_owned(), |l| l.to_string());
            if !is_valid_tool_name(&tool.name) {
                errors.push(DefinitionError::InvalidToolName {
                    name: tool.name.to_string(),
                    location: location.clone(),
                });
            }
            for problem in &tool.problems {
                errors.push(DefinitionError::InvalidTool {
                    name: tool.name.to_string(),
                    location: location.clone(),
                    problem: problem.clone(),
                });
            }
        }
        for pair in tools.windows(2) {
            if pair[0].name == pair[1].name {
                let at = |t: &ToolDef| {
                    t.location
                        .map_or_else(|| "(registered at run time)".to_owned(), |l| l.to_string())
                };
                errors.push(DefinitionError::DuplicateTool {
                    name: pair[0].name.to_string(),
                    first: at(&pair[0]),
                    second: at(&pair[1]),
                });
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let names: Vec<Arc<str>> = tools.iter().map(|t| Arc::from(&*t.name)).collect();
        let by_name = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(Self {
            tools,
            names,
            by_name,
            style,
            lists: Default::default(),
        })
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

    /// The serialized `tools/list` result for `version`.
    pub(crate) fn list(&self, version: ProtocolVersion) -> Arc<str> {
        let slot = ProtocolVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(0);
        self.lists[slot]
            .get_or_init(|| {
                let tools: Vec<Value> = self
                    .tools
                    .iter()
                    .map(|t| t.to_wire(version, self.style))
                    .collect();
                Arc::from(serde_json::json!({ "tools": tools }).to_string())
            })
            .clone()
    }
}
