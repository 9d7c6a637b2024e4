//! A Model Context Protocol server for files: read, write, edit, list, search and move them
//! inside the allowed directories. A drop-in for `@modelcontextprotocol/server-filesystem`:
//! the same tools, arguments and result texts.
//!
//! The allowed directories come from the command line, and from the client's roots when it
//! has any: roots replace the command line's directories, and follow
//! `notifications/roots/list_changed`. Every path a client sends is checked before the file
//! system is touched ([`sandbox`]); reads are bounded ([`read`], [`listing`]).
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//! use mcp_server_filesystem::{Filesystem, sandbox::Sandbox};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let dirs = Sandbox::from_command_line(&["/srv/data".to_owned()])?;
//! Filesystem::new(dirs).into_server().serve_stdio().await?;
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mcp_runtime::IntoCallToolResult;
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::BlobResourceContents;
use serde_json::json;

pub mod edit;
pub mod fs_error;
pub mod info;
pub mod listing;
pub mod read;
pub mod sandbox;
mod write;

use crate::edit::Edit;
use crate::fs_error::FsError;
use crate::read::ReadBudget;
use crate::sandbox::Sandbox;

/// The server: the command line's directories, the client's roots as last resolved, and the
/// budget of file content the calls in flight hold.
pub struct Filesystem {
    command_line: Arc<Sandbox>,
    /// The roots last listed by the client (their URIs) and the sandbox made of them.
    roots: Mutex<Option<(Vec<String>, Arc<Sandbox>)>>,
    budget: ReadBudget,
}

impl Filesystem {
    /// A server allowed into `dirs` until the client's roots say otherwise.
    pub fn new(dirs: Sandbox) -> Self {
        Self {
            command_line: Arc::new(dirs),
            roots: Mutex::new(None),
            budget: ReadBudget::default(),
        }
    }

    // ANCHOR: roots
    /// The directories this call may reach: the client's roots when it has roots and at least
    /// one is a directory here, otherwise the command line's. The client's list is kept by the
    /// runtime until it sends `notifications/roots/list_changed`; the directories made of it
    /// are kept here until the list differs.
    async fn sandbox(&self, ctx: &Context) -> Arc<Sandbox> {
        if !ctx.client().capabilities.roots() {
            return Arc::clone(&self.command_line);
        }
        let roots = match ctx.roots().await {
            Ok(roots) => roots,
            Err(error) => {
                tracing::warn!("Failed to request roots from client: {error}");
                return Arc::clone(&self.command_line);
            }
        };
        let uris: Vec<String> = roots.into_iter().map(|root| root.uri).collect();
        let cached = self
            .lock_roots()
            .as_ref()
            .and_then(|(listed, sandbox)| (*listed == uris).then(|| Arc::clone(sandbox)));
        let sandbox = match cached {
            Some(sandbox) => sandbox,
            None => {
                let resolved = {
                    let uris = uris.clone();
                    blocking(move || Ok(Sandbox::from_roots(uris.iter().map(String::as_str))))
                        .await
                        .unwrap_or_else(|_| Sandbox::from_roots([]))
                };
                if resolved.is_empty() {
                    tracing::warn!("No valid root directories provided by client");
                } else {
                    tracing::info!(
                        "Updated allowed directories from MCP roots: {} valid directories",
                        resolved.dirs().len()
                    );
                }
                let resolved = Arc::new(resolved);
                *self.lock_roots() = Some((uris, Arc::clone(&resolved)));
                resolved
            }
        };
        if sandbox.is_empty() {
            Arc::clone(&self.command_line)
        } else {
            sandbox
        }
    }

    // ANCHOR_END: roots

    fn lock_roots(&self) -> std::sync::MutexGuard<'_, Option<(Vec<String>, Arc<Sandbox>)>> {
        self.roots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `requested` checked against this call's directories, in a blocking thread.
    async fn resolve(
        &self,
        ctx: &Context,
        requested: String,
    ) -> Result<(Arc<Sandbox>, PathBuf), FsError> {
        let sandbox = self.sandbox(ctx).await;
        let checked = Arc::clone(&sandbox);
        let path = blocking(move || checked.resolve(&requested)).await?;
        Ok((sandbox, path))
    }

    /// The text of a file, whole or its first or last lines, within the read budget.
    async fn read_text(
        &self,
        ctx: &Context,
        path: String,
        tail: Option<f64>,
        head: Option<f64>,
    ) -> Result<FileText, ToolError> {
        let (_, path) = self.resolve(ctx, path).await?;
        // Zero counts as not given, as in the original.
        let (head, tail) = (head.filter(|n| *n != 0.0), tail.filter(|n| *n != 0.0));
        if head.is_some() && tail.is_some() {
            return Err(ToolError::new(
                "Cannot specify both head and tail parameters simultaneously",
            ));
        }
        let _room = self.budget.reserve(read::size_of(&path)).await?;
        let text = blocking(move || match (head, tail) {
            (Some(n), _) => read::head(&path, line_count(n.ceil())),
            (_, Some(n)) => read::tail(&path, line_count(n.trunc())),
            _ => read::read_text(&path),
        })
        .await?;
        Ok(file_text(text))
    }
}

/// A line count from a JSON number: negative and non-finite counts read as none.
fn line_count(n: f64) -> usize {
    if n.is_finite() && n > 0.0 {
        n.min(usize::MAX as f64) as usize
    } else {
        0
    }
}

/// Runs file-system work on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, FsError> + Send + 'static,
) -> Result<T, FsError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(FsError::other(format!("the file operation failed: {e}"))))
}

// ANCHOR: text
/// What every tool but `read_media_file` answers, as the original does: the text as one text
/// block, and `{"content": text}` as `structuredContent`, with that `outputSchema`.
pub type FileText = Structured<TextOutput>;

/// The `structuredContent` of a tool's text. Its schema is the original's: one string field,
/// no description, no other field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct TextOutput {
    pub content: String,
}

/// A tool's text, as the original sends it.
pub fn file_text(text: String) -> FileText {
    let content = TextOutput {
        content: text.clone(),
    };
    Structured::with_text(content, text)
}

// ANCHOR_END: text

/// `read_media_file`'s block, also as `structuredContent` `{"content": [block]}`.
pub struct Media(Content);

impl IntoCallToolResult for Media {
    fn into_call_tool_result(self) -> CallToolResult {
        let structured = serde_json::to_value(&self.0)
            .map(|block| json!({ "content": [block] }))
            .ok();
        CallToolResult {
            structured_content: structured,
            ..CallToolResult::success([self.0])
        }
    }
}

/// How `list_directory_with_sizes` sorts: by name, or by size, largest first. (The variants
/// carry no docs, so the schema is a plain `enum` of strings, as the original's.)
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum SortBy {
    #[default]
    Name,
    Size,
}

/// `read_multiple_files`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadMultiple {
    /// Array of file paths to read. Each path must be a string pointing to a valid file within
    /// allowed directories.
    #[schemars(length(min = 1))]
    pub paths: Vec<String>,
}

#[server(
    name = "secure-filesystem-server",
    title = "Filesystem",
    instructions = "Read, write, edit, list and search files within the allowed directories. \
                    Call list_allowed_directories first to see them."
)]
impl Filesystem {
    /// Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.
    #[tool(title = "Read File (Deprecated)", read_only, open_world = false)]
    async fn read_file(
        &self,
        path: String,
        /// If provided, returns only the last N lines of the file
        tail: Option<f64>,
        /// If provided, returns only the first N lines of the file
        head: Option<f64>,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        self.read_text(&ctx, path, tail, head).await
    }

    /// Read the complete contents of a file from the file system as text.
    /// Handles various text encodings and provides detailed error messages
    /// if the file cannot be read. Use this tool when you need to examine
    /// the contents of a single file. Use the 'head' parameter to read only
    /// the first N lines of a file, or the 'tail' parameter to read only
    /// the last N lines of a file. Operates on the file as text regardless of extension.
    /// Only works within allowed directories.
    #[tool(title = "Read Text File", read_only, open_world = false)]
    async fn read_text_file(
        &self,
        path: String,
        /// If provided, returns only the last N lines of the file
        tail: Option<f64>,
        /// If provided, returns only the first N lines of the file
        head: Option<f64>,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        self.read_text(&ctx, path, tail, head).await
    }

    /// Read a file and return it as a base64-encoded content block with its MIME type.
    /// Image and audio files are returned as image/audio content; any other file type is
    /// returned as an embedded resource. Only works within allowed directories.
    #[tool(title = "Read Media File", read_only, open_world = false)]
    async fn read_media_file(&self, path: String, ctx: Context) -> Result<Media, ToolError> {
        let (_, path) = self.resolve(&ctx, path).await?;
        // Base64 holds four bytes for three.
        let _room = self.budget.reserve(read::size_of(&path) / 3 * 7).await?;
        let block = blocking(move || {
            let data = read::read_base64(&path)?;
            let mime = info::media_type(&path);
            Ok(if mime.starts_with("image/") {
                Content::from(Image::from_base64(data, mime))
            } else if mime.starts_with("audio/") {
                Content::from(Audio::from_base64(data, mime))
            } else {
                Content::from(EmbeddedResource::new(ResourceContents::Blob(
                    BlobResourceContents {
                        uri: info::file_url(&path),
                        mime_type: Some(mime.to_owned()),
                        blob: data,
                        meta: None,
                    },
                )))
            })
        })
        .await?;
        Ok(Media(block))
    }

    /// Read the contents of multiple files simultaneously. This is more
    /// efficient than reading files one by one when you need to analyze
    /// or compare multiple files. Each file's content is returned with its
    /// path as a reference. Failed reads for individual files won't stop
    /// the entire operation. Only works within allowed directories.
    #[tool(title = "Read Multiple Files", read_only, open_world = false)]
    async fn read_multiple_files(
        &self,
        Args(args): Args<ReadMultiple>,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        if args.paths.is_empty() {
            return Err(ToolError::new("At least one file path must be provided"));
        }
        let mut parts = Vec::with_capacity(args.paths.len());
        // One file at a time, each within the budget: the call holds what it has read so far
        // and one file more.
        for requested in args.paths {
            let read = async {
                let (_, path) = self.resolve(&ctx, requested.clone()).await?;
                let _room = self.budget.reserve(read::size_of(&path)).await?;
                blocking(move || read::read_text(&path)).await
            };
            parts.push(match read.await {
                Ok(text) => format!("{requested}:\n{text}\n"),
                Err(error) => format!("{requested}: Error - {error}"),
            });
        }
        Ok(file_text(parts.join("\n---\n")))
    }

    // ANCHOR: write_file
    /// Create a new file or completely overwrite an existing file with new content.
    /// Use with caution as it will overwrite existing files without warning.
    /// Handles text content with proper encoding. Only works within allowed directories.
    #[tool(
        title = "Write File",
        read_only = false,
        idempotent,
        destructive,
        open_world = false
    )]
    async fn write_file(
        &self,
        path: String,
        content: String,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path.clone()).await?;
        blocking(move || write::write_file(&real, content.as_bytes())).await?;
        Ok(file_text(format!("Successfully wrote to {path}")))
    }

    // ANCHOR_END: write_file

    /// Make line-based edits to a text file. Each edit replaces exact line sequences
    /// with new content. Returns a git-style diff showing the changes made.
    /// Only works within allowed directories.
    #[tool(
        title = "Edit File",
        read_only = false,
        idempotent = false,
        destructive,
        open_world = false
    )]
    async fn edit_file(
        &self,
        path: String,
        edits: Vec<Edit>,
        /// Preview changes using git-style diff format
        #[arg(rename = "dryRun", default = false)]
        dry_run: bool,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (_, path) = self.resolve(&ctx, path).await?;
        let _room = self.budget.reserve(read::size_of(&path)).await?;
        let diff = blocking(move || {
            let original = edit::normalize_line_endings(&read::read_text(&path)?);
            let modified = edit::apply(&original, &edits).map_err(FsError::other)?;
            let diff = edit::fenced_diff(&path.to_string_lossy(), &original, &modified);
            if !dry_run {
                write::replace(&path, modified.as_bytes())?;
            }
            Ok(diff)
        })
        .await?;
        Ok(file_text(diff))
    }

    /// Create a new directory or ensure a directory exists. Can create multiple
    /// nested directories in one operation. If the directory already exists,
    /// this operation will succeed silently. Perfect for setting up directory
    /// structures for projects or ensuring required paths exist. Only works within allowed directories.
    #[tool(
        title = "Create Directory",
        read_only = false,
        idempotent,
        destructive = false,
        open_world = false
    )]
    async fn create_directory(&self, path: String, ctx: Context) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path.clone()).await?;
        blocking(move || {
            std::fs::create_dir_all(&real).map_err(|e| FsError::io(e, "mkdir", &real))
        })
        .await?;
        Ok(file_text(format!("Successfully created directory {path}")))
    }

    /// Get a detailed listing of all files and directories in a specified path.
    /// Results clearly distinguish between files and directories with [FILE] and [DIR]
    /// prefixes. This tool is essential for understanding directory structure and
    /// finding specific files within a directory. Only works within allowed directories.
    #[tool(title = "List Directory", read_only, open_world = false)]
    async fn list_directory(&self, path: String, ctx: Context) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path).await?;
        Ok(file_text(blocking(move || listing::list(&real)).await?))
    }

    /// Get a detailed listing of all files and directories in a specified path, including sizes.
    /// Results clearly distinguish between files and directories with [FILE] and [DIR]
    /// prefixes. This tool is useful for understanding directory structure and
    /// finding specific files within a directory. Only works within allowed directories.
    #[tool(title = "List Directory with Sizes", read_only, open_world = false)]
    async fn list_directory_with_sizes(
        &self,
        path: String,
        /// Sort entries by name or size
        #[arg(rename = "sortBy", default = SortBy::Name)]
        sort_by: SortBy,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path).await?;
        let by_size = matches!(sort_by, SortBy::Size);
        Ok(file_text(
            blocking(move || listing::list_with_sizes(&real, by_size)).await?,
        ))
    }

    /// Get a recursive tree view of files and directories as a JSON structure.
    /// Each entry includes 'name', 'type' (file/directory), and 'children' for directories.
    /// Files have no children array, while directories always have a children array (which may be empty).
    /// The output is formatted with 2-space indentation for readability. Only works within allowed directories.
    #[tool(title = "Directory Tree", read_only, open_world = false)]
    async fn directory_tree(
        &self,
        path: String,
        #[arg(rename = "excludePatterns", default = Vec::new())] exclude_patterns: Vec<String>,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path).await?;
        Ok(file_text(
            blocking(move || listing::tree(&real, &exclude_patterns)).await?,
        ))
    }

    /// Move or rename files and directories. Can move files between directories
    /// and rename them in a single operation. If the destination exists, the
    /// operation will fail. Works across different directories and can be used
    /// for simple renaming within the same directory. Both source and destination must be within allowed directories.
    #[tool(
        title = "Move File",
        read_only = false,
        idempotent = false,
        destructive,
        open_world = false
    )]
    async fn move_file(
        &self,
        source: String,
        destination: String,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (_, from) = self.resolve(&ctx, source.clone()).await?;
        let (_, to) = self.resolve(&ctx, destination.clone()).await?;
        blocking(move || write::move_path(&from, &to)).await?;
        Ok(file_text(format!(
            "Successfully moved {source} to {destination}"
        )))
    }

    /// Recursively search for files and directories matching a pattern.
    /// The patterns should be glob-style patterns that match paths relative to the working directory.
    /// Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories.
    /// Returns full paths to all matching items. Great for finding files when you don't know their exact location.
    /// Only searches within allowed directories.
    #[tool(title = "Search Files", read_only, open_world = false)]
    async fn search_files(
        &self,
        path: String,
        pattern: String,
        #[arg(rename = "excludePatterns", default = Vec::new())] exclude_patterns: Vec<String>,
        ctx: Context,
    ) -> Result<FileText, ToolError> {
        let (sandbox, real) = self.resolve(&ctx, path).await?;
        let found =
            blocking(move || listing::search(&real, &pattern, &exclude_patterns, &sandbox)).await?;
        Ok(file_text(if found.is_empty() {
            "No matches found".to_owned()
        } else {
            joined(&found)
        }))
    }

    /// Retrieve detailed metadata about a file or directory. Returns comprehensive
    /// information including size, creation time, last modified time, permissions,
    /// and type. This tool is perfect for understanding file characteristics
    /// without reading the actual content. Only works within allowed directories.
    #[tool(title = "Get File Info", read_only, open_world = false)]
    async fn get_file_info(&self, path: String, ctx: Context) -> Result<FileText, ToolError> {
        let (_, real) = self.resolve(&ctx, path).await?;
        Ok(file_text(blocking(move || info::file_info(&real)).await?))
    }

    /// Returns the list of directories that this server is allowed to access.
    /// Subdirectories within these allowed directories are also accessible.
    /// Use this to understand which directories and their nested paths are available
    /// before trying to access files.
    #[tool(title = "List Allowed Directories", read_only, open_world = false)]
    async fn list_allowed_directories(&self, ctx: Context) -> FileText {
        let sandbox = self.sandbox(&ctx).await;
        if sandbox.is_empty() {
            return file_text(sandbox::NO_DIRECTORIES.to_owned());
        }
        file_text(format!("Allowed directories:\n{}", joined(sandbox.dirs())))
    }
}

fn joined(paths: &[impl AsRef<Path>]) -> String {
    paths
        .iter()
        .map(|p| p.as_ref().display().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
