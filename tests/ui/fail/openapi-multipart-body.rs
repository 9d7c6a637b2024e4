mcp_runtime::openapi!("openapi/multipart.yaml");

fn main() {}
