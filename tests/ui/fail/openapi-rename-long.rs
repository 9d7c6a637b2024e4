mcp_runtime::openapi!("openapi/base.yaml", rename = [("listPets", "list pets")]);

fn main() {}
