mcp_runtime::openapi!("openapi/recursive-inline.yaml");

fn main() {}
