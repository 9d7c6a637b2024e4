//! Access-token validation: JWTs against the issuer's JWKS, or RFC 7662 introspection.
//!
//! `jsonwebtoken` checks signatures and the registered claims (the most used JWT crate in Rust,
//! with a pure-Rust crypto backend here); `reqwest` (rustls) fetches the issuer's metadata, its
//! JWKS and introspection answers. What is checked, in order:
//!
//! 1. the header parses and names an asymmetric algorithm (`none` and every `HS*` are refused,
//!    so a token signed with the issuer's *public* key as an HMAC secret gets nowhere);
//! 2. the (unverified) `iss` names a trusted issuer, whose keys are then the only candidates;
//! 3. the `kid` is in that issuer's JWKS; an unknown one fetches the JWKS again (a rotation), at
//!    most once per `jwks_refresh` interval, so unknown kids cannot hammer the issuer;
//! 4. the key's type and `alg` fit the header's algorithm, and the signature verifies;
//! 5. `iss` equals the issuer, `aud` contains this server's resource (always), `exp` is present
//!    and not past, `nbf` not ahead, each with the configured leeway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::Reject;
use crate::context::Principal;
use crate::server::{OAuth, TokenValidation};

/// The algorithms a token may be signed with: asymmetric ones only.
pub(super) const ALLOWED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The most introspection answers kept at once.
const INTROSPECTION_CACHE_ENTRIES: usize = 10_000;

/// How long a failed fetch of an issuer's metadata is not tried again.
const DISCOVERY_RETRY: Duration = Duration::from_secs(5);

/// One trusted authorization server.
struct Issuer {
    id: String,
    /// Serializes fetches: one discovery or JWKS fetch per issuer at a time.
    fetch: tokio::sync::Mutex<Fetched>,
    /// The keys as last fetched, read without waiting.
    keys: RwLock<Option<Arc<Keys>>>,
}

#[derive(Default)]
struct Fetched {
    discovered: Option<Discovered>,
    last_attempt: Option<Instant>,
    last_jwks_fetch: Option<Instant>,
}

#[derive(Clone)]
struct Discovered {
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
}

/// One issuer's keys, each ready to verify with (built once per fetch, not per token).
struct Keys {
    keys: Vec<(Jwk, DecodingKey)>,
    fetched: Instant,
}

impl Keys {
    fn new(set: JwkSet) -> Self {
        let keys = set
            .keys
            .into_iter()
            .filter_map(|jwk| decoding_key(&jwk).map(|key| (jwk, key)))
            .collect();
        Self {
            keys,
            fetched: Instant::now(),
        }
    }

    fn candidates<'k>(
        &'k self,
        kid: Option<&'k str>,
    ) -> impl Iterator<Item = &'k (Jwk, DecodingKey)> + 'k {
        self.keys
            .iter()
            .filter(move |(k, _)| kid.is_none() || k.common.key_id.as_deref() == kid)
    }
}

/// The key of `jwk`, when it is one `jsonwebtoken` can verify with. An Ed25519 key whose `x` is
/// not 32 bytes is refused here: `jsonwebtoken`'s verifier would slice it and panic.
pub(super) fn decoding_key(jwk: &Jwk) -> Option<DecodingKey> {
    if let jsonwebtoken::jwk::AlgorithmParameters::OctetKeyPair(okp) = &jwk.algorithm {
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&okp.x)
            .ok()?;
        if x.len() != 32 {
            return None;
        }
    }
    DecodingKey::from_jwk(jwk).ok()
}

/// The most verified JWTs remembered at once.
const VERIFIED_CACHE_ENTRIES: usize = 10_000;

/// A verified JWT's caller, and until when it is remembered.
type Verified = (Instant, Arc<Principal>);

/// A cached introspection answer: until when, and what it said.
type Introspected = (Instant, Result<Principal, String>);

/// The validator of one server.
pub(crate) struct Validator {
    config: Arc<OAuth>,
    client: reqwest::Client,
    issuers: Vec<Issuer>,
    /// Introspection answers by the token's SHA-256, until their expiry.
    introspected: Mutex<HashMap<[u8; 32], Introspected>>,
    /// JWTs already verified, by their SHA-256, until `exp` (at most `verified_cache`): a client sends
    /// the same token on every request, and its signature need not be checked each time.
    verified: Mutex<HashMap<[u8; 32], Verified>>,
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Validator {
    pub(crate) fn new(config: Arc<OAuth>) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let issuers = config
            .authorization_servers
            .iter()
            .map(|id| Issuer {
                id: id.clone(),
                fetch: tokio::sync::Mutex::default(),
                keys: RwLock::new(None),
            })
            .collect();
        Self {
            config,
            client,
            issuers,
            introspected: Mutex::new(HashMap::new()),
            verified: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) async fn validate(&self, token: &str) -> Result<Arc<Principal>, Reject> {
        match &self.config.validation {
            TokenValidation::Jwt => {
                let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
                if let Some((until, principal)) = self
                    .verified
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&key)
                    && *until > Instant::now()
                {
                    return Ok(Arc::clone(principal));
                }
                let principal = Arc::new(self.validate_jwt(token).await?);
                let left = principal
                    .claims()
                    .get("exp")
                    .and_then(Value::as_u64)
                    .map_or(Duration::ZERO, |exp| {
                        Duration::from_secs(exp.saturating_sub(now_secs()))
                    })
                    .min(self.config.verified_cache);
                if !left.is_zero() {
                    let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
                    if verified.len() >= VERIFIED_CACHE_ENTRIES {
                        let now = Instant::now();
                        verified.retain(|_, (until, _)| *until > now);
                        if verified.len() >= VERIFIED_CACHE_ENTRIES {
                            verified.clear();
                        }
                    }
                    verified.insert(key, (Instant::now() + left, Arc::clone(&principal)));
                }
                Ok(principal)
            }
            TokenValidation::Introspection {
                client_id,
                client_secret,
            } => self
                .introspect(token, client_id, client_secret)
                .await
                .map(Arc::new),
        }
    }

    async fn validate_jwt(&self, token: &str) -> Result<Principal, Reject> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Reject::Invalid(format!("the token is not a well-formed JWT: {e}")))?;
        if !ALLOWED.contains(&header.alg) {
            return Err(Reject::Invalid(format!(
                "the algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let iss = unverified_issuer(token)
            .ok_or_else(|| Reject::Invalid("the token has no `iss`".to_owned()))?;
        let issuer =
            self.issuers.iter().find(|i| i.id == iss).ok_or_else(|| {
                Reject::Invalid("the token's issuer is not trusted here".to_owned())
            })?;
        let kid = header.kid.as_deref();
        let mut keys = self.keys(issuer, false).await?;
        if keys.candidates(kid).next().is_none() {
            // A key this server has not seen: the issuer may have rotated. Fetch again, at most
            // once per interval.
            keys = self.keys(issuer, true).await?;
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&issuer.id]);
        validation.set_audience(&[&self.config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway.as_secs();
        let mut last = Reject::Invalid("no key of the issuer matches the token's `kid`".to_owned());
        for (jwk, key) in keys.candidates(kid) {
            if let Some(alg) = jwk.common.key_algorithm
                && format!("{alg:?}") != format!("{:?}", header.alg)
            {
                continue;
            }
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
                Ok(data) => return Ok(Principal::from_claims(data.claims)),
                Err(error) => last = Reject::Invalid(format!("the token is not valid: {error}")),
            }
        }
        Err(last)
    }

    /// The issuer's keys, fetched when there are none yet, when they are older than the
    /// configured age, or on `refresh` (an unknown `kid`) when the last fetch is old enough.
    async fn keys(&self, issuer: &Issuer, refresh: bool) -> Result<Arc<Keys>, Reject> {
        let current = issuer
            .keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(keys) = &current
            && !refresh
            && keys.fetched.elapsed() < self.config.jwks_max_age
        {
            return Ok(Arc::clone(keys));
        }
        let mut fetched = issuer.fetch.lock().await;
        // Another request may have fetched meanwhile, or the last fetch is too recent.
        let latest = issuer
            .keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(keys) = &latest {
            let recent = fetched
                .last_jwks_fetch
                .is_some_and(|t| t.elapsed() < self.config.jwks_min_refresh);
            let newer = current.as_ref().is_none_or(|c| !Arc::ptr_eq(c, keys));
            if recent || (newer && keys.fetched.elapsed() < self.config.jwks_max_age) {
                return Ok(Arc::clone(keys));
            }
        }
        let discovered = self.discover(issuer, &mut fetched).await?;
        let uri = discovered.jwks_uri.ok_or_else(|| {
            Reject::Unavailable(format!("the issuer {} has no `jwks_uri`", issuer.id))
        })?;
        fetched.last_jwks_fetch = Some(Instant::now());
        // Keys of a kind this crate does not read (or for encryption) are skipped, not fatal.
        let set: Result<JwkSet, String> = self.get_json(&uri).await.and_then(|value| {
            let keys = value
                .get("keys")
                .and_then(Value::as_array)
                .ok_or_else(|| "the JWKS has no `keys`".to_owned())?;
            let keys = keys
                .iter()
                .filter(|k| k.get("use").and_then(Value::as_str) != Some("enc"))
                .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
                .collect();
            Ok(JwkSet { keys })
        });
        let set = match set {
            Ok(set) => set,
            // Keep serving with the keys we have, if any.
            Err(error) => match latest {
                Some(keys) => {
                    tracing::warn!(%error, issuer = %issuer.id, "the JWKS could not be fetched again");
                    return Ok(keys);
                }
                None => return Err(Reject::Unavailable(error)),
            },
        };
        let keys = Arc::new(Keys::new(set));
        *issuer.keys.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&keys));
        Ok(keys)
    }

    /// The issuer's metadata: RFC 8414 (path inserted after the well-known prefix), else
    /// OpenID discovery; its `issuer` must equal the configured one.
    async fn discover(&self, issuer: &Issuer, fetched: &mut Fetched) -> Result<Discovered, Reject> {
        if let Some(discovered) = &fetched.discovered {
            return Ok(discovered.clone());
        }
        if fetched
            .last_attempt
            .is_some_and(|t| t.elapsed() < DISCOVERY_RETRY)
        {
            return Err(Reject::Unavailable(format!(
                "the metadata of {} could not be fetched",
                issuer.id
            )));
        }
        fetched.last_attempt = Some(Instant::now());
        let id = issuer.id.trim_end_matches('/');
        let (origin, path) = super::split_origin(id);
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{id}/.well-known/openid-configuration"),
        ];
        let mut last = String::new();
        for url in candidates {
            match self.get_json(&url).await {
                Ok(metadata) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(&issuer.id) {
                        last = format!("the metadata at {url} names another issuer");
                        continue;
                    }
                    let text =
                        |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
                    let discovered = Discovered {
                        jwks_uri: text("jwks_uri"),
                        introspection_endpoint: text("introspection_endpoint"),
                    };
                    fetched.discovered = Some(discovered.clone());
                    return Ok(discovered);
                }
                Err(error) => last = error,
            }
        }
        Err(Reject::Unavailable(last))
    }

    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let response = self
            .client
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: {}", response.status()));
        }
        response
            .json::<Value>()
            .await
            .map_err(|e| format!("GET {url}: {e}"))
    }

    /// RFC 7662: asks the issuer whether the token is active, and checks what it says as a
    /// JWT's claims would be; answers are cached briefly by the token's hash.
    async fn introspect(
        &self,
        token: &str,
        client_id: &str,
        client_secret: &str,
    ) -> Result<Principal, Reject> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((until, answer)) = self
            .introspected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            && *until > Instant::now()
        {
            return answer.clone().map_err(Reject::Invalid);
        }
        let mut last = Reject::Invalid("no authorization server knows the token".to_owned());
        for issuer in &self.issuers {
            let discovered = {
                let mut fetched = issuer.fetch.lock().await;
                self.discover(issuer, &mut fetched).await?
            };
            let Some(endpoint) = discovered.introspection_endpoint else {
                continue;
            };
            let response = self
                .client
                .post(&endpoint)
                .basic_auth(client_id, Some(client_secret))
                .form(&[("token", token), ("token_type_hint", "access_token")])
                .send()
                .await
                .map_err(|e| Reject::Unavailable(format!("POST {endpoint}: {e}")))?;
            if !response.status().is_success() {
                return Err(Reject::Unavailable(format!(
                    "POST {endpoint}: {}",
                    response.status()
                )));
            }
            let answer: Map<String, Value> = response
                .json()
                .await
                .map_err(|e| Reject::Unavailable(format!("POST {endpoint}: {e}")))?;
            let checked = self.check_introspection(issuer, answer);
            let ttl = match &checked {
                Ok(principal) => principal
                    .claims()
                    .get("exp")
                    .and_then(Value::as_u64)
                    .map_or(self.config.introspection_cache, |exp| {
                        Duration::from_secs(exp.saturating_sub(now_secs()))
                            .min(self.config.introspection_cache)
                    }),
                Err(_) => self.config.introspection_cache,
            };
            if !ttl.is_zero() {
                let mut cache = self.introspected.lock().unwrap_or_else(|e| e.into_inner());
                if cache.len() >= INTROSPECTION_CACHE_ENTRIES {
                    let now = Instant::now();
                    cache.retain(|_, (until, _)| *until > now);
                    if cache.len() >= INTROSPECTION_CACHE_ENTRIES {
                        cache.clear();
                    }
                }
                cache.insert(key, (Instant::now() + ttl, checked.clone()));
            }
            match checked {
                Ok(principal) => return Ok(principal),
                Err(why) => last = Reject::Invalid(why),
            }
        }
        Err(last)
    }

    fn check_introspection(
        &self,
        issuer: &Issuer,
        mut answer: Map<String, Value>,
    ) -> Result<Principal, String> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err("the token is not active".to_owned());
        }
        match answer.get("iss").and_then(Value::as_str) {
            Some(iss) if iss != issuer.id => return Err("the token's issuer differs".to_owned()),
            Some(_) => {}
            None => {
                answer.insert("iss".into(), Value::from(issuer.id.clone()));
            }
        }
        let resource = &self.config.resource;
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => aud == resource,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(resource)),
            _ => false,
        };
        if !audience_ok {
            return Err("the token was not issued for this resource".to_owned());
        }
        let now = now_secs();
        let leeway = self.config.leeway.as_secs();
        if let Some(exp) = answer.get("exp").and_then(Value::as_u64)
            && exp + leeway <= now
        {
            return Err("the token has expired".to_owned());
        }
        if let Some(nbf) = answer.get("nbf").and_then(Value::as_u64)
            && nbf > now + leeway
        {
            return Err("the token is not valid yet".to_owned());
        }
        Ok(Principal::from_claims(answer))
    }
}

/// The `iss` of a JWT's payload, read before its signature is checked (only to pick the keys).
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Map<String, Value> = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(str::to_owned)
}
