mcp_runtime::openapi!("openapi/matrix.yaml");

fn main() {}
