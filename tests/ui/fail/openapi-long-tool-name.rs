mcp_runtime::openapi!("openapi/long-name.yaml");

fn main() {}
