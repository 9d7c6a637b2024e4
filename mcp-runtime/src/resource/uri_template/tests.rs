//! The URI templates' tests: the RFC's examples, matching back what expansion makes, the
//! tie-break among templates and the screening of escaping values.

use super::*;

fn t(text: &str) -> UriTemplate {
    UriTemplate::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn single(s: &str) -> Binding {
    Binding::Single(s.to_owned())
}

fn list(items: &[&str]) -> Binding {
    Binding::List(items.iter().map(|s| (*s).to_owned()).collect())
}

/// The bindings of `uri`, as `(name, binding)` pairs in template order.
fn bound(template: &str, uri: &str) -> Option<Vec<(String, Binding)>> {
    t(template).match_uri(uri).map(|b| b.0)
}

fn pairs(expected: &[(&str, Binding)]) -> Option<Vec<(String, Binding)>> {
    Some(
        expected
            .iter()
            .map(|(n, b)| ((*n).to_owned(), b.clone()))
            .collect(),
    )
}

/// The variables of RFC 6570 §1.2 and §3.2. `keys` (an associative array in the RFC) is
/// modelled as the flat list of its keys and values, which expands exactly as the RFC says
/// when it is not exploded; the RFC's `{keys*}` examples are left out.
fn rfc_values() -> HashMap<&'static str, Binding> {
    HashMap::from([
        ("var", single("value")),
        ("hello", single("Hello World!")),
        ("path", single("/foo/bar")),
        ("list", list(&["red", "green", "blue"])),
        ("keys", list(&["semi", ";", "dot", ".", "comma", ","])),
        ("empty", single("")),
        ("x", single("1024")),
        ("y", single("768")),
        ("half", single("50%")),
        ("base", single("http://example.com/home/")),
        ("empty_list", Binding::List(Vec::new())),
        ("undef", Binding::Absent),
    ])
}

fn expand_rfc(template: &str) -> String {
    let values = rfc_values();
    t(template).expand(|name| values.get(name))
}

#[test]
fn rfc_6570_level_1_and_2_examples_expand() {
    let cases = [
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{+var}", "value"),
        ("{+hello}", "Hello%20World!"),
        ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"),
        ("X{#var}", "X#value"),
        ("X{#hello}", "X#Hello%20World!"),
    ];
    for (template, expected) in cases {
        assert_eq!(expand_rfc(template), expected, "{template}");
    }
}

#[test]
fn rfc_6570_level_3_examples_expand() {
    let cases = [
        ("map?{x,y}", "map?1024,768"),
        ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"),
        ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{#x,hello,y}", "#1024,Hello%20World!,768"),
        ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("X{.var}", "X.value"),
        ("X{.x,y}", "X.1024.768"),
        ("{/var}", "/value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ];
    for (template, expected) in cases {
        assert_eq!(expand_rfc(template), expected, "{template}");
    }
}

#[test]
fn rfc_6570_level_4_examples_expand() {
    // `{/var:1,var}` repeats a variable, which templates here may not do.
    assert!(UriTemplate::parse("{/var:1,var}").is_err());
    let cases = [
        ("{var:3}", "val"),
        ("{var:30}", "value"),
        ("{list}", "red,green,blue"),
        ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"),
        ("{+path:6}/here", "/foo/b/here"),
        ("{+list}", "red,green,blue"),
        ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"),
        ("{#path:6}/here", "#/foo/b/here"),
        ("{#list}", "#red,green,blue"),
        ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"),
        ("X{.var:3}", "X.val"),
        ("X{.list}", "X.red,green,blue"),
        ("X{.list*}", "X.red.green.blue"),
        ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
        ("{/list}", "/red,green,blue"),
        ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
        ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{;hello:5}", ";hello=Hello"),
        ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"),
        ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{?var:3}", "?var=val"),
        ("{?list}", "?list=red,green,blue"),
        ("{?list*}", "?list=red&list=green&list=blue"),
        ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
        ("{&var:3}", "&var=val"),
        ("{&list}", "&list=red,green,blue"),
        ("{&list*}", "&list=red&list=green&list=blue"),
        ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ];
    for (template, expected) in cases {
        assert_eq!(expand_rfc(template), expected, "{template}");
    }
}

#[test]
fn rfc_6570_section_3_expansion_details() {
    let cases = [
        // Undefined variables and empty lists are skipped, with their prefix.
        ("{undef}", ""),
        ("{?undef,empty_list}", ""),
        ("{/undef}x", "x"),
        ("{x,undef,y}", "1024,768"),
        ("{?x,undef}", "?x=1024"),
        ("{;empty_list,x}", ";x=1024"),
        // Reserved expansion keeps existing triplets, encodes a lone `%`.
        ("{+half}", "50%25"),
        ("{half}", "50%25"),
        ("{+base}index", "http://example.com/home/index"),
        ("{base}", "http%3A%2F%2Fexample.com%2Fhome%2F"),
        ("{empty}", ""),
        ("X{.empty}", "X."),
        ("{/empty}", "/"),
    ];
    for (template, expected) in cases {
        assert_eq!(expand_rfc(template), expected, "{template}");
    }
    let encoded = single("%2F%zz");
    assert_eq!(t("{+v}").expand(|_| Some(&encoded)), "%2F%25zz");
    let unicode = single("café ☕");
    assert_eq!(t("{v}").expand(|_| Some(&unicode)), "caf%C3%A9%20%E2%98%95");
    assert_eq!(t("{v:4}").expand(|_| Some(&unicode)), "caf%C3%A9");
    assert_eq!(t("s://x{?v}").expand(|_| None), "s://x");
}

/// Expands `values` into `template`, matches the URI back, and expects the same values
/// (absent for those not given).
fn round_trip(template: &str, values: &[(&str, Binding)]) {
    let template = t(template);
    let map: HashMap<&str, &Binding> = values.iter().map(|(n, b)| (*n, b)).collect();
    let uri = template.expand(|name| map.get(name).copied());
    let bindings = template
        .match_uri(&uri)
        .unwrap_or_else(|| panic!("{template} does not match its expansion {uri:?}"));
    for name in template.variables() {
        let expected = map.get(name).copied().cloned().unwrap_or(Binding::Absent);
        assert_eq!(
            bindings.get(name),
            Some(&expected),
            "{template} -> {uri} -> `{name}`"
        );
    }
}

#[test]
fn expansions_match_back_to_their_values() {
    for id in [
        "42",
        "café",
        "a/b",
        "a b?c#d&e=f",
        "100%",
        "a,b",
        "..",
        "-._~!'()*",
        "日本語",
        "%41",
    ] {
        round_trip("notes://{id}", &[("id", single(id))]);
        round_trip("notes://{id}/raw", &[("id", single(id))]);
    }
    for path in ["docs/readme.md", "a b/c", "x:y@z/[v6]/$&+;=", "/abs", "é/ü"] {
        round_trip("files://{+path}", &[("path", single(path))]);
        round_trip("files://{+path}/meta", &[("path", single(path))]);
    }
    round_trip(
        "tree://root{/segments*}",
        &[("segments", list(&["a", "b c", "é", "x%y"]))],
    );
    round_trip("tree://root{/segments*}", &[]);
    round_trip(
        "tree://root{/segments*}{?depth}",
        &[("segments", list(&["a"])), ("depth", single("2"))],
    );
    round_trip(
        "search://items{?q,limit}",
        &[("q", single("rust lang & more=ok")), ("limit", single("3"))],
    );
    round_trip("search://items{?q,limit}", &[("limit", single("3"))]);
    round_trip("search://items{?q,limit}", &[]);
    round_trip("search://items{?q}", &[("q", single(""))]);
    round_trip(
        "search://items{?tag*}",
        &[("tag", list(&["a", "b,c", "d&e"]))],
    );
    round_trip(
        "search://items{?list}",
        &[("list", list(&["red", "green"]))],
    );
    round_trip(
        "search://items?fixed=1{&page,size}",
        &[("page", single("2"))],
    );
    round_trip("x://{a}.{b}", &[("a", single("one")), ("b", single("two"))]);
    round_trip(
        "x://{name}.{ext}",
        &[("name", single("archive.tar")), ("ext", single("gz"))],
    );
    round_trip("x://{a,b}", &[("a", single("1,2")), ("b", single("3"))]);
    round_trip("x://{list}", &[("list", list(&["red", "green", "blue"]))]);
    round_trip("x://{list*}", &[("list", list(&["red", "green"]))]);
    round_trip("x://{+list*}", &[("list", list(&["a/b", "c"]))]);
    round_trip("x://f{.ext}", &[("ext", single("txt"))]);
    round_trip("x://www{.dom*}", &[("dom", list(&["example", "com"]))]);
    round_trip("x://m{;v,w}", &[("v", single("3")), ("w", single(""))]);
    round_trip("x://m{;list*}", &[("list", list(&["a", "b"]))]);
    round_trip(
        "x://{/list*,path:4}",
        &[("list", list(&["red", "green"])), ("path", single("/foo"))],
    );
    round_trip(
        "x://{/a,b}/end",
        &[("a", single("1")), ("b", single("two words"))],
    );
    round_trip(
        "x://{page}{#section}",
        &[("page", single("intro")), ("section", single("part 2/x?y"))],
    );
    round_trip(
        "x://{page}{?q}{#section}",
        &[
            ("page", single("intro")),
            ("q", single("1")),
            ("section", single("s")),
        ],
    );
    round_trip("x://{id:3}", &[("id", single("abc"))]);
    round_trip(
        "x://{a}/{+b}{?c,d}",
        &[
            ("a", single("é x")),
            ("b", single("p/q r")),
            ("c", single("1")),
        ],
    );
}

#[test]
fn values_are_percent_decoded() {
    assert_eq!(
        bound("notes://{id}", "notes://caf%C3%A9"),
        pairs(&[("id", single("café"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://caf%c3%a9"),
        pairs(&[("id", single("café"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://café"),
        pairs(&[("id", single("café"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://a%2Fb"),
        pairs(&[("id", single("a/b"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://%34%32"),
        pairs(&[("id", single("42"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://a%2Cb"),
        pairs(&[("id", single("a,b"))])
    );
    assert_eq!(
        bound("notes://{id}", "notes://a,b%2Cc"),
        pairs(&[("id", list(&["a", "b,c"]))])
    );
    assert_eq!(
        bound("files://{+path}", "files://%2e%2e/x"),
        pairs(&[("path", single("../x"))])
    );
    assert_eq!(
        bound("s://x{?q}", "s://x?q=a%20b+c"),
        pairs(&[("q", single("a b+c"))])
    );
    // Invalid UTF-8 after decoding, or a broken triplet: no match.
    assert_eq!(bound("notes://{id}", "notes://%ff"), None);
    assert_eq!(bound("notes://{id}", "notes://%C3"), None);
    assert_eq!(bound("notes://{id}", "notes://a%zz"), None);
    assert_eq!(bound("notes://{id}", "notes://a%2"), None);
    assert_eq!(bound("files://{+path}", "files://a%"), None);
    assert_eq!(bound("s://x{?q}", "s://x?q=%E9"), None);
    assert_eq!(bound("s://x{?q}", "s://x?q=%zz"), None);
}

#[test]
fn uris_that_do_not_match() {
    let no = [
        ("notes://{id}", "notes://"),
        ("notes://{id}", "notes://a/b"),
        ("notes://{id}", "notes://42?x=1"),
        ("notes://{id}", "notes://42#top"),
        ("notes://{id}", "NOTES://42"),
        ("notes://{id}", "other://42"),
        ("notes://{id}", "notes://a:b"),
        ("notes://{id}", "notes://a b"),
        ("notes://{id}", "notes://a=b"),
        ("notes://{id}/raw", "notes://42/RAW"),
        ("notes://{id}/raw", "notes://42/raw/"),
        ("notes://{id}.json", "notes://.json"),
        ("files://{+path}", "files://"),
        ("files://{+path}", "files://a?b"),
        ("files://{+path}", "files://a#b"),
        ("tree://root{/segments*}", "tree://root/"),
        ("tree://root{/segments*}", "tree://root/a//b"),
        ("tree://root{/segments*}", "tree://rootx"),
        ("x://{a,b}", "x://1"),
        ("x://{a,b}", "x://1,2,3"),
        ("x://{a,b}", "x://1,"),
        ("x://{list}", "x://a,,b"),
        ("x://{id:3}", "x://abcd"),
        ("x://f{.ext}", "x://f.tar.gz"),
        ("x://f{.ext}", "x://f"),
        ("x://m{;v}", "x://m;w=3"),
        ("x://m{;v}", "x://m;vv=3"),
        ("x://m{;v}", "x://m"),
        ("x://{/a}", "x://"),
        // Only query and exploded variables may be left out.
        ("x://{page}{#section}", "x://intro"),
        ("x://{a}2F", "x://b%2F"),
        ("test://static", "test://static/"),
        ("test://static", "test://Static"),
    ];
    for (template, uri) in no {
        assert_eq!(
            bound(template, uri),
            None,
            "{template} should not match {uri}"
        );
    }
}

#[test]
fn uris_match_their_variables() {
    let yes = [
        ("notes://{id}", "notes://-1", vec![("id", single("-1"))]),
        (
            "notes://{id}.json",
            "notes://a.json.json",
            vec![("id", single("a.json"))],
        ),
        (
            "x://{name}.{ext}",
            "x://archive.tar.gz",
            vec![("name", single("archive.tar")), ("ext", single("gz"))],
        ),
        (
            "test://template/{id}/data",
            "test://template/123/data",
            vec![("id", single("123"))],
        ),
        (
            "files://{+path}",
            "files://a/b/c.txt",
            vec![("path", single("a/b/c.txt"))],
        ),
        (
            "files://{+path}/meta",
            "files://a/meta/b/meta",
            vec![("path", single("a/meta/b"))],
        ),
        (
            "tree://root{/segments*}",
            "tree://root/a/b",
            vec![("segments", list(&["a", "b"]))],
        ),
        (
            "tree://root{/segments*}",
            "tree://root",
            vec![("segments", Binding::Absent)],
        ),
        (
            "x:{/list*}{/last}",
            "x:/a/b/c",
            vec![("list", list(&["a", "b"])), ("last", single("c"))],
        ),
        (
            "x:{/list*,path:4}",
            "x:/red/green/%2Ffoo",
            vec![("list", list(&["red", "green"])), ("path", single("/foo"))],
        ),
        ("x://{a}2F", "x://b%2F2F", vec![("a", single("b/"))]),
        (
            "x://{ids}",
            "x://1,2,3",
            vec![("ids", list(&["1", "2", "3"]))],
        ),
        (
            "x://{ids*}",
            "x://1,2,3",
            vec![("ids", list(&["1", "2", "3"]))],
        ),
        ("x://{ids*}", "x://", vec![("ids", Binding::Absent)]),
        ("x://m{;v}", "x://m;v", vec![("v", single(""))]),
        (
            "x://m{;v,w}",
            "x://m;v=1;w=2",
            vec![("v", single("1")), ("w", single("2"))],
        ),
        (
            "x://m{;v*}",
            "x://m;v=1;v=2",
            vec![("v", list(&["1", "2"]))],
        ),
        (
            "x://{page}{#section}",
            "x://intro#part-2",
            vec![("page", single("intro")), ("section", single("part-2"))],
        ),
        (
            "x://p{#a,b}",
            "x://p#1,2",
            vec![("a", single("1")), ("b", single("2"))],
        ),
        (
            "x://{word}",
            "x://Hello%20World!",
            vec![("word", single("Hello World!"))],
        ),
        ("test://static", "test://static", vec![]),
    ];
    for (template, uri, expected) in yes {
        assert_eq!(
            bound(template, uri),
            pairs(&expected),
            "{template} on {uri}"
        );
    }
}

#[test]
fn queries_bind_in_any_order() {
    let template = "search://items{?q,limit}";
    let both = pairs(&[("q", single("a b")), ("limit", single("3"))]);
    assert_eq!(bound(template, "search://items?q=a%20b&limit=3"), both);
    assert_eq!(bound(template, "search://items?limit=3&q=a%20b"), both);
    assert_eq!(
        bound(template, "search://items?limit=3"),
        pairs(&[("q", Binding::Absent), ("limit", single("3"))])
    );
    let none = pairs(&[("q", Binding::Absent), ("limit", Binding::Absent)]);
    assert_eq!(bound(template, "search://items"), none);
    assert_eq!(bound(template, "search://items?"), none);
    assert_eq!(
        bound(template, "search://items?q"),
        pairs(&[("q", single("")), ("limit", Binding::Absent)])
    );
    assert_eq!(
        bound(template, "search://items?q=&&limit=3&"),
        pairs(&[("q", single("")), ("limit", single("3"))])
    );
    assert_eq!(
        bound(template, "search://items?q=a/b:c?d"),
        pairs(&[("q", single("a/b:c?d")), ("limit", Binding::Absent)])
    );
    // Unknown or repeated parameters: no match.
    assert_eq!(bound(template, "search://items?other=1"), None);
    assert_eq!(bound(template, "search://items?q=1&other=1"), None);
    assert_eq!(bound(template, "search://items?q=1&q=2"), None);
    assert_eq!(bound(template, "search://items?Q=1"), None);
    assert_eq!(bound(template, "search://items?q=a b"), None);
    assert_eq!(bound(template, "search://items/?q=1"), None);
    // Exploded variables collect every occurrence.
    assert_eq!(
        bound("s://x{?tag*}", "s://x?tag=a&tag=b"),
        pairs(&[("tag", list(&["a", "b"]))])
    );
    assert_eq!(
        bound("s://x{?tag*,q}", "s://x?tag=a&q=1&tag=b"),
        pairs(&[("tag", list(&["a", "b"])), ("q", single("1"))])
    );
    // `{&...}` right after `{?...}` reads the same query string.
    assert_eq!(
        bound("s://x{?a}{&b}", "s://x?b=2&a=1"),
        pairs(&[("a", single("1")), ("b", single("2"))])
    );
    // `{&...}` alone continues a query written in the literal, whose order is fixed.
    let fixed = "s://x?fixed=yes{&a,b}";
    assert_eq!(
        bound(fixed, "s://x?fixed=yes&b=2&a=1"),
        pairs(&[("a", single("1")), ("b", single("2"))])
    );
    assert_eq!(
        bound(fixed, "s://x?fixed=yes"),
        pairs(&[("a", Binding::Absent), ("b", Binding::Absent)])
    );
    assert_eq!(bound(fixed, "s://x?a=1&fixed=yes"), None);
    // A fragment after the query.
    assert_eq!(
        bound("s://x{?q}{#f}", "s://x?q=1#top"),
        pairs(&[("q", single("1")), ("f", single("top"))])
    );
    assert_eq!(
        bound("s://x{?q}{#f}", "s://x#top"),
        pairs(&[("q", Binding::Absent), ("f", single("top"))])
    );
    assert_eq!(bound("s://x{?q}", "s://x?q=1#top"), None);
}

#[test]
fn escapes_are_screened() {
    for (value, reason) in [
        (
            "../etc/passwd",
            Some("it climbs out of its directory with `..`"),
        ),
        (
            "a/../../b",
            Some("it climbs out of its directory with `..`"),
        ),
        ("..", Some("it climbs out of its directory with `..`")),
        ("a/../..", Some("it climbs out of its directory with `..`")),
        (
            "a/./../../x",
            Some("it climbs out of its directory with `..`"),
        ),
        (
            "a\\..\\..\\b",
            Some("it climbs out of its directory with `..`"),
        ),
        ("a/..", None),
        ("a/../b", None),
        ("a\\..\\b", None),
        ("a//../b", None),
        ("/abs", Some("it is an absolute path")),
        ("\\\\server\\share", Some("it is an absolute path")),
        ("C:\\x", Some("it starts with a Windows drive")),
        ("c:", Some("it starts with a Windows drive")),
        ("a\0b", Some("it contains a NUL character")),
        ("docs/readme.md", None),
        ("a..b/c", None),
        ("./x", None),
        (".hidden/...", None),
        ("12:30", None),
        ("", None),
    ] {
        assert_eq!(escapes(value), reason, "{value:?}");
    }
}

#[test]
fn escaping_values_are_found_after_decoding() {
    let files = t("files://{+path}");
    let escaping = |template: &UriTemplate, uri: &str| {
        let bindings = template.match_uri(uri).unwrap_or_else(|| panic!("{uri}"));
        template
            .escaping_variable(&bindings)
            .map(|(name, reason)| (name.to_owned(), reason))
    };
    for uri in [
        "files://../etc/passwd",
        "files://a/../../b",
        "files://%2e%2e/x",
        "files://.%2E/x",
        "files:///abs",
        "files://C:%5Cx",
        "files://a%00b",
    ] {
        assert_eq!(
            escaping(&files, uri).map(|(name, _)| name),
            Some("path".to_owned()),
            "{uri}"
        );
    }
    assert_eq!(escaping(&files, "files://docs/readme.md"), None);
    assert_eq!(escaping(&files, "files://a..b/c"), None);
    // Every variable is screened: `%2F` makes a `{v}` value a path.
    let notes = t("notes://{id}");
    assert_eq!(
        escaping(&notes, "notes://..%2F..%2Fetc"),
        Some(("id".to_owned(), "it climbs out of its directory with `..`"))
    );
    assert_eq!(escaping(&notes, "notes://42"), None);
    let tree = t("tree://root{/segments*}");
    assert_eq!(
        escaping(&tree, "tree://root/a/%2E%2E/b"),
        Some((
            "segments".to_owned(),
            "it climbs out of its directory with `..`"
        ))
    );
    assert_eq!(escaping(&tree, "tree://root"), None);
}

#[test]
fn indistinguishable_templates_differ_only_in_names() {
    let same = [
        ("notes://{id}", "notes://{name}"),
        ("notes://{id}", "notes://{id}"),
        ("x://{a}/{+b}", "x://{c}/{+d}"),
        ("x://{/a*}", "x://{/b*}"),
        ("x://{a:3}", "x://{b:3}"),
        ("s://x{?a,b}", "s://x{?b,a}"),
        ("s://x{?a}{&b}", "s://x{?a,b}"),
        ("x://m{;v}", "x://m{;v}"),
    ];
    for (a, b) in same {
        assert!(UriTemplate::indistinguishable(&t(a), &t(b)), "{a} and {b}");
        assert!(UriTemplate::indistinguishable(&t(b), &t(a)), "{b} and {a}");
    }
    let different = [
        ("notes://{id}", "notes://{+id}"),
        ("notes://{id}", "notes://x{id}"),
        ("notes://{id}", "notes://{id*}"),
        ("notes://{id}", "notes://{id:3}"),
        ("notes://{id}", "notes://{a,b}"),
        ("notes://{id}", "notes://{id}/"),
        ("notes://{id}", "notes://{/id}"),
        ("s://x{?a}", "s://x{?b}"),
        ("s://x{?a}", "s://x{?a*}"),
        ("s://x{?a}", "s://x{?a,b}"),
        ("x://m{;v}", "x://m{;w}"),
        ("x://?q=1{&a}", "x://?q=1{?a}"),
    ];
    for (a, b) in different {
        assert!(!UriTemplate::indistinguishable(&t(a), &t(b)), "{a} and {b}");
        assert!(!UriTemplate::indistinguishable(&t(b), &t(a)), "{b} and {a}");
    }
}

#[test]
fn the_most_specific_template_sorts_first() {
    let mut templates = [
        t("x://{rest*}"),
        t("x://{+rest}"),
        t("x://{b}/{a}"),
        t("x://{a}/{b}"),
        t("x://users/{id}{?q}"),
        t("x://users/{id}"),
        t("x://users/me"),
    ];
    templates.sort_by_key(UriTemplate::specificity);
    let order: Vec<&str> = templates.iter().map(UriTemplate::as_str).collect();
    assert_eq!(
        order,
        [
            "x://users/me",
            "x://users/{id}",
            "x://users/{id}{?q}",
            "x://{a}/{b}",
            "x://{b}/{a}",
            "x://{+rest}",
            "x://{rest*}"
        ]
    );
    // A registry reads a URI with the first template that matches.
    let first = |uri: &str| {
        templates
            .iter()
            .find(|t| t.match_uri(uri).is_some())
            .map(UriTemplate::as_str)
    };
    assert_eq!(first("x://users/me"), Some("x://users/me"));
    assert_eq!(first("x://users/7"), Some("x://users/{id}"));
    assert_eq!(first("x://users/7?q=1"), Some("x://users/{id}{?q}"));
    assert_eq!(first("x://a/b"), Some("x://{a}/{b}"));
    assert_eq!(first("x://a/b/c"), Some("x://{+rest}"));
    assert_eq!(first("x://a,b"), Some("x://{+rest}"));
    assert_eq!(first("x://a?b"), None);
}

#[test]
fn parse_errors_keep_message_and_span() {
    let error = UriTemplate::parse("notes://{id").unwrap_err();
    assert_eq!(
        error,
        TemplateError {
            message: "unclosed expression `{id`: add `}`".to_owned(),
            span: 8..11
        }
    );
    assert_eq!(error.to_string(), "unclosed expression `{id`: add `}`");
    let error = UriTemplate::parse("x://{a}/{a}").unwrap_err();
    assert_eq!(error.span, 9..10);
}

#[test]
fn accessors() {
    let template = t("search://items{?q,limit}{&page}");
    assert_eq!(template.as_str(), "search://items{?q,limit}{&page}");
    assert_eq!(template.to_string(), template.as_str());
    assert_eq!(
        format!("{template:?}"),
        "UriTemplate(\"search://items{?q,limit}{&page}\")"
    );
    assert_eq!(
        template.variables().collect::<Vec<_>>(),
        ["q", "limit", "page"]
    );
    assert!(!template.is_static());
    assert!(t("test://static").is_static());
    let bindings = template.match_uri("search://items?page=2").unwrap();
    assert_eq!(
        bindings.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        ["q", "limit", "page"]
    );
    assert_eq!(bindings.get("page"), Some(&single("2")));
    assert_eq!(bindings.get("nope"), None);
    let map = bindings.into_map();
    assert_eq!(map.len(), 3);
    assert_eq!(map["q"], Binding::Absent);
}

/// Every short string over an alphabet of awkward characters, against templates of every
/// operator: matching never panics, and what matches expands back to a URI that matches
/// with the same bindings.
#[test]
fn matching_never_panics_and_matches_are_stable() {
    let alphabet = [
        "a", "/", "%", "2", "F", ".", "?", "=", "&", "#", "é", ",", ";", "e",
    ];
    let templates = [
        t("{v}"),
        t("{+v}"),
        t("{#v}"),
        t("a{.v}"),
        t("{/v*}"),
        t("{;v,w}"),
        t("{?v,w*}"),
        t("a{&v}"),
        t("{v}.{w}"),
        t("{/a*}{/b}"),
        t("{v:2}{?w}{#x}"),
    ];
    let mut uris = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..4 {
        frontier = frontier
            .iter()
            .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
            .collect();
        uris.extend(frontier.iter().cloned());
    }
    let mut matched = 0;
    for template in &templates {
        for uri in &uris {
            let Some(bindings) = template.match_uri(uri) else {
                continue;
            };
            matched += 1;
            let again = template.expand(|name| bindings.get(name));
            assert_eq!(
                template.match_uri(&again).as_ref(),
                Some(&bindings),
                "{template}: {uri} -> {again}"
            );
        }
    }
    assert!(matched > 1000, "{matched}");
}
