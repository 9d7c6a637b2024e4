//! Resources: a static resource, URI templates (with a query and a default), the listing of a
//! template's instances, and completion of template variables.
//!
//! Run with: `cargo run -p mcp-examples --example resources`
//!
//! It serves stdio; for example:
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"library://genres/history?limit=1"}}
//! {"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"library://books/{id}"},"argument":{"name":"id","value":"d"}}}
//! ```

use mcp_runtime::prelude::*;

/// A kind of book.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Genre {
    Fiction,
    History,
    Science,
}

// Template variables are parsed with `FromStr`.
impl std::str::FromStr for Genre {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fiction" => Ok(Self::Fiction),
            "history" => Ok(Self::History),
            "science" => Ok(Self::Science),
            other => Err(format!("unknown genre `{other}`")),
        }
    }
}

/// One book of the library.
#[derive(Debug, Clone, Serialize)]
struct Book {
    id: &'static str,
    title: &'static str,
    genre: Genre,
}

const BOOKS: &[Book] = &[
    Book {
        id: "dune",
        title: "Dune",
        genre: Genre::Fiction,
    },
    Book {
        id: "dracula",
        title: "Dracula",
        genre: Genre::Fiction,
    },
    Book {
        id: "spqr",
        title: "SPQR",
        genre: Genre::History,
    },
    Book {
        id: "cosmos",
        title: "Cosmos",
        genre: Genre::Science,
    },
];

/// Every book, as JSON: a static resource, in `resources/list`.
#[resource("library://catalogue", mime_type = "application/json")]
async fn catalogue() -> &'static [Book] {
    BOOKS
}

/// One book, as text: a template, whose instances `every_book` lists.
#[resource("library://books/{id}", mime_type = "text/plain", list = every_book)]
async fn book(
    /// The book's id.
    #[arg(complete = complete_id)]
    id: String,
) -> Result<String, ResourceError> {
    let book = BOOKS
        .iter()
        .find(|b| b.id == id)
        .ok_or(ResourceError::NotFound)?;
    Ok(format!("{} ({:?})", book.title, book.genre))
}

/// The books of one genre, as JSON. `genre` completes from the enum's values with no code.
#[resource("library://genres/{genre}{?limit}", mime_type = "application/json")]
async fn by_genre(
    /// The genre.
    genre: Genre,
    /// At most this many books.
    #[arg(default = 10)]
    limit: usize,
) -> Vec<Book> {
    BOOKS
        .iter()
        .filter(|b| b.genre == genre)
        .take(limit)
        .cloned()
        .collect()
}

/// The concrete `library://books/{id}` resources, for `resources/list`.
fn every_book() -> Vec<ResourceInfo> {
    BOOKS
        .iter()
        .map(|b| ResourceInfo::new(format!("library://books/{}", b.id), b.id).description(b.title))
        .collect()
}

/// Book ids starting with what the client typed so far.
fn complete_id(prefix: &str, _: &CompletionContext) -> Vec<&'static str> {
    BOOKS
        .iter()
        .map(|b| b.id)
        .filter(|id| id.starts_with(prefix))
        .collect()
}

/// What `--help` prints.
const USAGE: &str = "\
usage: resources [--help]

Static and template resources with completion, served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    Server::new("library", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
