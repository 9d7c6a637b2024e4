mcp_runtime::openapi!("openapi/base.yaml", rename = [("listPet", "pets")]);

fn main() {}
