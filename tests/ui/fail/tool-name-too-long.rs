use mcp_runtime::prelude::*;

#[tool(name = "a_tool_name_that_goes_on_and_on_well_past_the_sixty_four_characters_allowed")]
async fn lookup() -> String {
    String::new()
}

fn main() {}
