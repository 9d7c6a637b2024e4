mcp_runtime::openapi!("openapi/cookie.yaml");

fn main() {}
