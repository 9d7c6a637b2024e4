//! The errors a server reports to its own program (not to clients: those get JSON-RPC errors).
//!
//! It imports no other module of the crate; any may import it.

use std::fmt;

/// Why a server could not be built or could not keep serving.
///
/// `{:?}` prints the same readable message as `{}` (as `anyhow::Error` does), because
/// `fn main() -> mcp_runtime::Result<()>` reports a returned error with `Debug`: a user should read
/// "duplicate tool name `add`: defined at ..." rather than the enum's structure. `{:#?}` still
/// shows the structure, for when that is what is wanted.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The registered tools (or other items) do not make a valid server, when it is built or
    /// when a change at run time would break it. Every problem found is listed, each naming the
    /// source locations involved.
    #[error("the server definition is invalid:\n{}", DisplayList(.0))]
    Definition(Vec<DefinitionError>),
    /// Reading from or writing to the transport failed.
    #[error("transport i/o failed: {0}")]
    Io(#[from] std::io::Error),
    /// The Redis of [`Server::redis`](crate::Server::redis) could not be used when serving
    /// started: not reachable, refusing the connection or its commands, or a malformed URL.
    /// (Later failures are not errors of the server: the requests that need Redis get -32603.)
    #[cfg(feature = "redis")]
    #[error("cannot use Redis at {url}: {reason}")]
    Redis {
        /// The URL given to `Server::redis`, its password (if any) replaced by `***`.
        url: String,
        /// Why, as Redis (or the connection to it) said.
        reason: String,
    },
}

/// One problem with a server's definition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// Two items share what must be unique: a tool name, a prompt name, a resource URI.
    #[error("duplicate {kind} `{name}`: defined at {first} and at {second}")]
    Duplicate {
        /// What is duplicated, for example "tool name".
        kind: &'static str,
        /// The shared value.
        name: String,
        /// Where the first one was defined.
        first: String,
        /// Where the second one was defined.
        second: String,
    },
    /// A name breaks the rule: 1 to 64 characters of `A-Z a-z 0-9 _ - .`.
    #[error(
        "invalid {kind} name `{name}` at {location}: use 1 to 64 characters of `A-Z a-z 0-9 _ - .`"
    )]
    InvalidName {
        /// "tool" or "prompt".
        kind: &'static str,
        /// The name.
        name: String,
        /// Where it was defined.
        location: String,
    },
    /// An item's definition is inconsistent.
    #[error("{kind} `{name}` at {location}: {problem}")]
    Invalid {
        /// "tool", "resource" or "prompt".
        kind: &'static str,
        /// The item's name or URI.
        name: String,
        /// Where it was defined.
        location: String,
        /// What is wrong.
        problem: String,
    },
    /// Two resource templates match exactly the same URIs, so a read could never choose.
    #[error(
        "resource templates {first} and {second} can never be told apart: every URI one matches, the other matches too"
    )]
    Ambiguous {
        /// The first template and where it was defined.
        first: String,
        /// The second template and where it was defined.
        second: String,
    },
    /// `Server::builder().tool(f)` (or `.resource`, `.prompt`) named a function the macro did
    /// not register as that kind of item.
    #[error(
        "`{name}` is not a `#[{kind}]` function: add `#[{kind}]` to it, or register it another way"
    )]
    NotAnItem {
        /// "tool", "resource" or "prompt".
        kind: &'static str,
        /// The function's path.
        name: String,
    },
    /// A change at run time ([`ServerHandle`](crate::ServerHandle)) needs a capability the
    /// server did not advertise: clients were told at `initialize` what the server may do, so an
    /// item of a kind they were not told about would never be seen.
    #[error(
        "{what} cannot be added while serving: the server did not advertise the `{capability}` capability; {fix}"
    )]
    NotAdvertised {
        /// What was being added, for example "tool `add`".
        what: String,
        /// The capability missing, for example "tools".
        capability: &'static str,
        /// How to advertise it.
        fix: &'static str,
    },
    /// A change at run time names an item the server does not have.
    #[error("no {kind} `{name}` is registered")]
    Unknown {
        /// "tool", "resource" or "prompt".
        kind: &'static str,
        /// The name, URI or URI template given.
        name: String,
    },
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            match self {
                Self::Definition(errors) => f.debug_tuple("Definition").field(errors).finish(),
                Self::Io(error) => f.debug_tuple("Io").field(error).finish(),
                #[cfg(feature = "redis")]
                Self::Redis { url, reason } => f
                    .debug_struct("Redis")
                    .field("url", url)
                    .field("reason", reason)
                    .finish(),
            }
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

impl From<DefinitionError> for Error {
    fn from(error: DefinitionError) -> Self {
        Self::Definition(vec![error])
    }
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
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `fn main() -> mcp_runtime::Result<()>` prints after "Error: " is the readable message.
    #[test]
    fn debug_is_the_readable_message() {
        let error = Error::from(DefinitionError::Duplicate {
            kind: "tool name",
            name: "add".into(),
            first: "src/a.rs:1:1".into(),
            second: "src/b.rs:2:1".into(),
        });
        let readable = "the server definition is invalid:\n  - duplicate tool name `add`: \
                        defined at src/a.rs:1:1 and at src/b.rs:2:1";
        assert_eq!(format!("{error:?}"), readable);
        assert_eq!(format!("{error}"), readable);
        assert!(format!("{error:#?}").starts_with("Definition(\n"));
    }
}
