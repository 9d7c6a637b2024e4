mcp_runtime::openapi!("openapi/dangling-ref-xml.json");

fn main() {}
