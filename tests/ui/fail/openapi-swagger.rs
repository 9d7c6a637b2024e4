mcp_runtime::openapi!("openapi/swagger.yaml");

fn main() {}
