//! A note store: a stateful `#[server]` with tools, a static resource, a template resource with
//! completion, and two prompts.
//!
//! Run with: `cargo run -p mcp-examples --example notes`
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"Groceries","body":"eggs, milk"}}}
//! {"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://1"}}
//! ```
//!
//! What it lists is pinned by `tests/mcp-surface-notes.json`:
//! `cargo test -p mcp-examples --example notes` checks it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use mcp_runtime::prelude::*;

/// One note.
#[derive(Debug, Clone, Serialize, JsonSchema)]
struct Note {
    /// Its id, used in `notes://{id}`.
    id: u64,
    /// A short title.
    title: String,
    /// The text.
    body: String,
}

/// The store: every tool, resource and prompt below shares it through `&self`.
#[derive(Default)]
struct Notes {
    notes: Mutex<BTreeMap<u64, Note>>,
}

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Note>> {
        self.notes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// How a summary should read.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Style {
    /// One line.
    Brief,
    /// A paragraph per note.
    Detailed,
}

impl std::str::FromStr for Style {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "brief" => Ok(Self::Brief),
            "detailed" => Ok(Self::Detailed),
            other => Err(format!(
                "unknown style `{other}`; use `brief` or `detailed`"
            )),
        }
    }
}

/// Note ids starting with what the client typed so far.
fn complete_id(prefix: &str, _: &CompletionContext) -> Vec<String> {
    // Completion functions are plain functions; the ids below are what a fresh store holds
    // after the examples in this file's header. A real store would look them up.
    (1..=20)
        .map(|id| id.to_string())
        .filter(|id| id.starts_with(prefix))
        .collect()
}

#[server(
    name = "notes",
    title = "Notes",
    instructions = "A small note store. Add notes with `add_note`, read them as `notes://{id}`."
)]
impl Notes {
    /// Add a note and return it with its new id.
    #[tool(idempotent = false)]
    async fn add_note(
        &self,
        /// A short title.
        title: String,
        /// The text of the note.
        body: String,
        ctx: Context,
    ) -> Note {
        let note = {
            let mut notes = self.lock();
            let id = notes.keys().next_back().map_or(1, |last| last + 1);
            let note = Note { id, title, body };
            notes.insert(id, note.clone());
            note
        };
        ctx.server().resources_list_changed();
        ctx.server().resource_updated("notes://index");
        note
    }

    /// Delete a note.
    #[tool(destructive)]
    async fn delete_note(
        &self,
        /// The note's id.
        id: u64,
        ctx: Context,
    ) -> Result<String, ToolError> {
        let removed = self.lock().remove(&id);
        match removed {
            Some(note) => {
                ctx.server().resources_list_changed();
                ctx.server().resource_updated("notes://index");
                ctx.server().resource_updated(format!("notes://{id}"));
                Ok(format!("deleted note {id} ({})", note.title))
            }
            None => Err(ToolError::new(format!("there is no note {id}"))),
        }
    }

    /// Find the notes whose title or body contains the text, ignoring case.
    #[tool(read_only)]
    fn search_notes(
        &self,
        /// The text to look for.
        text: String,
    ) -> Vec<Note> {
        let needle = text.to_lowercase();
        self.lock()
            .values()
            .filter(|n| {
                n.title.to_lowercase().contains(&needle) || n.body.to_lowercase().contains(&needle)
            })
            .cloned()
            .collect()
    }

    /// Every note's id and title, as JSON.
    #[resource("notes://index", name = "index", mime_type = "application/json")]
    async fn index(&self) -> Vec<(u64, String)> {
        self.lock()
            .values()
            .map(|n| (n.id, n.title.clone()))
            .collect()
    }

    /// One note, as text: its title on the first line, then its body.
    #[resource("notes://{id}", mime_type = "text/plain", list = Self::listing)]
    async fn note(
        &self,
        /// The note's id.
        #[arg(complete = complete_id)]
        id: u64,
    ) -> Result<String, ResourceError> {
        let notes = self.lock();
        let note = notes.get(&id).ok_or(ResourceError::NotFound)?;
        Ok(format!("{}\n\n{}", note.title, note.body))
    }

    /// Summarise the notes.
    #[prompt(title = "Summarise notes")]
    fn summarise(
        &self,
        /// How the summary should read.
        style: Option<Style>,
    ) -> Vec<PromptMessage> {
        let notes: Vec<String> = self
            .lock()
            .values()
            .map(|n| format!("- {}: {}", n.title, n.body))
            .collect();
        let how = match style.unwrap_or(Style::Brief) {
            Style::Brief => "in one line",
            Style::Detailed => "with a paragraph per note",
        };
        vec![
            PromptMessage::user(format!("Here are my notes:\n{}", notes.join("\n"))),
            PromptMessage::user(format!("Summarise them {how}.")),
        ]
    }

    /// Draft a note about a topic.
    #[prompt(title = "Draft a note")]
    fn draft(
        /// What the note is about.
        topic: String,
        /// About how many words.
        #[arg(default = 100)]
        words: u32,
    ) -> String {
        format!("Draft a note of about {words} words about {topic}. Give it a short title.")
    }
}

impl Notes {
    /// The concrete `notes://{id}` resources, for `resources/list`.
    fn listing(&self) -> Vec<ResourceInfo> {
        self.lock()
            .values()
            .map(|n| {
                ResourceInfo::new(format!("notes://{}", n.id), format!("note-{}", n.id))
                    .description(n.title.clone())
            })
            .collect()
    }
}

/// What `--help` prints.
const USAGE: &str = "\
usage: notes [--help]

A note store (tools, resources, prompts), served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    Notes::default().into_server().serve_stdio().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notes server's tools, resources, templates and prompts on every protocol revision,
    /// pinned in a reviewed file (`MCP_SURFACE_UPDATE=1` records a new one).
    #[tokio::test]
    async fn surface() {
        mcp_runtime::testing::assert_surface(
            Notes::default().into_server(),
            "tests/mcp-surface-notes.json",
        )
        .await;
    }
}
