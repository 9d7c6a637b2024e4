use mcp_runtime::prelude::*;

#[derive(Default)]
struct Store;

#[server]
impl Store {
    /// Both at once.
    #[tool]
    #[prompt]
    async fn both(&self) -> String {
        String::new()
    }
}

fn main() {}
