fn main() {
    let _skills = mcp_runtime::skills!("skills/frontmatter-syntax");
}
