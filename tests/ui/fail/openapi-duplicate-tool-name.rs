mcp_runtime::openapi!("openapi/duplicate-tool.yaml");

fn main() {}
