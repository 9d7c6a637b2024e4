use mcp_runtime::prelude::*;

#[derive(Default)]
struct Store;

#[server(nmae = "store")]
impl Store {
    /// Ping.
    #[tool]
    async fn ping(&self) -> String {
        String::new()
    }
}

fn main() {
    // The macro's fallback impl keeps this from being a second error.
    let _ = Store.into_server();
}
