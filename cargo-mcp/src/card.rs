//! `cargo mcp card`: the MCP Registry `server.json` and the Server Card (SEP-2127) of the crate's
//! server, from what the server says about itself (`serverInfo` in `initialize`, the revisions
//! of `server/discover`) and the package's manifest (description, homepage and repository where
//! the server says none).
//!
//! The card is built by `mcp_runtime::ServerCard`, the same code that serves it over HTTP
//! (`Server::server_card`), so the file and the route cannot disagree. Both documents are valid
//! by construction: `ServerCard` checks the name, description, title, version and remotes, and
//! [`check_documents`] what else comes from the server or the command line (the website, icon
//! sources, the OCI image), each against the constraint its published JSON schema sets. The
//! tests validate what is written against those schemas (vendored in `schemas/`); the
//! validator is a test dependency, not part of the installed tool, whose build it would
//! lengthen by a third.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use mcp_runtime::ServerCard;
use mcp_runtime::protocol::Implementation;
use serde_json::{Map, Value, json};

use crate::cli::CardArgs;
use crate::connect::Connection;
use crate::project::Project;

/// `$schema` of the `server.json` written (the vendored schema's `$id`).
const SERVER_JSON_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's `server.json` schema (see `schemas/README.md`).
#[cfg(test)]
pub(crate) const REGISTRY_SCHEMA: &str = include_str!("../schemas/registry/server.schema.json");

/// The Server Card extension's schema (see `schemas/README.md`).
#[cfg(test)]
pub(crate) const CARD_SCHEMA: &str = include_str!("../schemas/server-card/schema.json");

/// What the server says about itself.
struct Described {
    info: Implementation,
    versions: Vec<String>,
}

pub(crate) fn run(args: &CardArgs) -> anyhow::Result<ExitCode> {
    let project = Project::find(&args.target)?;
    let binary = project.build(&args.target, "dev")?.executable;
    let described = describe(&binary, &args.target.server_args, args.timeout)?;
    let mut info = described.info;
    info.description = Some(description(
        info.description.as_deref(),
        project.description.as_deref(),
    )?);
    if info.website_url.is_none() {
        info.website_url.clone_from(&project.homepage);
    }
    let repository = project.repository.as_deref().and_then(forge);
    let name = match (&args.name, &repository) {
        (Some(name), _) => name.clone(),
        (None, Some(forge)) => format!("io.{}.{}/{}", forge.source, forge.owner, project.package),
        (None, None) => bail!(
            "name the server in reverse-DNS form with `--name` (`com.example/weather`): the \
             package has no GitHub or GitLab `repository` to derive `io.github.<owner>/{}` from",
            project.package
        ),
    };
    let mut card = ServerCard::new(&name);
    for url in &args.urls {
        card = card.remote(url);
    }
    if let Some(forge) = &repository {
        card = card.repository(forge.source, &forge.url);
    }
    let versions: Vec<&str> = described.versions.iter().map(String::as_str).collect();
    let card_json = card.to_json(&info, &versions).map_err(|problems| {
        anyhow::anyhow!(
            "the Server Card would be invalid:\n  {}",
            problems.join("\n  ")
        )
    })?;
    let server_json = server_json(&card_json, args.oci.as_deref());
    let invalid = check_documents(&server_json);
    if !invalid.is_empty() {
        bail!(
            "not written: the documents would break their published schemas:\n  {}",
            invalid.join("\n  ")
        );
    }
    let out = args.out.clone().unwrap_or(project.package_dir);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    for (file, document) in [
        ("server.json", &server_json),
        ("server-card.json", &card_json),
    ] {
        let path = out.join(file);
        let mut text = serde_json::to_string_pretty(document)?;
        text.push('\n');
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    println!(
        "`{name}` {} (both in the form of their published schemas)",
        info.version
    );
    Ok(ExitCode::SUCCESS)
}

/// The card's description: the server's own (`Server::description`), else the package's
/// (`description` in Cargo.toml), 1 to 100 characters; or what to set, naming both routes.
fn description(server: Option<&str>, package: Option<&str>) -> anyhow::Result<String> {
    const ROUTES: &str = "set `Server::description(\"...\")` where the server is built, or \
                          `description = \"...\"` under `[package]` in Cargo.toml";
    let (text, from) = match (server, package) {
        (Some(text), _) if !text.trim().is_empty() => (text, "the server's `Server::description`"),
        (_, Some(text)) if !text.trim().is_empty() => (text, "the package's `description`"),
        _ => bail!(
            "a Server Card needs a description of 1 to 100 characters, and the server and its \
             package give none: {ROUTES}"
        ),
    };
    let length = text.chars().count();
    if length > 100 {
        bail!(
            "{from} is {length} characters; a Server Card allows at most 100: shorten it, or \
             {ROUTES} (the server's is used first)"
        );
    }
    Ok(text.to_owned())
}

/// Starts the server over stdio and asks who it is.
fn describe(binary: &Path, args: &[String], timeout: u64) -> anyhow::Result<Described> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let connection =
            Connection::stdio(binary, args, Duration::from_secs(timeout.max(1))).await?;
        let init = connection.initialize_result();
        let info: Implementation = serde_json::from_value(init["serverInfo"].clone())
            .context("the server's `serverInfo` is not an Implementation")?;
        // The revisions the server speaks: what `server/discover` listed when it speaks
        // 2026-07-28, else the one `initialize` negotiated.
        let mut versions: Vec<String> = init["supportedVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        if versions.is_empty()
            && let Some(version) = init["protocolVersion"].as_str()
        {
            versions.push(version.to_owned());
        }
        versions.sort();
        connection.close().await;
        Ok(Described { info, versions })
    })
}

/// A GitHub or GitLab repository.
#[derive(Debug, PartialEq)]
struct Forge {
    source: &'static str,
    owner: String,
    url: String,
}

/// `https://github.com/OWNER/REPO[.git]` (or gitlab.com) as a forge and owner.
fn forge(repository: &str) -> Option<Forge> {
    let rest = repository
        .strip_prefix("https://")
        .or_else(|| repository.strip_prefix("http://"))?;
    let (host, path) = rest.split_once('/')?;
    let source = match host.to_ascii_lowercase().as_str() {
        "github.com" | "www.github.com" => "github",
        "gitlab.com" | "www.gitlab.com" => "gitlab",
        _ => return None,
    };
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let owner = segments.next()?;
    let repo = segments.next()?.trim_end_matches(".git");
    let valid = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    };
    if !valid(owner) || !valid(repo) {
        return None;
    }
    Some(Forge {
        source,
        owner: owner.to_owned(),
        url: format!("https://{host}/{owner}/{repo}"),
    })
}

/// The registry's `server.json` for the server the card describes, with an OCI package when
/// one is named.
fn server_json(card: &Value, oci: Option<&str>) -> Value {
    let mut server = Map::new();
    server.insert("$schema".into(), json!(SERVER_JSON_SCHEMA));
    for key in [
        "name",
        "description",
        "title",
        "version",
        "websiteUrl",
        "repository",
        "icons",
    ] {
        if let Some(value) = card.get(key) {
            server.insert(key.into(), value.clone());
        }
    }
    if let Some(remotes) = card.get("remotes").and_then(Value::as_array) {
        let remotes: Vec<Value> = remotes
            .iter()
            .map(|r| json!({"type": r["type"], "url": r["url"]}))
            .collect();
        server.insert("remotes".into(), Value::Array(remotes));
    }
    if let Some(image) = oci {
        server.insert(
            "packages".into(),
            json!([{"registryType": "oci", "identifier": image, "transport": {"type": "stdio"}}]),
        );
    }
    Value::Object(server)
}

/// What of `server.json` (a superset of the card's fields) `ServerCard` does not check, against
/// the published schemas' constraints: `websiteUrl` and icon sources are URIs (`format: uri`),
/// an OCI identifier is 1 to 255 characters without spaces.
fn check_documents(server: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let uri = |text: &str| {
        let scheme_end = text.find(':').unwrap_or(0);
        scheme_end > 0
            && text.get(..scheme_end).is_some_and(|scheme| {
                scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            })
            && !text.chars().any(char::is_whitespace)
    };
    if let Some(website) = server.get("websiteUrl").and_then(Value::as_str)
        && !(uri(website) && (website.starts_with("http://") || website.starts_with("https://")))
    {
        problems.push(format!(
            "`websiteUrl` `{website}` is not an http:// or https:// URL (the server's \
             `Server::website_url`, else the package's `homepage`)"
        ));
    }
    for icon in server
        .get("icons")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let src = icon.get("src").and_then(Value::as_str).unwrap_or("");
        if !uri(src) {
            problems.push(format!("the icon `{src}` is not a URI"));
        }
    }
    for package in server
        .get("packages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let identifier = package
            .get("identifier")
            .and_then(Value::as_str)
            .unwrap_or("");
        if identifier.is_empty()
            || identifier.chars().count() > 255
            || identifier.chars().any(char::is_whitespace)
        {
            problems.push(format!(
                "`--oci {identifier}` must be 1 to 255 characters without spaces"
            ));
        }
    }
    problems
}

/// Every way `document` breaks `schema` (at `pointer` within it), formats included.
#[cfg(test)]
pub(crate) fn validate(schema: &str, pointer: Option<&str>, document: &Value) -> Vec<String> {
    let mut schema: Value = match serde_json::from_str(schema) {
        Ok(schema) => schema,
        Err(error) => return vec![format!("the vendored schema does not parse: {error}")],
    };
    if let (Some(pointer), Value::Object(root)) = (pointer, &mut schema) {
        root.insert("$ref".into(), json!(pointer));
    }
    let validator = match jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
    {
        Ok(validator) => validator,
        Err(error) => return vec![format!("the vendored schema does not compile: {error}")],
    };
    validator
        .iter_errors(document)
        .map(|error| format!("{} at `{}`", error, error.instance_path()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_and_gitlab_repositories_name_the_namespace() {
        assert_eq!(
            forge("https://github.com/someone/weather.git"),
            Some(Forge {
                source: "github",
                owner: "someone".into(),
                url: "https://github.com/someone/weather".into()
            })
        );
        assert_eq!(
            forge("https://gitlab.com/team/w/").unwrap().source,
            "gitlab"
        );
        assert_eq!(forge("https://example.com/a/b"), None);
        assert_eq!(forge("https://github.com/only-owner"), None);
        assert_eq!(forge("git@github.com:a/b"), None);
    }

    #[test]
    fn a_missing_description_names_both_places_to_set_it() {
        let missing = description(None, None).unwrap_err().to_string();
        assert!(missing.contains("`Server::description("), "{missing}");
        assert!(
            missing.contains("`description = \"...\"` under `[package]` in Cargo.toml"),
            "{missing}"
        );
        assert_eq!(
            description(None, Some("From the manifest.")).unwrap(),
            "From the manifest."
        );
        assert_eq!(
            description(Some("From the server."), Some("From the manifest.")).unwrap(),
            "From the server."
        );
        let long = "x".repeat(101);
        let too_long = description(None, Some(&long)).unwrap_err().to_string();
        assert!(
            too_long.starts_with("the package's `description` is 101 characters"),
            "{too_long}"
        );
        assert!(too_long.contains("`Server::description("), "{too_long}");
    }

    fn card() -> Value {
        let mut info = Implementation::new("weather", "1.2.0");
        info.description = Some("Forecasts for any city.".into());
        info.title = Some("Weather".into());
        ServerCard::new("io.github.someone/weather")
            .remote("https://weather.example.com/mcp")
            .repository("github", "https://github.com/someone/weather")
            .to_json(&info, &["2025-11-25", "2026-07-28"])
            .unwrap()
    }

    #[test]
    fn both_documents_validate_against_their_schemas() {
        let card = card();
        assert_eq!(
            validate(CARD_SCHEMA, Some("#/$defs/ServerCard"), &card),
            Vec::<String>::new()
        );
        let server = server_json(&card, Some("ghcr.io/someone/weather:1.2.0"));
        assert_eq!(
            validate(REGISTRY_SCHEMA, None, &server),
            Vec::<String>::new()
        );
        assert_eq!(
            server["remotes"],
            json!([{"type": "streamable-http", "url": "https://weather.example.com/mcp"}])
        );
        assert_eq!(server["packages"][0]["transport"], json!({"type": "stdio"}));
    }

    #[test]
    fn what_the_schemas_refuse_is_refused_before_writing() {
        let mut server = server_json(&card(), Some("ghcr.io/someone/weather:1.2.0"));
        assert_eq!(check_documents(&server), Vec::<String>::new());
        // The schema refuses the first two; for the third it only says "string",
        // and an OCI reference never holds a space, so the card's own check refuses it.
        for (key, value, schema_refuses) in [
            ("websiteUrl", json!("not a uri"), true),
            ("icons", json!([{"src": "no scheme here"}]), true),
            (
                "packages",
                json!([{"registryType": "oci", "identifier": "has space", "transport": {"type": "stdio"}}]),
                false,
            ),
        ] {
            let original = server.get(key).cloned();
            server[key] = value;
            assert_eq!(
                !validate(REGISTRY_SCHEMA, None, &server).is_empty(),
                schema_refuses,
                "the schema on {key}"
            );
            assert_eq!(check_documents(&server).len(), 1, "{key}");
            match original {
                Some(original) => server[key] = original,
                None => {
                    server.as_object_mut().unwrap().remove(key);
                }
            }
        }
    }

    #[test]
    fn the_schemas_refuse_what_they_should() {
        // The validation is not vacuous: each schema catches a broken document.
        let mut card = card();
        card["$schema"] = json!("https://example.com/other.json");
        card["remotes"][0]["type"] = json!("websocket");
        let errors = validate(CARD_SCHEMA, Some("#/$defs/ServerCard"), &card);
        assert_eq!(errors.len(), 2, "{errors:?}");
        let mut server = server_json(&self::card(), None);
        server["description"] = json!("x".repeat(101));
        server["websiteUrl"] = json!("not a uri");
        let errors = validate(REGISTRY_SCHEMA, None, &server);
        assert_eq!(errors.len(), 2, "{errors:?}");
    }
}
