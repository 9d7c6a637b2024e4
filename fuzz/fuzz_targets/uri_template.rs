//! The URI-template matcher: parse an arbitrary template, match arbitrary URIs against it, and
//! expand what matched. Nothing may panic; a match must expand to a URI that matches again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::resource::UriTemplate;

fuzz_target!(|input: &str| {
    // The template, then URIs, one per line.
    let mut lines = input.split('\n');
    let Some(template) = lines.next() else {
        return;
    };
    let Ok(template) = UriTemplate::parse(template) else {
        return;
    };
    let _ = template.specificity();
    let _ = UriTemplate::indistinguishable(&template, &template);
    for uri in lines {
        if let Some(bindings) = template.match_uri(uri) {
            let expanded = template.expand(|name| bindings.get(name));
            let _ = template.match_uri(&expanded);
        }
    }
});
