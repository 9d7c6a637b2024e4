use mcp_runtime::prelude::*;

struct Store;

#[server]
impl Default for Store {
    fn default() -> Self {
        Store
    }
}

fn main() {}
