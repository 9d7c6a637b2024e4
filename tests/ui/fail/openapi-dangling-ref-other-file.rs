mcp_runtime::openapi!("openapi/dangling-ref-other-file.yaml");

fn main() {}
