//! DPoP proofs (`OAuth::accept_dpop`): a proof is built from three parts of the input, split at
//! 0 bytes (the header's JSON, the claims' JSON, the signature's bytes), each base64url-encoded
//! as a JWT carries them, so the fuzzer reaches the key parsing, the signature check and the
//! claims at once. Every key kind and curve a client can name goes to `jsonwebtoken` here; nothing
//! may panic (an Ed25519 key shorter than 32 bytes once did, inside its verifier).

#![no_main]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::fuzz_dpop;

fuzz_target!(|bytes: &[u8]| {
    let mut parts = bytes.splitn(3, |&b| b == 0);
    let (header, claims, signature) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let proof = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims),
        URL_SAFE_NO_PAD.encode(signature)
    );
    fuzz_dpop(&proof);
    // The same bytes as a proof's text, as a client could send it.
    if let Ok(text) = std::str::from_utf8(bytes) {
        fuzz_dpop(text);
    }
});
