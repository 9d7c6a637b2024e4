mcp_runtime::openapi!("openapi/parameter-name.yaml");

fn main() {}
