use mcp_runtime::prelude::*;

struct Store<T>(T);

#[server]
impl<T: Send + Sync + 'static> Store<T> {
    /// Ping.
    #[tool]
    async fn ping(&self) -> String {
        String::new()
    }
}

fn main() {}
