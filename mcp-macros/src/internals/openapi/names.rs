//! Names: operation ids and parameter names as tool names, argument names and Rust identifiers.

/// `listPets` as `list_pets`, `repos/list-for-org` as `repos_list_for_org`, `getHTTPStatus` as
/// `get_http_status`: words split at case changes and at anything not a letter or digit.
pub(crate) fn snake_case(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && i > 0 {
                let prev = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                if prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower)
                {
                    out.push('_');
                }
            }
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}

/// A tool name when the operation has no `operationId`: the method and the path,
/// `GET /pets/{petId}` as `get_pets_by_pet_id`.
pub(crate) fn fallback_name(method: &str, path: &str) -> String {
    let mut name = method.to_ascii_lowercase();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        name.push('_');
        match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(variable) => {
                name.push_str("by_");
                name.push_str(&snake_case(variable));
            }
            None => name.push_str(&snake_case(segment)),
        }
    }
    name
}

/// Whether clients take `name` as a tool or argument name: 1-64 of `A-Z a-z 0-9 _ . -`.
pub(crate) fn portable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `name` as a Rust identifier's text: snake case, never empty, never starting with a digit;
/// keywords get `r#` (those that cannot be raw, a trailing `_`).
pub(crate) fn rust_ident(name: &str) -> String {
    let mut ident = snake_case(name);
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert_str(0, "n_");
    }
    if matches!(ident.as_str(), "self" | "super" | "crate" | "_") {
        ident.push('_');
    } else if KEYWORDS.contains(&ident.as_str()) {
        ident.insert_str(0, "r#");
    }
    ident
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// Whether `pattern` (`*` for any run of characters) matches all of `text`.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut text) = text.strip_prefix(head) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let (last, middle) = parts.split_last().unwrap_or((&"", &[]));
    for part in middle {
        match text.find(part) {
            Some(at) => text = &text[at + part.len()..],
            None => return false,
        }
    }
    text.len() >= last.len() && text.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_cases() {
        assert_eq!(snake_case("listPets"), "list_pets");
        assert_eq!(snake_case("repos/list-for-org"), "repos_list_for_org");
        assert_eq!(snake_case("getHTTPStatus"), "get_http_status");
        assert_eq!(snake_case("X-Request-ID"), "x_request_id");
        assert_eq!(fallback_name("GET", "/pets/{petId}"), "get_pets_by_pet_id");
        assert_eq!(rust_ident("type"), "r#type");
        assert_eq!(rust_ident("self"), "self_");
        assert_eq!(rust_ident("2fa"), "n_2fa");
    }

    #[test]
    fn globs() {
        assert!(glob("/repos/*", "/repos/{owner}/{repo}"));
        assert!(glob("/pets", "/pets"));
        assert!(!glob("/pets", "/pets/{id}"));
        assert!(glob("*/issues", "/repos/{owner}/{repo}/issues"));
        assert!(glob("/a/*/c*", "/a/b/cd"));
        assert!(!glob("/a/*/c", "/a/b/d"));
    }
}
