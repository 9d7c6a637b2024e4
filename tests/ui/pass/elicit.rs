//! Every accepted `#[derive(Elicit)]` shape.

use mcp_runtime::prelude::*;

#[derive(Deserialize, Elicit)]
#[serde(rename_all = "kebab-case")]
enum Plan {
    #[elicit(title = "Free plan")]
    Free,
    #[elicit(rename = "pro-yearly")]
    ProYearly,
}

#[derive(Deserialize, Elicit)]
#[elicit(enum_names)]
enum Size {
    #[elicit(title = "Small")]
    S,
    #[elicit(title = "Large")]
    L,
}

#[derive(Deserialize, Elicit)]
enum Tag {
    A,
    B,
}

#[derive(Deserialize, Elicit)]
#[serde(rename_all = "camelCase")]
struct Signup {
    /// Your name.
    #[elicit(title = "Name", min_length = 1, max_length = 50, default = "Ada")]
    full_name: String,
    #[elicit(format = "email")]
    email: String,
    #[elicit(format = "date")]
    birthday: Option<String>,
    #[elicit(minimum = 0, maximum = 10)]
    rating: Option<f32>,
    seats: u16,
    discount: i64,
    newsletter: bool,
    plan: Plan,
    size: Option<Size>,
    #[elicit(min_items = 1, max_items = 2)]
    tags: Vec<Tag>,
    #[serde(rename = "ref")]
    reference: Option<String>,
}

fn main() {
    let schema = <Signup as mcp_runtime::Elicit>::requested_schema();
    assert!(schema.contains_key("properties"));
}
