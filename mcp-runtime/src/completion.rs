//! `completion/complete`: suggestions for prompt arguments and template variables.
//!
//! A completion function is declared next to what it completes, `#[arg(complete = f)]`, where
//! `f(prefix: &str, context: &CompletionContext) -> impl IntoCompletions`. An argument whose type
//! is an enum (its JSON Schema lists the values) completes from those values with no code. The
//! runtime sends at most 100 values, with `total` and `hasMore` when there were more, and
//! advertises the `completions` capability only when something completes.
//!
//! # Where it sits
//!
//! Below the items, which import it: it may import `context` and `protocol` only.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

/// The spec's cap on the values of one completion result.
pub const MAX_COMPLETIONS: usize = 100;

/// What else the client has filled in: the other arguments of the prompt, or the other
/// variables of the template, already resolved (2025-06-18 `context.arguments`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionContext {
    /// Argument or variable name to its value.
    pub arguments: HashMap<String, String>,
}

impl CompletionContext {
    /// The value given for `name`, if any.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }
}

/// A completion result: the suggestions, best first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completions {
    /// The suggestions (at most 100 are sent).
    pub values: Vec<String>,
    /// How many suggestions exist in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than were sent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub has_more: bool,
}

impl Completions {
    /// Caps the values at [`MAX_COMPLETIONS`], recording `total` and `hasMore` when it cuts.
    pub(crate) fn capped(mut self) -> Self {
        if self.values.len() > MAX_COMPLETIONS {
            let total = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETIONS);
            self.total = Some(self.total.unwrap_or(total).max(total));
            self.has_more = true;
        }
        self
    }
}

/// A type a completion function can return.
pub trait IntoCompletions {
    /// Converts the value into a completion result.
    fn into_completions(self) -> Completions;
}

impl IntoCompletions for Completions {
    fn into_completions(self) -> Completions {
        self
    }
}

impl IntoCompletions for Vec<String> {
    fn into_completions(self) -> Completions {
        Completions {
            values: self,
            ..Completions::default()
        }
    }
}

impl IntoCompletions for Vec<&str> {
    fn into_completions(self) -> Completions {
        self.into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into_completions()
    }
}

impl IntoCompletions for &[&str] {
    fn into_completions(self) -> Completions {
        self.to_vec().into_completions()
    }
}

impl<const N: usize> IntoCompletions for [&str; N] {
    fn into_completions(self) -> Completions {
        self.to_vec().into_completions()
    }
}

/// Produces completions for one argument or variable: given the prefix typed so far and the
/// other arguments, the suggestions.
pub type Completer = Arc<dyn Fn(&str, &CompletionContext) -> Completions + Send + Sync>;

/// Completes any argument of a prompt or template by asking elsewhere, as a proxied item asks
/// its upstream: given the argument's name, the prefix typed so far and the other arguments
/// (`context.arguments` as sent), the suggestions, or the error to answer with.
pub(crate) type ForwardCompleter = Arc<
    dyn Fn(
            String,
            String,
            serde_json::Map<String, serde_json::Value>,
        ) -> crate::context::BoxFuture<Result<Completions, crate::protocol::ErrorObject>>
        + Send
        + Sync,
>;

/// A completer over a function the user wrote.
pub fn completer_fn<R: IntoCompletions + 'static>(
    f: fn(&str, &CompletionContext) -> R,
) -> Completer {
    Arc::new(move |prefix, context| f(prefix, context).into_completions())
}

/// A completer over a fixed list of values: those that start with the prefix, ignoring case.
pub fn completer_values(values: Vec<String>) -> Completer {
    Arc::new(move |prefix, _| {
        let prefix = prefix.to_lowercase();
        let values = values
            .iter()
            .filter(|v| v.to_lowercase().starts_with(&prefix))
            .cloned()
            .collect();
        Completions {
            values,
            ..Completions::default()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_capped_at_one_hundred() {
        let many: Vec<String> = (0..250).map(|i| i.to_string()).collect();
        let capped = many.into_completions().capped();
        assert_eq!(capped.values.len(), 100);
        assert_eq!(capped.total, Some(250));
        assert!(capped.has_more);
    }

    #[test]
    fn value_lists_filter_by_prefix_ignoring_case() {
        let complete = completer_values(vec!["Rust".into(), "Ruby".into(), "Go".into()]);
        assert_eq!(
            complete("ru", &CompletionContext::default()).values,
            ["Rust", "Ruby"]
        );
    }
}
