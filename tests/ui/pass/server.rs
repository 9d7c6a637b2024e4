//! `#[server]` impl blocks, alone and merged with free functions.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;

#[derive(Default)]
struct Counter {
    count: AtomicU64,
}

impl Counter {
    fn listing(&self) -> Vec<ResourceInfo> {
        vec![ResourceInfo::new("count://now", "now")]
    }
}

#[server(name = "counter", version = "1.2.3", title = "Counter", description = "Counts.", instructions = "Call bump.", website_url = "https://example.com", icons = ["https://example.com/c.png"])]
impl Counter {
    /// Count one more.
    #[tool]
    async fn bump(&self, by: Option<u64>) -> u64 {
        self.count.fetch_add(by.unwrap_or(1), Ordering::SeqCst) + by.unwrap_or(1)
    }

    /// The count.
    #[resource("count://{when}", list = Self::listing)]
    fn current(&self, when: String) -> String {
        format!("{when}: {}", self.count.load(Ordering::SeqCst))
    }

    /// Associated functions work too.
    #[prompt]
    fn explain() -> String {
        "Explain counting.".to_owned()
    }

    /// A method named like `McpServer`'s own: the inherent one is called.
    #[tool]
    fn items(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// A sync associated tool, on the blocking pool.
    #[tool]
    fn unit() -> String {
        "count".to_owned()
    }

    /// A trivial sync method, run on the request's task.
    #[tool(inline)]
    fn peek(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Not an item: left alone.
    fn helper(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

/// A free tool served next to the impl's items.
#[tool]
async fn free() -> String {
    String::new()
}

fn main() {
    let counter = Counter::default();
    let _ = counter.helper();
    counter.into_server().build().unwrap();
    Server::builder().tool(free).with(Counter::default()).build().unwrap();
}
