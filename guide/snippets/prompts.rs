//! Prompts and completion.

use mcp_runtime::prelude::*;

// ANCHOR: prompt
/// Review a piece of code.
#[prompt(title = "Code review")]
fn code_review(
    /// The code to review.
    code: String,
    /// How many issues to list at most.
    #[arg(default = 3)]
    issues: u32,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!("Review this code:\n{code}")),
        PromptMessage::user(format!("List at most {issues} issues.")),
    ]
}
// ANCHOR_END: prompt

// ANCHOR: complete
fn cities(prefix: &str, _: &CompletionContext) -> Vec<String> {
    ["Paris", "Porto", "Prague", "Oslo"]
        .into_iter()
        .filter(|city| city.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// Plan a trip.
#[prompt]
fn plan_trip(#[arg(complete = cities)] city: String, pace: Pace) -> String {
    format!("Plan three {pace:?} days in {city}.")
}

/// How busy the days are: completes from its values, with no code.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Pace {
    Relaxed,
    Busy,
}

impl std::str::FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "relaxed" => Ok(Self::Relaxed),
            "busy" => Ok(Self::Busy),
            other => Err(format!("`{other}` is not a pace: relaxed or busy")),
        }
    }
}
// ANCHOR_END: complete

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn typed_arguments() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().prompt(code_review)).await?;
        let args = json!({"name": "code_review", "arguments": {"code": "x", "issues": "2"}});
        let got = client.request("prompts/get", args).await?;
        assert_eq!(
            got["messages"][1]["content"]["text"],
            "List at most 2 issues."
        );
        let args = json!({"name": "code_review", "arguments": {"code": "x", "issues": "many"}});
        let bad = client.request("prompts/get", args).await.unwrap_err();
        assert_eq!(bad.rpc().map(|e| e.code), Some(-32602));
        Ok(())
    }

    #[tokio::test]
    async fn completion() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().prompt(plan_trip)).await?;
        let init = client.initialize_result().cloned().unwrap_or_default();
        assert!(init["capabilities"]["completions"].is_object());
        let city = json!({"ref": {"type": "ref/prompt", "name": "plan_trip"}, "argument": {"name": "city", "value": "P"}});
        let done = client.request("completion/complete", city).await?;
        assert_eq!(
            done["completion"]["values"],
            json!(["Paris", "Porto", "Prague"])
        );
        let pace = json!({"ref": {"type": "ref/prompt", "name": "plan_trip"}, "argument": {"name": "pace", "value": "b"}});
        let done = client.request("completion/complete", pace).await?;
        assert_eq!(done["completion"]["values"], json!(["busy"]));
        Ok(())
    }
}
