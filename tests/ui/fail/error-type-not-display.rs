use mcp_runtime::prelude::*;

#[derive(Debug)]
struct LookupFailed;

#[tool]
async fn lookup(word: String) -> Result<String, LookupFailed> {
    if word.is_empty() {
        Err(LookupFailed)
    } else {
        Ok(word)
    }
}

fn main() {}
