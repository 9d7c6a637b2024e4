//! The description read into the operations `openapi!` generates, selected and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::Span;
use serde_json::{Map, Value};
use syn::LitStr;

use super::args::Args;
use super::names::{fallback_name, glob, portable, rust_ident, snake_case};
use super::references;
use super::schema::Converter;
use super::source::{Place, Sources};

/// One problem, spanned at `span` (else at the file's string).
pub(crate) struct Problem {
    pub(crate) span: Option<Span>,
    pub(crate) message: String,
}

impl From<String> for Problem {
    fn from(message: String) -> Self {
        Self {
            span: None,
            message,
        }
    }
}

/// The description, as the expansion needs it.
pub(crate) struct Model {
    /// The files read, for rebuild tracking.
    pub(crate) files: Vec<PathBuf>,
    /// `info.title` and `info.version`.
    pub(crate) title: String,
    pub(crate) version: String,
    /// The first server's URL, when it is absolute.
    pub(crate) default_base_url: Option<String>,
    /// The component schemas the operations refer to, as one JSON object.
    pub(crate) definitions: String,
    pub(crate) operations: Vec<Operation>,
}

/// One selected operation.
pub(crate) struct Operation {
    pub(crate) tool: String,
    pub(crate) function: String,
    /// The name of its `static` (upper snake case).
    pub(crate) constant: String,
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) operation_id: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) params: Vec<Param>,
    pub(crate) body: Option<Body>,
    pub(crate) input_schema: String,
    pub(crate) output_schema: Option<String>,
    pub(crate) wrap_output: bool,
    /// Registered as a tool (not named in `replace`).
    pub(crate) register: bool,
    /// Where it is, for messages.
    pub(crate) at: String,
}

/// The JSON type an argument's schema says.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    Any,
}

/// One argument of the generated function: a parameter or a piece of the body.
pub(crate) struct Argument {
    /// The argument's (and the API's) name.
    pub(crate) name: String,
    pub(crate) ident: String,
    pub(crate) kind: Kind,
    /// For an array, its items' kind.
    pub(crate) items: Kind,
    pub(crate) required: bool,
    /// What the description says of it, for the function's docs.
    pub(crate) doc: Option<String>,
}

pub(crate) struct Param {
    pub(crate) argument: Argument,
    pub(crate) location: &'static str,
    pub(crate) style: &'static str,
}

pub(crate) struct Body {
    pub(crate) content_type: String,
    pub(crate) encoding: &'static str,
    pub(crate) required: bool,
    /// `None`: the whole body is the argument `body`.
    pub(crate) properties: Option<Vec<String>>,
    pub(crate) property_required: Vec<String>,
    pub(crate) arguments: Vec<Argument>,
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Reads `path` and builds the model `args` selects.
pub(crate) fn read(args: &Args, path: &Path) -> Result<Model, Vec<Problem>> {
    let mut sources = Sources::open(path).map_err(|e| vec![Problem::from(e)])?;
    let document = sources.document().clone();
    let main = Place {
        file: sources.main.clone(),
        pointer: String::new(),
    };
    let version = match (document.get("openapi"), document.get("swagger")) {
        (Some(Value::String(v)), _) if v.starts_with("3.0.") || v == "3.0" => "3.0",
        (Some(Value::String(v)), _) if v.starts_with("3.1.") || v == "3.1" => "3.1",
        (Some(Value::String(v)), _) => {
            return Err(vec![Problem::from(format!(
                "{}: unsupported construct: OpenAPI {v}; `openapi!` reads 3.0 and 3.1",
                sources.show(&main.join("openapi"))
            ))]);
        }
        (_, Some(_)) => {
            return Err(vec![Problem::from(format!(
                "{}: unsupported construct: Swagger (OpenAPI 2.0); convert it to OpenAPI 3",
                sources.show(&main.join("swagger"))
            ))]);
        }
        _ => {
            return Err(vec![Problem::from(format!(
                "{}: not an OpenAPI description (no `openapi` version)",
                sources.show(&main)
            ))]);
        }
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    let title = text(document.pointer("/info/title"));
    let api_version = text(document.pointer("/info/version"));
    let default_base_url = document
        .pointer("/servers/0")
        .and_then(server_url)
        .filter(|url| url.starts_with("http://") || url.starts_with("https://"));

    if let Some(prefix) = &args.prefix
        && !prefix
            .value()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err(vec![Problem {
            span: Some(prefix.span()),
            message: format!(
                "the prefix `{}` has characters a tool name cannot (1-64 of `A-Z a-z 0-9 _ . -`)",
                prefix.value()
            ),
        }]);
    }
    // Every `$ref`, read by an operation or not; one the operations read again is not repeated.
    let broken_references = references::check(&mut sources);
    let mut problems: Vec<Problem> = broken_references
        .iter()
        .cloned()
        .map(Problem::from)
        .collect();
    let mut converter = Converter::new(&mut sources, version == "3.0");
    let mut operations = Vec::new();
    let mut seen = Seen::default();
    let empty = Map::new();
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (path, item) in paths {
        let item_place = main.join("paths").join(path);
        let (item_place, item) = if item.get("$ref").is_some() {
            match converter.sources.deref(item_place) {
                Ok(found) => found,
                Err(e) => {
                    if !broken_references.contains(&e) {
                        problems.push(Problem::from(e));
                    }
                    continue;
                }
            }
        } else {
            (item_place, item.clone())
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let place = item_place.join(method);
            let operation_id = operation.get("operationId").and_then(Value::as_str);
            let generated = match operation_id {
                Some(id) => snake_case(id),
                None => fallback_name(method, path),
            };
            let base = args
                .rename
                .iter()
                .find(|(from, _)| {
                    Some(from.value().as_str()) == operation_id || from.value() == generated
                })
                .map_or_else(|| generated.clone(), |(_, to)| to.value());
            let tags: Vec<&str> = operation
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            seen.note(&tags, path, operation_id, &generated);
            if !selected(args, &tags, path, operation_id, &generated) {
                continue;
            }
            let register = !args
                .replace
                .iter()
                .any(|r| Some(r.value().as_str()) == operation_id || r.value() == generated);
            let context = OperationContext {
                method,
                path,
                place: &place,
                item: &item,
                item_place: &item_place,
                operation,
            };
            match build(
                &mut converter,
                args,
                &context,
                operation_id,
                &base,
                register,
            ) {
                Ok(op) => operations.push(op),
                Err(e) if broken_references.contains(&e) => {}
                Err(e) => problems.push(Problem::from(e)),
            }
        }
    }
    match converter.finish() {
        Err(e) if !broken_references.contains(&e) => problems.push(Problem::from(e)),
        _ => {}
    }
    let definitions = Value::Object(converter.defs.clone().into_iter().collect()).to_string();
    drop(converter);
    problems.extend(check_filters(args, &seen));
    problems.extend(check_names(&operations));
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Model {
        files: sources.paths().cloned().collect(),
        title,
        version: api_version,
        default_base_url,
        definitions,
        operations,
    })
}

/// A server object's URL, its variables replaced by their defaults.
fn server_url(server: &Value) -> Option<String> {
    let mut url = server.get("url")?.as_str()?.to_owned();
    if let Some(Value::Object(variables)) = server.get("variables") {
        for (name, variable) in variables {
            let default = variable.get("default")?.as_str()?;
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    (!url.contains('{')).then_some(url)
}

/// What the whole description has, for checking that every filter matches something.
#[derive(Default)]
struct Seen {
    tags: Vec<String>,
    paths: Vec<String>,
    operations: Vec<String>,
}

impl Seen {
    fn note(&mut self, tags: &[&str], path: &str, id: Option<&str>, base: &str) {
        for tag in tags {
            if !self.tags.iter().any(|t| t == tag) {
                self.tags.push((*tag).to_owned());
            }
        }
        if !self.paths.iter().any(|p| p == path) {
            self.paths.push(path.to_owned());
        }
        self.operations.extend(id.map(str::to_owned));
        self.operations.push(base.to_owned());
    }
}

/// Whether `args` selects the operation: in some include list (or there are none), and in no
/// exclude list.
fn selected(args: &Args, tags: &[&str], path: &str, id: Option<&str>, base: &str) -> bool {
    let tag = |list: &[LitStr]| list.iter().any(|t| tags.contains(&t.value().as_str()));
    let path_in = |list: &[LitStr]| list.iter().any(|p| glob(&p.value(), path));
    let op = |list: &[LitStr]| {
        list.iter()
            .any(|o| Some(o.value().as_str()) == id || o.value() == base)
    };
    let any_include = !args.include_tags.is_empty()
        || !args.include_paths.is_empty()
        || !args.include_operations.is_empty();
    let included = !any_include
        || tag(&args.include_tags)
        || path_in(&args.include_paths)
        || op(&args.include_operations);
    included
        && !tag(&args.exclude_tags)
        && !path_in(&args.exclude_paths)
        && !op(&args.exclude_operations)
}

/// An entry of a filter that matches no operation is a mistake (a typo, a renamed tag).
fn check_filters(args: &Args, seen: &Seen) -> Vec<Problem> {
    let mut problems = Vec::new();
    let some = |items: &[String]| {
        let shown: Vec<String> = items.iter().take(12).map(|i| format!("`{i}`")).collect();
        let more = if items.len() > 12 { ", .." } else { "" };
        format!("{}{more}", shown.join(", "))
    };
    type Matches<'m> = &'m dyn Fn(&str) -> bool;
    let is_tag: Matches<'_> = &|t| seen.tags.iter().any(|s| s == t);
    let is_path: Matches<'_> = &|p| seen.paths.iter().any(|s| glob(p, s));
    let is_operation: Matches<'_> = &|o| seen.operations.iter().any(|s| s == o);
    // A `rename` pair names an operation by its first entry.
    let renamed: Vec<LitStr> = args.rename.iter().map(|(from, _)| from.clone()).collect();
    let lists: [(&str, &[LitStr], Matches<'_>, &[String]); 8] = [
        ("rename", &renamed, is_operation, &seen.operations),
        ("include_tags", &args.include_tags, is_tag, &seen.tags),
        ("exclude_tags", &args.exclude_tags, is_tag, &seen.tags),
        ("include_paths", &args.include_paths, is_path, &seen.paths),
        ("exclude_paths", &args.exclude_paths, is_path, &seen.paths),
        (
            "include_operations",
            &args.include_operations,
            is_operation,
            &seen.operations,
        ),
        (
            "exclude_operations",
            &args.exclude_operations,
            is_operation,
            &seen.operations,
        ),
        ("replace", &args.replace, is_operation, &seen.operations),
    ];
    for (key, list, matches, known) in lists {
        for entry in list {
            if !matches(&entry.value()) {
                problems.push(Problem {
                    span: Some(entry.span()),
                    message: format!(
                        "`{key}` entry `{}` matches no operation of the description; it has {}",
                        entry.value(),
                        some(known)
                    ),
                });
            }
        }
    }
    problems
}

/// Two operations may not give one tool name.
fn check_names(operations: &[Operation]) -> Vec<Problem> {
    let mut first: BTreeMap<&str, &Operation> = BTreeMap::new();
    let mut problems = Vec::new();
    for op in operations {
        if let Some(other) = first.get(op.tool.as_str()) {
            problems.push(Problem::from(format!(
                "{}: two operations give the tool name `{}`: `{} {}` and `{} {}`; rename one \
                 (`rename = [(\"{}\", \"other_name\")]`) or exclude it",
                op.at,
                op.tool,
                other.method,
                other.path,
                op.method,
                op.path,
                op.operation_id.as_deref().unwrap_or(&op.function),
            )));
        } else {
            first.insert(&op.tool, op);
        }
    }
    problems
}

struct OperationContext<'a> {
    method: &'a str,
    path: &'a str,
    place: &'a Place,
    item: &'a Value,
    item_place: &'a Place,
    operation: &'a Value,
}

/// One operation, modelled; the first problem found is its error.
fn build(
    converter: &mut Converter<'_>,
    args: &Args,
    context: &OperationContext<'_>,
    operation_id: Option<&str>,
    base: &str,
    register: bool,
) -> Result<Operation, String> {
    let prefix = args.prefix.as_ref().map(LitStr::value).unwrap_or_default();
    let tool = format!("{prefix}{base}");
    let at = converter.sources.show(context.place);
    if !portable(&tool) {
        return Err(format!(
            "{at}: the tool name `{tool}` is not 1-64 characters of `A-Z a-z 0-9 _ . -`; \
             rename the operation (`rename = [(\"{}\", \"shorter_name\")]`), exclude it, or \
             shorten the prefix",
            operation_id.unwrap_or(base)
        ));
    }
    let operation = context.operation;
    let mut description = match (
        operation
            .get("summary")
            .and_then(Value::as_str)
            .map(str::trim),
        operation
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim),
    ) {
        (Some(s), Some(d)) if !s.is_empty() && !d.is_empty() && !d.starts_with(s) => {
            Some(format!("{s}\n\n{d}"))
        }
        (_, Some(d)) if !d.is_empty() => Some(d.to_owned()),
        (Some(s), _) if !s.is_empty() => Some(s.to_owned()),
        _ => None,
    };
    if operation.get("deprecated") == Some(&Value::Bool(true)) {
        description = Some(format!("Deprecated. {}", description.unwrap_or_default()));
    }

    // Path-level parameters, unless the operation redefines them (by name and location).
    let mut found_params: Vec<((String, String), Place)> = Vec::new();
    for (list, place, level) in [
        (
            context.item.get("parameters"),
            context.item_place.join("parameters"),
            0,
        ),
        (
            operation.get("parameters"),
            context.place.join("parameters"),
            1,
        ),
    ] {
        let Some(Value::Array(list)) = list else {
            continue;
        };
        for i in 0..list.len() {
            let (found, value) = converter.sources.deref(place.join(&i.to_string()))?;
            let key = (text(&value, "name"), text(&value, "in"));
            match found_params.iter_mut().find(|(k, _)| *k == key) {
                // The operation's own definition of a path-level parameter wins.
                Some(slot) if level == 1 => slot.1 = found,
                Some(_) => {}
                None => found_params.push((key, found)),
            }
        }
    }
    // Path parameters first, then query, then header: the order of the function's arguments.
    let rank = |location: &str| match location {
        "path" => 0,
        "query" => 1,
        _ => 2,
    };
    found_params.sort_by_key(|((_, location), _)| rank(location));
    let raw_params: Vec<Place> = found_params.into_iter().map(|(_, place)| place).collect();
    let mut params = Vec::new();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for place in raw_params {
        let Some((param, schema)) = parameter(converter, &place)? else {
            continue;
        };
        let name = &param.argument.name;
        if properties.contains_key(name) {
            return Err(format!(
                "{}: two parameters give the argument `{name}`; exclude the operation and write \
                 its tool by hand",
                converter.sources.show(&place)
            ));
        }
        if param.argument.required {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), schema);
        params.push(param);
    }
    // A path variable the description forgot to declare is a required string all the same.
    for variable in path_variables(context.path) {
        let declared = params
            .iter()
            .any(|p: &Param| p.location == "Path" && p.argument.name == variable);
        if declared {
            continue;
        }
        if !portable(&variable) || properties.contains_key(&variable) {
            return Err(format!(
                "{at}: the path variable `{variable}` has no parameter, and cannot be an argument \
                 of its own; exclude the operation and write its tool by hand"
            ));
        }
        properties.insert(variable.clone(), serde_json::json!({"type": "string"}));
        required.push(Value::String(variable.clone()));
        params.insert(
            0,
            Param {
                argument: Argument {
                    ident: rust_ident(&variable),
                    name: variable,
                    kind: Kind::String,
                    items: Kind::Any,
                    required: true,
                    doc: None,
                },
                location: "Path",
                style: "Simple",
            },
        );
    }
    let body = match operation.get("requestBody") {
        Some(_) => Some(body(
            converter,
            &context.place.join("requestBody"),
            &mut properties,
            &mut required,
        )?),
        None => None,
    };
    let mut input = Map::new();
    input.insert("type".to_owned(), Value::from("object"));
    input.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".to_owned(), Value::Array(required));
    }
    input.insert("additionalProperties".to_owned(), Value::Bool(false));

    let (output_schema, wrap_output) = if args.output_schemas {
        output(converter, context.place)?
    } else {
        (None, false)
    };
    let mut function = rust_ident(base);
    let mut taken: Vec<String> = params.iter().map(|p| p.argument.ident.clone()).collect();
    if let Some(body) = &body {
        taken.extend(body.arguments.iter().map(|a| a.ident.clone()));
    }
    if taken.contains(&function) {
        function.push_str("_op");
    }
    Ok(Operation {
        // From the function's name: a renamed operation's may have `-` or `.`.
        constant: function.trim_start_matches("r#").to_ascii_uppercase(),
        tool,
        function,
        method: context.method.to_ascii_uppercase(),
        path: context.path.to_owned(),
        operation_id: operation_id.map(str::to_owned),
        description,
        params,
        body,
        input_schema: Value::Object(input).to_string(),
        output_schema: output_schema.map(|s| s.to_string()),
        wrap_output,
        register,
        at,
    })
}

/// The `{name}`s of a path template.
fn path_variables(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_owned()))
        .collect()
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// The kind of a raw (unconverted) schema, looking through `$ref`s; for an array, its items'.
fn kind_of(converter: &mut Converter<'_>, place: &Place) -> (Kind, Kind) {
    let Ok((place, schema)) = converter.sources.deref(place.clone()) else {
        return (Kind::Any, Kind::Any);
    };
    let kind = single_kind(&schema);
    let items = if kind == Kind::Array && schema.get("items").is_some() {
        converter
            .sources
            .deref(place.join("items"))
            .map(|(_, items)| single_kind(&items))
            .unwrap_or(Kind::Any)
    } else {
        Kind::Any
    };
    (kind, items)
}

fn single_kind(schema: &Value) -> Kind {
    let name = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            let named: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect();
            match named.as_slice() {
                [one] => *one,
                _ => return Kind::Any,
            }
        }
        _ => return Kind::Any,
    };
    match name {
        "string" => Kind::String,
        "integer" => Kind::Integer,
        "number" => Kind::Number,
        "boolean" => Kind::Boolean,
        "array" => Kind::Array,
        "object" => Kind::Object,
        _ => Kind::Any,
    }
}

/// Whether a media type is JSON (`application/json`, `*/*+json`).
fn is_json(media: &str) -> bool {
    let media = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media == "application/json" || media.ends_with("+json") || media == "*/*"
}

/// One parameter (its argument and its property schema), or `None` for a header OpenAPI says
/// to ignore.
fn parameter(
    converter: &mut Converter<'_>,
    place: &Place,
) -> Result<Option<(Param, Value)>, String> {
    let at = converter.sources.show(place);
    let value = converter
        .sources
        .get(place)
        .cloned()
        .ok_or_else(|| format!("{at} is missing"))?;
    let name = text(&value, "name");
    let location = text(&value, "in");
    let location = match location.as_str() {
        "path" => "Path",
        "query" => "Query",
        "header" => {
            if ["accept", "content-type", "authorization"]
                .contains(&name.to_ascii_lowercase().as_str())
            {
                return Ok(None);
            }
            "Header"
        }
        "cookie" => {
            return Err(format!(
                "{at}: unsupported construct: the cookie parameter `{name}`; exclude the \
                 operation or send the cookie with `Upstream::header(\"Cookie\", ..)`"
            ));
        }
        other => {
            return Err(format!(
                "{at}: a parameter `in: {other}`, which OpenAPI does not have"
            ));
        }
    };
    if !portable(&name) {
        return Err(format!(
            "{at}: the parameter `{name}` cannot be a tool argument: an argument name is 1-64 \
             characters of `A-Z a-z 0-9 _ . -`; exclude the operation and write its tool by hand"
        ));
    }
    let explode = value.get("explode").and_then(Value::as_bool);
    let style = value.get("style").and_then(Value::as_str);
    let (schema_place, json) = if value.get("schema").is_some_and(|s| !s.is_null()) {
        (place.join("schema"), false)
    } else if let Some(Value::Object(content)) = value.get("content") {
        match content.iter().next() {
            Some((media, _)) if is_json(media) => {
                (place.join("content").join(media).join("schema"), true)
            }
            Some((media, _)) => {
                return Err(format!(
                    "{at}: unsupported construct: the parameter `{name}` in `{media}`; only JSON \
                     parameter content is written"
                ));
            }
            None => {
                return Err(format!(
                    "{at}: the parameter `{name}` has an empty `content`"
                ));
            }
        }
    } else {
        return Err(format!(
            "{at}: the parameter `{name}` has neither `schema` nor `content`"
        ));
    };
    let style = match (json, location, style, explode) {
        (true, _, _, _) => "Json",
        (_, "Path" | "Header", None | Some("simple"), _) => "Simple",
        (_, "Query", None | Some("form"), None | Some(true)) => "FormExplode",
        (_, "Query", None | Some("form"), Some(false)) => "Form",
        (_, "Query", Some("spaceDelimited"), _) => "SpaceDelimited",
        (_, "Query", Some("pipeDelimited"), _) => "PipeDelimited",
        (_, "Query", Some("deepObject"), _) => "DeepObject",
        (_, _, style, _) => {
            return Err(format!(
                "{at}: unsupported construct: the parameter style `{}` in the {}",
                style.unwrap_or("simple"),
                location.to_ascii_lowercase()
            ));
        }
    };
    let mut schema = match converter.schema_at(&schema_place)? {
        Value::Object(schema) => schema,
        Value::Bool(_) => Map::new(),
        _ => Map::new(),
    };
    let (kind, items) = kind_of(converter, &schema_place);
    let doc = value
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(doc) = &doc {
        schema.insert("description".to_owned(), Value::from(doc.clone()));
    }
    if value.get("deprecated") == Some(&Value::Bool(true)) {
        schema.insert("deprecated".to_owned(), Value::Bool(true));
    }
    if let Some(example) = value.get("example") {
        schema.insert("examples".to_owned(), Value::Array(vec![example.clone()]));
    }
    let required = location == "Path" || value.get("required") == Some(&Value::Bool(true));
    Ok(Some((
        Param {
            argument: Argument {
                ident: rust_ident(&name),
                name,
                kind,
                items,
                required,
                doc,
            },
            location,
            style,
        },
        Value::Object(schema),
    )))
}

/// The request body: its arguments added to `properties` and `required`.
fn body(
    converter: &mut Converter<'_>,
    place: &Place,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Result<Body, String> {
    let (place, value) = converter.sources.deref(place.clone())?;
    let at = converter.sources.show(&place);
    let Some(Value::Object(content)) = value.get("content") else {
        return Err(format!("{at}: a request body without `content`"));
    };
    let media_of = |pick: &dyn Fn(&str) -> bool| content.keys().find(|m| pick(m)).cloned();
    let (media, encoding) = if let Some(media) = media_of(&|m| is_json(m)) {
        (media, "Json")
    } else if let Some(media) = media_of(&|m| m.starts_with("application/x-www-form-urlencoded")) {
        (media, "Form")
    } else if let Some(media) =
        media_of(&|m| m.starts_with("text/") || m.starts_with("application/octet-stream"))
    {
        (media, "Text")
    } else {
        let types: Vec<String> = content.keys().map(|k| format!("`{k}`")).collect();
        return Err(format!(
            "{at}: unsupported construct: a request body of {}; `openapi!` sends JSON, form and \
             text bodies (exclude the operation and write its tool by hand)",
            types.join(", ")
        ));
    };
    let body_required = value.get("required") == Some(&Value::Bool(true));
    let content_type = if media == "*/*" {
        "application/json".to_owned()
    } else {
        media.clone()
    };
    let schema_place = place.join("content").join(&media).join("schema");
    // `schema: null`, as some published descriptions say: no schema.
    let has_schema = converter
        .sources
        .get(&schema_place)
        .is_some_and(|s| !s.is_null());
    // An object whose properties can each be an argument is taken apart.
    if has_schema && encoding != "Text" {
        let (object_place, object) = converter.sources.deref(schema_place.clone())?;
        if let Some(names) = flattenable(&object, properties) {
            let needed: Vec<String> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let mut arguments = Vec::new();
            let mut idents: Vec<String> = Vec::new();
            for name in &names {
                let property_place = object_place.join("properties").join(name);
                let schema = converter.schema_at(&property_place)?;
                let (kind, items) = kind_of(converter, &property_place);
                let is_required = body_required && needed.contains(name);
                if is_required {
                    required.push(Value::String(name.clone()));
                }
                let doc = converter
                    .sources
                    .deref(property_place)
                    .ok()
                    .and_then(|(_, s)| {
                        s.get("description")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    });
                properties.insert(name.clone(), schema);
                let mut ident = rust_ident(name);
                while idents.contains(&ident) {
                    ident.push('_');
                }
                idents.push(ident.clone());
                arguments.push(Argument {
                    name: name.clone(),
                    ident,
                    kind,
                    items,
                    required: is_required,
                    doc,
                });
            }
            return Ok(Body {
                content_type,
                encoding,
                required: body_required,
                properties: Some(names),
                property_required: needed,
                arguments,
            });
        }
    }
    if properties.contains_key("body") {
        return Err(format!(
            "{at}: a parameter is named `body`, the argument the request body takes; exclude the \
             operation and write its tool by hand"
        ));
    }
    let mut schema = if has_schema {
        match converter.schema_at(&schema_place)? {
            Value::Object(schema) => schema,
            _ => Map::new(),
        }
    } else if encoding == "Text" {
        Map::from_iter([("type".to_owned(), Value::from("string"))])
    } else {
        Map::new()
    };
    let doc = value
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(doc) = &doc {
        schema.insert("description".to_owned(), Value::from(doc.clone()));
    }
    let (kind, items) = if has_schema {
        kind_of(converter, &schema_place)
    } else if encoding == "Text" {
        (Kind::String, Kind::Any)
    } else {
        (Kind::Any, Kind::Any)
    };
    if body_required {
        required.push(Value::from("body"));
    }
    properties.insert("body".to_owned(), Value::Object(schema));
    Ok(Body {
        content_type,
        encoding,
        required: body_required,
        properties: None,
        property_required: Vec::new(),
        arguments: vec![Argument {
            name: "body".to_owned(),
            ident: "body".to_owned(),
            kind,
            items,
            required: body_required,
            doc,
        }],
    })
}

/// The property names of a body schema that can be arguments of their own: a plain object
/// (no composition, no extra properties) whose every property name is portable and none taken
/// by a parameter.
fn flattenable(schema: &Value, taken: &Map<String, Value>) -> Option<Vec<String>> {
    let object = schema.as_object()?;
    let plain = object.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        "properties" | "required" | "description" | "title" | "example" | "examples" | "xml"
        | "externalDocs" | "deprecated" => true,
        "additionalProperties" => value == &Value::Bool(false),
        "nullable" => value == &Value::Bool(false),
        k => k.starts_with("x-"),
    });
    let properties = object.get("properties")?.as_object()?;
    if !plain || properties.is_empty() {
        return None;
    }
    // A `readOnly` property is the server's to set: never sent, so no argument.
    let names: Vec<String> = properties
        .iter()
        .filter(|(_, p)| p.get("readOnly") != Some(&Value::Bool(true)))
        .map(|(name, _)| name.clone())
        .collect();
    names
        .iter()
        .all(|n| portable(n) && !taken.contains_key(n))
        .then_some(names)
}

/// The output schema: the success responses' JSON schema, when every 2xx response has one.
fn output(converter: &mut Converter<'_>, place: &Place) -> Result<(Option<Value>, bool), String> {
    let responses_place = place.join("responses");
    let Some(Value::Object(responses)) = converter.sources.get(&responses_place).cloned() else {
        return Ok((None, false));
    };
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|code| code.starts_with('2'))
        .collect();
    codes.sort();
    let mut first = None;
    for code in codes {
        let (response_place, response) = converter.sources.deref(responses_place.join(code))?;
        let schema = response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|content| content.keys().find(|m| is_json(m)).cloned())
            .map(|media| response_place.join("content").join(&media).join("schema"))
            .filter(|p| converter.sources.get(p).is_some_and(|s| !s.is_null()));
        match schema {
            Some(schema) => {
                first.get_or_insert(schema);
            }
            None => return Ok((None, false)),
        }
    }
    let Some(schema_place) = first else {
        return Ok((None, false));
    };
    let schema = converter.schema_at(&schema_place)?;
    let (_, raw) = converter.sources.deref(schema_place)?;
    let object = raw.get("type") == Some(&Value::from("object"))
        && raw.get("nullable") != Some(&Value::Bool(true));
    if object {
        return Ok((Some(schema), false));
    }
    let wrapped = serde_json::json!({
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    });
    Ok((Some(wrapped), true))
}
