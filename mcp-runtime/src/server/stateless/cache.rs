//! What complete stateless results gain: `resultType`, the server's identity, and cache hints.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::SERVER_INFO_KEY;
use crate::protocol::{Implementation, ProtocolVersion};

/// How long a client may cache a result, and whether the cache may be shared (SEP-2549).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// `ttlMs`: how long the result stays fresh.
    pub ttl: Duration,
    /// `cacheScope`.
    pub scope: CacheScope,
}

impl CacheHint {
    /// Fresh for `ttl`, cacheable only for the client that asked (`"private"`).
    pub const fn private(ttl: Duration) -> Self {
        Self {
            ttl,
            scope: CacheScope::Private,
        }
    }

    /// Fresh for `ttl`, shareable across clients and authorization contexts (`"public"`).
    pub const fn public(ttl: Duration) -> Self {
        Self {
            ttl,
            scope: CacheScope::Public,
        }
    }
}

impl Default for CacheHint {
    /// `ttlMs: 0`, `cacheScope: "private"`: always revalidate.
    fn default() -> Self {
        Self::private(Duration::ZERO)
    }
}

/// Who may share a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Only the client that asked.
    Private,
    /// Any client; not access control.
    Public,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Public => "public",
        }
    }
}

/// The results that carry cache hints from 2026-07-28.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cacheable {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
    /// `resources/read`.
    ResourceRead,
    /// `skills/list` and `skills/get` (the skills extension).
    Skills,
    /// `resources/directory/read` (the skills extension).
    ResourceDirectory,
}

impl Cacheable {
    const ALL: [Cacheable; 8] = [
        Self::Discover,
        Self::Tools,
        Self::Prompts,
        Self::Resources,
        Self::ResourceTemplates,
        Self::ResourceRead,
        Self::Skills,
        Self::ResourceDirectory,
    ];

    fn of(method: &str) -> Option<Self> {
        Some(match method {
            "server/discover" => Self::Discover,
            "tools/list" => Self::Tools,
            "prompts/list" => Self::Prompts,
            "resources/list" => Self::Resources,
            "resources/templates/list" => Self::ResourceTemplates,
            "resources/read" => Self::ResourceRead,
            "skills/list" | "skills/get" => Self::Skills,
            "resources/directory/read" => Self::ResourceDirectory,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// The cache hints of a server, one per cacheable result.
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheHints([CacheHint; 8]);

impl CacheHints {
    pub(crate) fn set(&mut self, result: Cacheable, hint: CacheHint) {
        self.0[result.index()] = hint;
    }
}

/// What every complete stateless result of one method gains: `resultType`, the server's
/// identity, and, for lists and reads, the cache hints. Made once per server.
pub(crate) struct Stamp {
    fields: Map<String, Value>,
    server_info: Value,
    /// `fields` and the `_meta` with the server's identity, serialized, without the closing
    /// brace: the front of a stamped page.
    head: String,
}

impl Stamp {
    /// `info` is the server's `Implementation` as 2026-07-28 shapes it.
    fn new(info: &Value, hint: Option<CacheHint>) -> Self {
        let mut fields = Map::new();
        fields.insert("resultType".into(), Value::from("complete"));
        if let Some(hint) = hint {
            let ttl = u64::try_from(hint.ttl.as_millis()).unwrap_or(u64::MAX);
            fields.insert("ttlMs".into(), Value::from(ttl));
            fields.insert("cacheScope".into(), Value::from(hint.scope.as_str()));
        }
        let mut with_meta = fields.clone();
        with_meta.insert("_meta".into(), json!({ SERVER_INFO_KEY: info }));
        let mut head = Value::Object(with_meta).to_string();
        head.pop();
        Self {
            fields,
            server_info: info.clone(),
            head,
        }
    }

    /// Stamps a result held as JSON.
    pub(crate) fn apply(&self, mut result: Value) -> Value {
        let Value::Object(map) = &mut result else {
            return result;
        };
        for (key, value) in &self.fields {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
        let info = self.server_info.clone();
        match map.get_mut("_meta") {
            Some(Value::Object(meta)) => {
                meta.insert(SERVER_INFO_KEY.into(), info);
            }
            _ => {
                map.insert("_meta".into(), json!({ SERVER_INFO_KEY: info }));
            }
        }
        result
    }

    /// Stamps a result already serialized (a cached list page) without parsing it: the stamp's
    /// fields go in front of the page's own, which carry no `_meta` or `resultType`.
    pub(crate) fn apply_raw(&self, raw: &str) -> String {
        let rest = raw
            .trim_start()
            .strip_prefix('{')
            .unwrap_or("}")
            .trim_start();
        let mut out = String::with_capacity(self.head.len() + raw.len() + 1);
        out.push_str(&self.head);
        if !rest.starts_with('}') {
            out.push(',');
        }
        out.push_str(rest);
        out
    }
}

/// The stamps of a server's stateless results: one per cacheable result, one for the rest
/// (tool calls, prompts, input-required results: never cached, no hints).
pub(crate) struct Stamps {
    plain: Stamp,
    cached: [Stamp; 8],
}

impl Stamps {
    pub(crate) fn new(info: &Implementation, hints: &CacheHints) -> Self {
        let info = info.for_version(ProtocolVersion::V2026_07_28);
        Self {
            plain: Stamp::new(&info, None),
            cached: Cacheable::ALL.map(|c| Stamp::new(&info, Some(hints.0[c.index()]))),
        }
    }

    /// The stamp for a result of `method` (any other method: the plain one).
    pub(crate) fn for_method(&self, method: &str) -> &Stamp {
        match Cacheable::of(method) {
            Some(cacheable) => &self.cached[cacheable.index()],
            None => &self.plain,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_go_on_values_and_raw_pages_alike() {
        let stamps = Stamps::new(
            &Implementation::new("demo", "1.0.0"),
            &CacheHints::default(),
        );
        let stamped = stamps.for_method("tools/list").apply_raw(r#"{"tools":[]}"#);
        let stamped: Value = serde_json::from_str(&stamped).unwrap();
        assert_eq!(
            stamped,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                   "_meta": {SERVER_INFO_KEY: {"name": "demo", "version": "1.0.0"}}, "tools": []})
        );
        let empty: Value = serde_json::from_str(&stamps.for_method("x").apply_raw("{}")).unwrap();
        assert_eq!(empty["resultType"], "complete");
        let value = stamps
            .for_method("tools/call")
            .apply(json!({"content": [], "_meta": {"mine": 1}}));
        assert_eq!(value["_meta"]["mine"], 1);
        assert_eq!(value["_meta"][SERVER_INFO_KEY]["name"], "demo");
        assert!(value.get("ttlMs").is_none());
    }
}
