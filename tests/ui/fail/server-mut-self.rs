use mcp_runtime::prelude::*;

#[derive(Default)]
struct Counter {
    count: u64,
}

#[server]
impl Counter {
    /// Count one more.
    #[tool]
    async fn bump(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}

fn main() {}
