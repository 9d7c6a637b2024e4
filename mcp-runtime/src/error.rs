//! The errors a server reports to its own program (not to clients: those get JSON-RPC errors).

use std::fmt;

/// Why a server could not be built or could not keep serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The registered tools (or other items) do not make a valid server. Every problem found is
    /// listed, each naming the source locations involved.
    #[error("the server definition is invalid:\n{}", DisplayList(.0))]
    Definition(Vec<DefinitionError>),
    /// Reading from or writing to the transport failed.
    #[error("transport i/o failed: {0}")]
    Io(#[from] std::io::Error),
}

/// One problem with a server's definition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// Two tools have the same name.
    #[error("duplicate tool name `{name}`: defined at {first} and at {second}")]
    DuplicateTool {
        /// The name.
        name: String,
        /// Where the first one was defined.
        first: String,
        /// Where the second one was defined.
        second: String,
    },
    /// A tool's name breaks the spec's rule: 1 to 64 characters of `A-Z a-z 0-9 _ - .`.
    #[error(
        "invalid tool name `{name}` at {location}: use 1 to 64 characters of `A-Z a-z 0-9 _ - .`"
    )]
    InvalidToolName {
        /// The name.
        name: String,
        /// Where it was defined.
        location: String,
    },
    /// A tool's definition is inconsistent.
    #[error("tool `{name}` at {location}: {problem}")]
    InvalidTool {
        /// The tool's name.
        name: String,
        /// Where it was defined.
        location: String,
        /// What is wrong.
        problem: String,
    },
    /// `Server::builder().tool(f)` named a function that is not a `#[tool]`.
    #[error("`{0}` is not a `#[tool]` function: add `#[tool]` to it, or register it another way")]
    NotATool(String),
}

struct DisplayList<'a>(&'a [DefinitionError]);

impl fmt::Display for DisplayList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "  - {error}")?;
        }
        Ok(())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether `name` is a valid tool name: 1 to 64 characters of `[A-Za-z0-9_.-]`. The spec allows
/// 128; the conformance suite checks 64, so this runtime keeps to what every checker accepts.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}
