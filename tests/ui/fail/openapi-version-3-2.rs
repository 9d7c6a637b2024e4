mcp_runtime::openapi!("openapi/version-3-2.yaml");

fn main() {}
