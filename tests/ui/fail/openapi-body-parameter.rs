mcp_runtime::openapi!("openapi/body-parameter.yaml");

fn main() {}
