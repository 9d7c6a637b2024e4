mcp_runtime::openapi!("openapi/file-type.yaml");

fn main() {}
