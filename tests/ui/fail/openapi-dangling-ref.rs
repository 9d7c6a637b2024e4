mcp_runtime::openapi!("openapi/dangling-ref.yaml");

fn main() {}
