mcp_runtime::openapi!("openapi/base.yaml", include_tag = ["pets"]);

fn main() {}
