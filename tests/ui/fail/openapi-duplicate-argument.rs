mcp_runtime::openapi!("openapi/duplicate-argument.yaml");

fn main() {}
