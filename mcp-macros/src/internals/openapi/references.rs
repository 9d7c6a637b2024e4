//! Every `$ref` of the description checked, in every file it reaches, whether or not a selected
//! operation reads it: a `$ref` to nothing is a mistake in the description wherever it is
//! written (an excluded operation, an XML media type, a component nothing uses), and the tools
//! that read a whole description (validators, generators) refuse it too.
//!
//! What is a reference follows OpenAPI, not a blind search for `$ref` keys: the values of
//! `example`, `examples` (a schema's list), `default`, `const`, `enum`, an Example's `value`
//! and `x-` extensions are data, where a `$ref` key is a value like any other, so they are not
//! searched; under the maps keyed by names (`properties`, `responses`, `components/schemas`,
//! `content`, ..) a key is a name, so a property called `default` or a response called
//! `default` is searched all the same. A `$ref` that names a URL (or any URI with a scheme) or a
//! fragment that is not a JSON pointer (a 3.1 anchor) is not followed here, since `openapi!`
//! reads no URL: where an operation needs one, reading it is the error.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use super::source::{Place, Sources, escape};

/// At most this many broken `$ref`s are named in one build: one renamed component can break
/// hundreds, and finding their lines reads the file again.
const SHOWN: usize = 20;

/// The problems of every `$ref` in the description and the files it reaches: one message each,
/// naming where the `$ref` is written (file, line and column, pointer).
pub(crate) fn check(sources: &mut Sources) -> Vec<String> {
    let mut broken: Vec<(Place, String)> = Vec::new();
    let mut more = 0_usize;
    let mut walked = BTreeSet::new();
    let mut queue: Vec<PathBuf> = vec![sources.main.clone()];
    while let Some(file) = queue.pop() {
        if !walked.insert(file.clone()) {
            continue;
        }
        let Some(document) = sources.document_of(&file) else {
            continue;
        };
        let mut found = Vec::new();
        search(document, &mut String::new(), false, &mut found);
        for (pointer, reference) in found {
            if !followed(&reference) {
                continue;
            }
            let from = Place {
                file: file.clone(),
                pointer,
            };
            match sources.target(&reference, &from) {
                Ok(target) if !walked.contains(&target.file) => queue.push(target.file),
                Ok(_) => {}
                Err(problem) if broken.len() < SHOWN => broken.push((from, problem)),
                Err(_) => more += 1,
            }
        }
    }
    let places: Vec<Place> = broken.iter().map(|(place, _)| place.clone()).collect();
    sources.find_references(&places);
    let mut problems: Vec<String> = broken
        .into_iter()
        .map(|(place, problem)| format!("{}: {problem}", sources.show_reference(&place)))
        .collect();
    if more > 0 {
        problems.push(format!(
            "{more} more broken `$ref`s; fix those above and build again to see them"
        ));
    }
    problems
}

/// Collects the `(pointer, reference)` of every `$ref` under `value`, found at `pointer`;
/// `names` when `value` is a map keyed by names (whose keys are not keywords).
fn search(value: &Value, pointer: &mut String, names: bool, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if !names && let Some(Value::String(reference)) = map.get("$ref") {
                found.push((pointer.clone(), reference.clone()));
            }
            for (key, child) in map {
                let keyword = !names;
                if keyword && is_data(key, child) {
                    continue;
                }
                let length = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape(key));
                search(child, pointer, keyword && is_name_map(key), found);
                pointer.truncate(length);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let length = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                search(item, pointer, false, found);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}

/// A keyword whose value is data (an instance, an extension's value), never a reference.
fn is_data(keyword: &str, value: &Value) -> bool {
    keyword.starts_with("x-")
        || matches!(keyword, "example" | "default" | "const" | "enum" | "value")
        // A schema's `examples` is a list of instances; elsewhere a map of Example Objects.
        || (keyword == "examples" && value.is_array())
}

/// A keyword whose value is a map from names (a property, a status code, a media type, a
/// component) to objects.
fn is_name_map(keyword: &str) -> bool {
    matches!(
        keyword,
        "paths"
            | "webhooks"
            | "schemas"
            | "responses"
            | "parameters"
            | "examples"
            | "requestBodies"
            | "headers"
            | "securitySchemes"
            | "links"
            | "callbacks"
            | "pathItems"
            | "content"
            | "encoding"
            | "variables"
            | "properties"
            | "patternProperties"
            | "dependentSchemas"
            | "$defs"
            | "definitions"
    )
}

/// Whether `openapi!` follows `reference` to check it: a local file, a JSON pointer fragment.
fn followed(reference: &str) -> bool {
    let (file, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let scheme = file.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    !scheme && !file.starts_with("//") && (fragment.is_empty() || fragment.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{followed, search};

    fn references(value: &serde_json::Value) -> Vec<(String, String)> {
        let mut found = Vec::new();
        search(value, &mut String::new(), false, &mut found);
        found
    }

    #[test]
    fn data_is_not_searched_but_names_are() {
        let description = json!({
            "paths": {"/a": {"get": {"responses": {
                "default": {"$ref": "#/r"},
                "200": {"content": {"application/json": {
                    "schema": {"properties": {
                        "default": {"$ref": "#/p"},
                        "$ref": {"type": "string"},
                    }},
                    "example": {"$ref": "#/data"},
                    "examples": {"default": {"$ref": "#/e", "value": {"$ref": "#/data"}}},
                }}},
            }}}},
            "components": {"schemas": {"S": {
                "default": {"$ref": "#/data"},
                "enum": [{"$ref": "#/data"}],
                "examples": [{"$ref": "#/data"}],
                "x-vendor": {"$ref": "code.js"},
                "allOf": [{"$ref": "#/s"}],
            }}},
        });
        let mut found = references(&description);
        found.sort();
        let expected = [
            ("/components/schemas/S/allOf/0", "#/s"),
            (
                "/paths/~1a/get/responses/200/content/application~1json/examples/default",
                "#/e",
            ),
            (
                "/paths/~1a/get/responses/200/content/application~1json/schema/properties/default",
                "#/p",
            ),
            ("/paths/~1a/get/responses/default", "#/r"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn only_local_files_and_pointers_are_followed() {
        assert!(followed("#/components/schemas/Pet"));
        assert!(followed("pets.yaml"));
        assert!(followed("../common/pets.yaml#/Pet"));
        assert!(followed("#"));
        assert!(!followed("https://example.com/pets.yaml#/Pet"));
        assert!(!followed("//example.com/pets.yaml"));
        assert!(!followed("urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427"));
        assert!(!followed("#pet"));
    }
}
