//! DPoP (RFC 9449, SEP-1932): access tokens bound to a key the client holds, each request
//! carrying a fresh proof signed with that key.
//!
//! A proof (the `DPoP` header) is accepted when, in order (RFC 9449 §4.3):
//!
//! 1. it is one JWT of at most [`MAX_PROOF`] bytes whose header has `typ` `dpop+jwt`, an
//!    asymmetric `alg` of those accepted for access tokens, and a `jwk` that is a public key (no
//!    private members) of a kind that fits the algorithm;
//! 2. its signature verifies with that `jwk`;
//! 3. `htm` is the request's method and `htu` its URL (the configured resource's origin and the
//!    request's path; the `htu`'s query and fragment are ignored);
//! 4. `iat` is within [`IAT_WINDOW`] seconds of now, either way;
//! 5. `ath` is the SHA-256 of the access token it comes with (base64url);
//! 6. its `jti` (at most [`MAX_JTI`] bytes) has not been seen with the same key before.
//!
//! The token must then be bound to the proof's key: its `cnf.jkt` (from the JWT or the
//! introspection answer) equals the key's RFC 7638 thumbprint. The thumbprint is computed here
//! from the JSON members, not by `jsonwebtoken`, whose `Jwk::thumbprint` panics on a curve that
//! does not fit the key type, and the `jwk` comes from the client.
//!
//! Seen proofs are remembered per replica, at most [`REMEMBERED_PROOFS`] at once: a proof
//! replayed to another replica within its window is not caught there. Server-provided nonces
//! (RFC 9449 §8) are not used.

use std::collections::{HashSet, VecDeque};
use std::str::FromStr as _;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::validate::{ALLOWED, decoding_key};

/// How far a proof's `iat` may be from now, in seconds, either way (SEP-1932: ±5 minutes).
pub(crate) const IAT_WINDOW: u64 = 300;
/// The most proofs remembered at once for the replay check; the oldest go first.
pub(crate) const REMEMBERED_PROOFS: usize = 100_000;
/// The largest proof accepted, in bytes.
pub(crate) const MAX_PROOF: usize = 8 * 1024;
/// The longest `jti` accepted, in bytes.
pub(crate) const MAX_JTI: usize = 256;

/// The JWK members that must not be in a proof's public key.
const PRIVATE_MEMBERS: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// The proofs one server has seen.
#[derive(Default)]
pub(crate) struct Proofs {
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    ids: HashSet<[u8; 32]>,
    /// The same ids, oldest first, each with the time (seconds) after which it cannot be replayed.
    order: VecDeque<([u8; 32], u64)>,
}

/// The request a proof must be for.
pub(crate) struct Target<'a> {
    pub(crate) method: &'a str,
    pub(crate) url: &'a str,
    pub(crate) token: &'a str,
}

impl Proofs {
    /// The RFC 7638 thumbprint of the key of `proof`, a valid proof for `target` at `now`
    /// (seconds since the epoch), or why it is not one.
    pub(crate) fn check(
        &self,
        proof: &str,
        target: &Target<'_>,
        now: u64,
    ) -> Result<String, String> {
        if proof.len() > MAX_PROOF {
            return Err(format!("the proof is longer than {MAX_PROOF} bytes"));
        }
        let header = proof
            .split('.')
            .next()
            .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
            .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok())
            .ok_or("the proof is not a JWT")?;
        if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
            return Err("the proof's `typ` is not `dpop+jwt`".to_owned());
        }
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .and_then(|alg| Algorithm::from_str(alg).ok())
            .filter(|alg| ALLOWED.contains(alg))
            .ok_or("the proof's `alg` is not an accepted asymmetric algorithm")?;
        let jwk = header
            .get("jwk")
            .and_then(Value::as_object)
            .ok_or("the proof has no `jwk`")?;
        if PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)) {
            return Err("the proof's `jwk` is not a public key".to_owned());
        }
        let thumbprint = thumbprint(jwk).ok_or("the proof's `jwk` is not an EC, RSA or OKP key")?;
        if !fits(alg, jwk) {
            return Err("the proof's `jwk` does not fit its `alg`".to_owned());
        }
        let key = serde_json::from_value::<Jwk>(Value::Object(jwk.clone()))
            .ok()
            .and_then(|jwk| decoding_key(&jwk))
            .ok_or("the proof's `jwk` is not a usable key")?;
        let mut validation = Validation::new(alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Map<String, Value>>(proof, &key, &validation)
            .map_err(|e| format!("the proof's signature does not verify: {e}"))?
            .claims;
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        let jti = text("jti")
            .filter(|jti| !jti.is_empty() && jti.len() <= MAX_JTI)
            .ok_or("the proof has no usable `jti`")?;
        if text("htm") != Some(target.method) {
            return Err("the proof's `htm` is not this request's method".to_owned());
        }
        let htu = text("htu").ok_or("the proof has no `htu`")?;
        if htu.split(['?', '#']).next() != Some(target.url) {
            return Err("the proof's `htu` is not this request's URL".to_owned());
        }
        let iat = claims
            .get("iat")
            .and_then(Value::as_u64)
            .ok_or("the proof has no `iat`")?;
        if iat.abs_diff(now) > IAT_WINDOW {
            return Err(format!(
                "the proof's `iat` is more than {IAT_WINDOW} s from now"
            ));
        }
        let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(target.token.as_bytes()));
        if text("ath") != Some(&ath) {
            return Err("the proof's `ath` is not the hash of this access token".to_owned());
        }
        self.remember(&thumbprint, jti, iat + IAT_WINDOW, now)?;
        Ok(thumbprint)
    }

    /// Records a proof's id, or refuses it as a replay.
    fn remember(&self, thumbprint: &str, jti: &str, until: u64, now: u64) -> Result<(), String> {
        let mut hasher = Sha256::new();
        hasher.update(thumbprint.as_bytes());
        hasher.update(b".");
        hasher.update(jti.as_bytes());
        let id: [u8; 32] = hasher.finalize().into();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(&(old, until)) = seen.order.front() {
            if until >= now && seen.order.len() < REMEMBERED_PROOFS {
                break;
            }
            seen.order.pop_front();
            seen.ids.remove(&old);
        }
        if !seen.ids.insert(id) {
            return Err("the proof was used before".to_owned());
        }
        seen.order.push_back((id, until));
        Ok(())
    }
}

/// The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK: its required members, in
/// lexicographic order, with no white space.
fn thumbprint(jwk: &Map<String, Value>) -> Option<String> {
    let members: &[&str] = match jwk.get("kty")?.as_str()? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    let mut canonical = String::from("{");
    for (i, member) in members.iter().enumerate() {
        let value = jwk.get(*member)?.as_str()?;
        if i > 0 {
            canonical.push(',');
        }
        canonical.push_str(&serde_json::to_string(member).ok()?);
        canonical.push(':');
        canonical.push_str(&serde_json::to_string(value).ok()?);
    }
    canonical.push('}');
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
}

/// A DPoP proof of arbitrary text through every check, for the `dpop` fuzz target: whether it
/// was accepted (for `POST https://mcp.example.com/mcp` with the token `token`); never a panic.
#[cfg(feature = "fuzzing")]
pub fn fuzz_dpop(proof: &str) -> bool {
    let target = Target {
        method: "POST",
        url: "https://mcp.example.com/mcp",
        token: "token",
    };
    Proofs::default()
        .check(proof, &target, 1_800_000_000)
        .is_ok()
}

/// Whether a key of this type (and curve) signs with `alg`.
fn fits(alg: Algorithm, jwk: &Map<String, Value>) -> bool {
    let member = |name: &str| jwk.get(name).and_then(Value::as_str);
    match alg {
        Algorithm::ES256 => member("kty") == Some("EC") && member("crv") == Some("P-256"),
        Algorithm::ES384 => member("kty") == Some("EC") && member("crv") == Some("P-384"),
        Algorithm::EdDSA => member("kty") == Some("OKP") && member("crv") == Some("Ed25519"),
        _ => member("kty") == Some("RSA"),
    }
}

/// The key thumbprint a token is bound to (`cnf.jkt`), if any.
pub(crate) fn bound_key(claims: &Map<String, Value>) -> Option<&str> {
    claims.get("cnf")?.get("jkt")?.as_str()
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;

    /// A P-256 key made for these tests (PKCS #8), and its public coordinates.
    const KEY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQga/yMU8XugLY4wnvHD1hPJB8EsRxrj8Yx86p68eDmmaGhRANCAAQNpZCl9UuRBAtZXT8jy3cGP0VI70+D90U98kZx6ZsaO8hcAkPoGsybYrn4Ut+aPf3NCnh1n0WVLJpBDgzbqsMu";
    const X: &str = "DaWQpfVLkQQLWV0_I8t3Bj9FSO9Pg_dFPfJGcembGjs";
    const Y: &str = "yFwCQ-gazJtiufhS35o9_c0KeHWfRZUsmkEODNuqwy4";
    const NOW: u64 = 1_800_000_000;
    const URL: &str = "https://mcp.example.com/mcp";

    fn jwk() -> Value {
        json!({"kty": "EC", "crv": "P-256", "x": X, "y": Y})
    }

    /// A JWT of exactly this header and these claims (which `jsonwebtoken::Header` could not
    /// all hold), signed with ES256 by the test key.
    fn sign(header: Value, claims: Value) -> String {
        let der = base64::engine::general_purpose::STANDARD
            .decode(KEY)
            .unwrap();
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let key = EncodingKey::from_ec_der(&der);
        let signature =
            jsonwebtoken::crypto::sign(input.as_bytes(), &key, Algorithm::ES256).unwrap();
        format!("{input}.{signature}")
    }

    fn claims(jti: &str) -> Value {
        json!({"jti": jti, "htm": "POST", "htu": URL, "iat": NOW,
               "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(b"the-token"))})
    }

    fn proof_with(edit: impl FnOnce(&mut Value, &mut Value)) -> String {
        let mut header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk()});
        let mut claims = claims("one");
        edit(&mut header, &mut claims);
        sign(header, claims)
    }

    fn check(proofs: &Proofs, proof: &str) -> Result<String, String> {
        let target = Target {
            method: "POST",
            url: URL,
            token: "the-token",
        };
        proofs.check(proof, &target, NOW)
    }

    #[test]
    fn a_valid_proof_gives_its_keys_thumbprint_once() {
        let proofs = Proofs::default();
        let proof = proof_with(|_, _| {});
        let expected = thumbprint(jwk().as_object().unwrap()).unwrap();
        assert_eq!(check(&proofs, &proof), Ok(expected.clone()));
        assert_eq!(
            check(&proofs, &proof),
            Err("the proof was used before".to_owned())
        );
        let query = proof_with(|_, c| {
            c["jti"] = json!("two");
            c["htu"] = json!(format!("{URL}?x=1"));
        });
        assert_eq!(check(&proofs, &query), Ok(expected));
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1's example key and thumbprint.
        let key = json!({"kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"});
        assert_eq!(
            thumbprint(key.as_object().unwrap()).as_deref(),
            Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        );
    }

    #[test]
    fn every_rule_refuses_its_own_fault() {
        let cases: Vec<(&str, String)> = vec![
            ("typ", proof_with(|h, _| h["typ"] = json!("JWT"))),
            ("jwk", proof_with(|h, _| h["jwk"] = Value::Null)),
            ("public", proof_with(|h, _| h["jwk"]["d"] = json!("AAAA"))),
            ("fit", proof_with(|h, _| h["jwk"]["crv"] = json!("Ed25519"))),
            ("fit", proof_with(|h, _| h["jwk"]["crv"] = json!("P-384"))),
            ("RSA", proof_with(|h, _| h["jwk"]["kty"] = json!("oct"))),
            (
                "signature",
                // Another P-256 key's point.
                proof_with(|h, _| {
                    h["jwk"]["x"] = json!("0OAzIttW5EdcJm_jLtcYsaaO0MYbyT7F2W7K5QBM5Rk");
                    h["jwk"]["y"] = json!("m_HqXbv4Gt43k_cBXzP9legphjoZmsUxYeRzWqQ4spw");
                }),
            ),
            ("htm", proof_with(|_, c| c["htm"] = json!("GET"))),
            (
                "htu",
                proof_with(|_, c| c["htu"] = json!("https://mcp.example.com/other")),
            ),
            (
                "iat",
                proof_with(|_, c| c["iat"] = json!(NOW - IAT_WINDOW - 1)),
            ),
            (
                "iat",
                proof_with(|_, c| c["iat"] = json!(NOW + IAT_WINDOW + 1)),
            ),
            ("iat", proof_with(|_, c| c["iat"] = json!("now"))),
            ("ath", proof_with(|_, c| c["ath"] = json!("AAAA"))),
            (
                "ath",
                proof_with(|_, c| {
                    c.as_object_mut().unwrap().remove("ath");
                }),
            ),
            ("jti", proof_with(|_, c| c["jti"] = json!(""))),
            (
                "jti",
                proof_with(|_, c| c["jti"] = json!("j".repeat(MAX_JTI + 1))),
            ),
            ("not a JWT", "a.b.c".to_owned()),
            ("not a JWT", "é".repeat(10)),
            ("longer", "a".repeat(MAX_PROOF + 1)),
        ];
        for (fault, proof) in cases {
            let refused = check(&Proofs::default(), &proof).unwrap_err();
            assert!(refused.contains(fault), "{fault}: {refused}");
        }
        // A symmetric algorithm, with the public key's bytes as the secret: refused by `alg`.
        let hs = jsonwebtoken::encode(
            &serde_json::from_value::<Header>(
                json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": jwk()}),
            )
            .unwrap(),
            &claims("hs"),
            &EncodingKey::from_secret(X.as_bytes()),
        )
        .unwrap();
        let refused = check(&Proofs::default(), &hs).unwrap_err();
        assert!(refused.contains("`alg`"), "{refused}");
    }

    #[test]
    fn hostile_keys_are_refused_without_a_panic() {
        let keys = [
            (
                "ES256",
                json!({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}),
            ),
            (
                "ES256",
                json!({"kty": "EC", "crv": "P-256", "x": "!!!", "y": Y}),
            ),
            (
                "ES256",
                json!({"kty": "EC", "crv": "P-256", "x": X, "y": 7}),
            ),
            (
                "ES384",
                json!({"kty": "EC", "crv": "P-384", "x": X, "y": Y}),
            ),
            ("RS256", json!({"kty": "RSA", "n": "", "e": ""})),
            ("PS512", json!({"kty": "RSA", "n": "AQAB", "e": "AQAB"})),
            ("EdDSA", json!({"kty": "OKP", "crv": "Ed25519", "x": "AA"})),
            ("EdDSA", json!({"kty": "OKP", "crv": "Ed25519", "x": X})),
            (
                "ES256",
                json!({"kty": "EC", "crv": ["P-256"], "x": X, "y": Y}),
            ),
        ];
        for (alg, jwk) in keys {
            let proof = proof_with(|h, _| {
                h["alg"] = json!(alg);
                h["jwk"] = jwk.clone();
            });
            assert!(check(&Proofs::default(), &proof).is_err(), "{alg} {jwk}");
        }
    }

    #[test]
    fn remembered_proofs_are_bounded() {
        let proofs = Proofs::default();
        for i in 0..REMEMBERED_PROOFS + 10 {
            proofs
                .remember("key", &i.to_string(), NOW + IAT_WINDOW, NOW)
                .unwrap();
        }
        let seen = proofs.seen.lock().unwrap();
        assert_eq!(seen.ids.len(), REMEMBERED_PROOFS);
        assert_eq!(seen.order.len(), REMEMBERED_PROOFS);
        drop(seen);
        // Past their window, remembered proofs are forgotten as new ones come.
        proofs
            .remember(
                "key",
                "late",
                NOW + 3 * IAT_WINDOW,
                NOW + 2 * IAT_WINDOW + 1,
            )
            .unwrap();
        assert_eq!(proofs.seen.lock().unwrap().ids.len(), 1);
    }
}
