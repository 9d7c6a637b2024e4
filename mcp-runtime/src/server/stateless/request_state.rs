//! `requestState` for the stateless era's input-required round trips, integrity-protected.
//!
//! When a handler needs input from the client (an elicitation, a sampling, the roots), the
//! request ends with `resultType: "input_required"`, the input requests, and a `requestState` the
//! client echoes on its retry. The state carries the answers of earlier rounds, so it is signed:
//! HMAC-SHA256 with a server key, over claims that bind it to the method, the tool name or URI, a
//! digest of the arguments, and an expiry. A state that fails any check is refused with -32602.
//!
//! Token format: `v1.` + base64url(JSON claims) + `.` + base64url(MAC). The claims are readable by
//! the client (they hold only what the client itself sent) but cannot be altered.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::protocol::ErrorObject;

type HmacSha256 = Hmac<Sha256>;

const PREFIX: &str = "v1.";

/// The server's signing key and how long a state stays valid.
#[derive(Clone)]
pub(crate) struct RequestStateKey {
    key: [u8; 32],
    pub(crate) ttl: Duration,
}

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStateKey")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// What a state is bound to: the request it may be echoed on.
#[derive(Debug, Clone)]
pub(crate) struct Binding {
    method: &'static str,
    /// The tool or prompt name, or the resource URI.
    target: String,
    /// SHA-256 of the request's canonical arguments (`{}` for `resources/read`).
    digest: String,
}

impl Binding {
    pub(crate) fn new<'a, K: AsRef<str>>(
        method: &'static str,
        target: &str,
        arguments: impl IntoIterator<Item = (K, &'a Value)>,
    ) -> Self {
        Self {
            method,
            target: target.to_owned(),
            digest: digest(arguments),
        }
    }

    /// The same binding, for `principal` only (HTTP with OAuth): a state sealed for one
    /// caller does not open for another, since it may record what that caller was allowed.
    pub(crate) fn for_principal(mut self, principal: Option<&crate::context::Principal>) -> Self {
        if let Some(principal) = principal {
            let mut hash = Sha256::new();
            hash.update(self.digest.as_bytes());
            hash.update([0]);
            hash.update(principal.binding_key().as_bytes());
            self.digest = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        }
        self
    }
}

#[derive(Serialize, Deserialize)]
struct Claims {
    v: u8,
    m: String,
    t: String,
    /// SHA-256 of the canonical arguments, hex.
    a: String,
    /// Expiry, seconds since the Unix epoch.
    exp: u64,
    /// The answers gathered so far, by input key.
    ans: Map<String, Value>,
}

impl RequestStateKey {
    /// A key from the system's randomness, valid for this process only.
    pub(crate) fn random(ttl: Duration) -> Self {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No system randomness: derive something unpredictable enough from the clock and
            // the process, never a fixed key.
            let seed = format!(
                "{:?}{}",
                SystemTime::now().duration_since(UNIX_EPOCH),
                std::process::id()
            );
            key.copy_from_slice(&Sha256::digest(seed.as_bytes()));
        }
        Self { key, ttl }
    }

    /// A key derived from a configured secret, so that several replicas accept each other's
    /// states.
    pub(crate) fn from_secret(secret: &[u8], ttl: Duration) -> Self {
        let mut key = [0u8; 32];
        key.copy_from_slice(&Sha256::digest(secret));
        Self { key, ttl }
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes keys of any length; 32 bytes cannot fail.
        HmacSha256::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!())
    }

    /// Seals the answers gathered so far for a retry of the request `binding` describes.
    pub(crate) fn seal(&self, binding: &Binding, answers: Map<String, Value>) -> String {
        let claims = Claims {
            v: 1,
            m: binding.method.to_owned(),
            t: binding.target.clone(),
            a: binding.digest.clone(),
            exp: now() + self.ttl.as_secs().max(1),
            ans: answers,
        };
        let payload = serde_json::to_vec(&claims).unwrap_or_default();
        let mut mac = self.mac();
        mac.update(&payload);
        let tag = mac.finalize().into_bytes();
        format!(
            "{PREFIX}{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Checks a state echoed by the client and returns the answers it carries.
    pub(crate) fn open(
        &self,
        token: &str,
        binding: &Binding,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let claims = self.verify(token).ok_or_else(invalid)?;
        if claims.v != 1
            || claims.m != binding.method
            || claims.t != binding.target
            || claims.a != binding.digest
            || claims.exp < now()
        {
            return Err(invalid());
        }
        Ok(claims.ans)
    }

    fn verify(&self, token: &str) -> Option<Claims> {
        let (payload, tag) = token.strip_prefix(PREFIX)?.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        let mut mac = self.mac();
        mac.update(&payload);
        mac.verify_slice(&tag).ok()?;
        serde_json::from_slice(&payload).ok()
    }
}

fn invalid() -> ErrorObject {
    ErrorObject::invalid_params("Invalid or expired requestState")
        .with_data(json!({"reason": "invalid_request_state"}))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// SHA-256 of the arguments with object keys sorted, so the client's key order does not matter.
fn digest<'a, K: AsRef<str>>(arguments: impl IntoIterator<Item = (K, &'a Value)>) -> String {
    fn canonical(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push(b'{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    let _ = serde_json::to_writer(&mut *out, key);
                    out.push(b':');
                    canonical(&map[key], out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    canonical(item, out);
                }
                out.push(b']');
            }
            scalar => {
                let _ = serde_json::to_writer(&mut *out, scalar);
            }
        }
    }
    // The arguments object as `canonical` writes an object: its members sorted by name.
    let mut members: Vec<(K, &Value)> = arguments.into_iter().collect();
    members.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    let mut bytes = vec![b'{'];
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        let _ = serde_json::to_writer(&mut bytes, key.as_ref());
        bytes.push(b':');
        canonical(value, &mut bytes);
    }
    bytes.push(b'}');
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_own_request() {
        let key = RequestStateKey::random(Duration::from_secs(60));
        let arguments = args(json!({"b": 1, "a": [1, {"y": 2, "x": 1}]}));
        let binding = Binding::new("tools/call", "book", &arguments);
        let answers = args(json!({"elicit-1": {"action": "accept"}}));
        let token = key.seal(&binding, answers.clone());
        assert_eq!(key.open(&token, &binding).unwrap(), answers);

        // Key order does not matter; values do.
        let reordered = args(json!({"a": [1, {"x": 1, "y": 2}], "b": 1}));
        assert!(
            key.open(&token, &Binding::new("tools/call", "book", &reordered))
                .is_ok()
        );
        let other_args = args(json!({"a": [1, {"x": 1, "y": 3}], "b": 1}));
        for wrong in [
            Binding::new("prompts/get", "book", &arguments),
            Binding::new("tools/call", "other", &arguments),
            Binding::new("tools/call", "book", &other_args),
        ] {
            let error = key.open(&token, &wrong).unwrap_err();
            assert_eq!(error.code, -32602);
        }
    }

    #[test]
    fn tampered_foreign_and_expired_states_are_refused() {
        let key = RequestStateKey::random(Duration::from_secs(60));
        let binding = Binding::new("tools/call", "t", &Map::new());
        let token = key.seal(&binding, args(json!({"elicit-1": {"action": "decline"}})));
        let (payload, tag) = token.strip_prefix(PREFIX).unwrap().split_once('.').unwrap();
        let mut claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        claims["ans"]["elicit-1"]["action"] = json!("accept");
        let forged = format!(
            "{PREFIX}{}.{tag}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap())
        );
        assert!(key.open(&forged, &binding).is_err());
        assert!(key.open("garbage", &binding).is_err());
        let other = RequestStateKey::random(Duration::from_secs(60));
        assert!(other.open(&token, &binding).is_err());
        // Two replicas with one secret accept each other's states.
        let a = RequestStateKey::from_secret(b"shared", Duration::from_secs(60));
        let b = RequestStateKey::from_secret(b"shared", Duration::from_secs(60));
        assert!(b.open(&a.seal(&binding, Map::new()), &binding).is_ok());
        // An expired state: claims with a past expiry, correctly signed.
        let mut old: Claims =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        old.exp = now() - 1;
        let payload = serde_json::to_vec(&old).unwrap();
        let mut mac = key.mac();
        mac.update(&payload);
        let expired = format!(
            "{PREFIX}{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        );
        let error = key.open(&expired, &binding).unwrap_err();
        assert_eq!(error.data.unwrap()["reason"], "invalid_request_state");
    }
}
