mcp_runtime::openapi!("openapi/does-not-exist.yaml");

fn main() {}
