//! A Model Context Protocol server that remembers: a knowledge graph of entities, the
//! relations between them and observations about them, kept in a JSONL file. A drop-in for
//! `@modelcontextprotocol/server-memory`: the same tools, arguments, result texts and file
//! format, and the same `MEMORY_FILE_PATH` variable, so a user switches with their data.
//!
//! Every call reads the file, so edits made by hand or by another process are seen; every
//! change replaces it atomically, one change at a time ([`store`]).
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//! use mcp_server_memory::Memory;
//!
//! # async fn run() -> mcp_runtime::Result<()> {
//! Memory::new("/home/me/memory.jsonl").into_server().serve_stdio().await
//! # }
//! ```

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_runtime::prelude::*;

pub mod store;

use crate::store::StoreError;
pub use crate::store::{Entity, Graph, Relation};

/// The resource that shows the whole graph.
pub const GRAPH_URI: &str = "memory://knowledge-graph";

/// The server: where the graph lives, and the lock that lets one change run at a time.
pub struct Memory {
    path: PathBuf,
    writer: Arc<tokio::sync::Mutex<()>>,
}

impl Memory {
    /// A server keeping its graph in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            writer: Arc::default(),
        }
    }

    /// The file the graph lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The graph as the file holds it now.
    async fn graph(&self) -> Result<Graph, ToolError> {
        let path = self.path.clone();
        run_blocking(move || store::load(&path)).await
    }

    // ANCHOR: change
    /// Runs `change` on the graph and saves the result, one change at a time in this process
    /// and across processes; nothing is saved when `change` fails. Subscribers to the graph's
    /// resource are told it changed.
    async fn change<T: Send + 'static>(
        &self,
        ctx: &Context,
        change: impl FnOnce(&mut Graph) -> Result<T, String> + Send + 'static,
    ) -> Result<T, ToolError> {
        let turn = Arc::clone(&self.writer).lock_owned().await;
        let path = self.path.clone();
        let out = run_blocking(move || {
            let _turn = turn;
            let _lock = store::lock(&path)?;
            let mut graph = store::load(&path)?;
            let out = change(&mut graph).map_err(StoreError)?;
            store::save(&path, &graph)?;
            Ok(out)
        })
        .await?;
        ctx.server().resource_updated(GRAPH_URI);
        Ok(out)
    }
    // ANCHOR_END: change
}

async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ToolError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(|e| ToolError::new(e.to_string())),
        Err(error) => Err(ToolError::new(format!(
            "the graph operation failed: {error}"
        ))),
    }
}

/// A result as the original sends it: `shown` as JSON indented by two spaces in the text block,
/// and `structured` as `structuredContent`, with `S`'s schema as the tool's `outputSchema`.
pub type JsonResult<S> = Structured<S>;

fn shown_as<S>(shown: &impl Serialize, structured: S) -> JsonResult<S> {
    let text = serde_json::to_string_pretty(shown).unwrap_or_default();
    Structured::with_text(structured, text)
}

/// `create_entities`' `structuredContent`: the entities it created.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub struct CreatedEntities {
    pub entities: Vec<Entity>,
}

/// `create_relations`' `structuredContent`: the relations it created.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub struct CreatedRelations {
    pub relations: Vec<Relation>,
}

/// `add_observations`' `structuredContent`: what it added to each entity.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub struct ObservationsAdded {
    pub results: Vec<AddedObservations>,
}

/// The `structuredContent` of the deletions, whose text is the message alone.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub struct Done {
    pub success: bool,
    pub message: String,
}

fn done(message: &str) -> JsonResult<Done> {
    let structured = Done {
        success: true,
        message: message.to_owned(),
    };
    Structured::with_text(structured, message)
}

/// Observations to add to one entity.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NewObservations {
    /// The name of the entity to add the observations to
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observation contents to add
    pub contents: Vec<String>,
}

/// What `add_observations` added to one entity.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AddedObservations {
    #[serde(rename = "entityName")]
    entity_name: String,
    #[serde(rename = "addedObservations")]
    added_observations: Vec<String>,
}

/// Observations to delete from one entity.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Deletion {
    /// The name of the entity containing the observations
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observations to delete
    pub observations: Vec<String>,
}

/// The entities `keep` selects, and every relation with an end among them.
fn subgraph(graph: Graph, keep: impl Fn(&Entity) -> bool) -> Graph {
    let entities: Vec<Entity> = graph.entities.into_iter().filter(|e| keep(e)).collect();
    let names: HashSet<&str> = entities.iter().map(|e| e.name.as_str()).collect();
    let relations = graph
        .relations
        .into_iter()
        .filter(|r| names.contains(r.from.as_str()) || names.contains(r.to.as_str()))
        .collect();
    Graph {
        entities,
        relations,
    }
}

fn same_relation(a: &Relation, b: &Relation) -> bool {
    a.from == b.from && a.to == b.to && a.relation_type == b.relation_type
}

#[server(
    name = "memory-server",
    title = "Knowledge Graph Memory",
    instructions = "A persistent knowledge graph: create entities and relations, add \
                    observations, and search or open nodes to recall them."
)]
impl Memory {
    /// Create multiple new entities in the knowledge graph
    #[tool(
        title = "Create Entities",
        read_only = false,
        destructive = false,
        idempotent = false,
        open_world = false
    )]
    async fn create_entities(
        &self,
        entities: Vec<Entity>,
        ctx: Context,
    ) -> Result<JsonResult<CreatedEntities>, ToolError> {
        let created = self
            .change(&ctx, move |graph| {
                let mut known: HashSet<String> =
                    graph.entities.iter().map(|e| e.name.clone()).collect();
                let created: Vec<Entity> = entities
                    .into_iter()
                    .filter(|e| known.insert(e.name.clone()))
                    .collect();
                graph.entities.extend(created.iter().cloned());
                Ok(created)
            })
            .await?;
        Ok(shown_as(
            &created,
            CreatedEntities {
                entities: created.clone(),
            },
        ))
    }

    /// Create multiple new relations between entities in the knowledge graph. Relations should be in active voice
    #[tool(
        title = "Create Relations",
        read_only = false,
        destructive = false,
        idempotent = false,
        open_world = false
    )]
    async fn create_relations(
        &self,
        relations: Vec<Relation>,
        ctx: Context,
    ) -> Result<JsonResult<CreatedRelations>, ToolError> {
        let created = self
            .change(&ctx, move |graph| {
                let mut created: Vec<Relation> = Vec::new();
                for relation in relations {
                    let known = graph.relations.iter().chain(&created);
                    if !known.into_iter().any(|r| same_relation(r, &relation)) {
                        created.push(relation);
                    }
                }
                graph.relations.extend(created.iter().cloned());
                Ok(created)
            })
            .await?;
        Ok(shown_as(
            &created,
            CreatedRelations {
                relations: created.clone(),
            },
        ))
    }

    // ANCHOR: add_observations
    /// Add new observations to existing entities in the knowledge graph
    #[tool(
        title = "Add Observations",
        read_only = false,
        destructive = false,
        idempotent = false,
        open_world = false
    )]
    async fn add_observations(
        &self,
        observations: Vec<NewObservations>,
        ctx: Context,
    ) -> Result<JsonResult<ObservationsAdded>, ToolError> {
        let results = self
            .change(&ctx, move |graph| {
                let mut results = Vec::with_capacity(observations.len());
                for o in observations {
                    let Some(entity) = graph.entities.iter_mut().find(|e| e.name == o.entity_name)
                    else {
                        return Err(format!("Entity with name {} not found", o.entity_name));
                    };
                    let mut added = Vec::new();
                    for content in o.contents {
                        if !entity.observations.contains(&content) {
                            entity.observations.push(content.clone());
                            added.push(content);
                        }
                    }
                    results.push(AddedObservations {
                        entity_name: o.entity_name,
                        added_observations: added,
                    });
                }
                Ok(results)
            })
            .await?;
        Ok(shown_as(
            &results,
            ObservationsAdded {
                results: results.clone(),
            },
        ))
    }

    // ANCHOR_END: add_observations

    /// Delete multiple entities and their associated relations from the knowledge graph
    #[tool(
        title = "Delete Entities",
        read_only = false,
        destructive,
        idempotent,
        open_world = false
    )]
    async fn delete_entities(
        &self,
        /// An array of entity names to delete
        #[arg(rename = "entityNames")]
        entity_names: Vec<String>,
        ctx: Context,
    ) -> Result<JsonResult<Done>, ToolError> {
        self.change(&ctx, move |graph| {
            let names: HashSet<&str> = entity_names.iter().map(String::as_str).collect();
            graph.entities.retain(|e| !names.contains(e.name.as_str()));
            graph
                .relations
                .retain(|r| !names.contains(r.from.as_str()) && !names.contains(r.to.as_str()));
            Ok(())
        })
        .await?;
        Ok(done("Entities deleted successfully"))
    }

    /// Delete specific observations from entities in the knowledge graph
    #[tool(
        title = "Delete Observations",
        read_only = false,
        destructive,
        idempotent,
        open_world = false
    )]
    async fn delete_observations(
        &self,
        deletions: Vec<Deletion>,
        ctx: Context,
    ) -> Result<JsonResult<Done>, ToolError> {
        self.change(&ctx, move |graph| {
            for d in deletions {
                if let Some(entity) = graph.entities.iter_mut().find(|e| e.name == d.entity_name) {
                    entity.observations.retain(|o| !d.observations.contains(o));
                }
            }
            Ok(())
        })
        .await?;
        Ok(done("Observations deleted successfully"))
    }

    /// Delete multiple relations from the knowledge graph
    #[tool(
        title = "Delete Relations",
        read_only = false,
        destructive,
        idempotent,
        open_world = false
    )]
    async fn delete_relations(
        &self,
        /// An array of relations to delete
        relations: Vec<Relation>,
        ctx: Context,
    ) -> Result<JsonResult<Done>, ToolError> {
        self.change(&ctx, move |graph| {
            graph
                .relations
                .retain(|r| !relations.iter().any(|d| same_relation(r, d)));
            Ok(())
        })
        .await?;
        Ok(done("Relations deleted successfully"))
    }

    /// Read the entire knowledge graph
    #[tool(
        title = "Read Graph",
        read_only,
        destructive = false,
        idempotent,
        open_world = false
    )]
    async fn read_graph(&self) -> Result<JsonResult<Graph>, ToolError> {
        let graph = self.graph().await?;
        Ok(Structured::indented(graph))
    }

    /// Search for nodes in the knowledge graph based on a query
    #[tool(
        title = "Search Nodes",
        read_only,
        destructive = false,
        idempotent,
        open_world = false
    )]
    async fn search_nodes(
        &self,
        /// The search query to match against entity names, types, and observation content
        query: String,
    ) -> Result<JsonResult<Graph>, ToolError> {
        let query = query.to_lowercase();
        let found = subgraph(self.graph().await?, |e| {
            e.name.to_lowercase().contains(&query)
                || e.entity_type.to_lowercase().contains(&query)
                || e.observations
                    .iter()
                    .any(|o| o.to_lowercase().contains(&query))
        });
        Ok(Structured::indented(found))
    }

    /// Open specific nodes in the knowledge graph by their names
    #[tool(
        title = "Open Nodes",
        read_only,
        destructive = false,
        idempotent,
        open_world = false
    )]
    async fn open_nodes(
        &self,
        /// An array of entity names to retrieve
        names: Vec<String>,
    ) -> Result<JsonResult<Graph>, ToolError> {
        let found = subgraph(self.graph().await?, |e| names.contains(&e.name));
        Ok(Structured::indented(found))
    }

    /// The full knowledge graph with all entities and relations
    #[resource(
        "memory://knowledge-graph",
        name = "knowledge-graph",
        title = "Knowledge Graph",
        mime_type = "application/json"
    )]
    async fn knowledge_graph(&self) -> Result<ResourceContents, ResourceError> {
        let graph = self
            .graph()
            .await
            .map_err(|e| ResourceError::Internal(e.to_string()))?;
        let text = serde_json::to_string_pretty(&graph).unwrap_or_default();
        Ok(ResourceContents::text(GRAPH_URI, "application/json", text))
    }
}
