mcp_runtime::openapi!("openapi/base.yaml", include_tags = ["petz"]);

fn main() {}
