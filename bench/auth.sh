#!/usr/bin/env bash
# The OAuth row: HTTP `tools/call add` with a JWT validated on every request, beside the same
# server without OAuth. The issuer is a static one on 127.0.0.1 (its OpenID metadata and a JWKS
# with one RSA key, served by python3's http.server); the token is an RS256 JWT for the server's
# resource, minted once with that key (PyJWT from .cache/py). The JWKS is fetched on the first
# request and cached, so what the row measures is the per-call validation: header and claims
# parsing, the RS256 signature check, `iss`, `aud`, `exp`. The DPoP row sends a DPoP-bound token
# (`cnf.jkt`) with a fresh ES256 proof on every request (made beforehand, a file of them per drive,
# PyJWT), so each call checks a proof's signature and claims and records its `jti`.
#
#   bench/auth.sh [REPS] [CALLS_32] [CALLS_1]      # 3, 50000, 10000 by default
#
# Writes bench/auth-results.md (medians over REPS, the two servers alternating).
set -euo pipefail
cd "$(dirname "$0")"
reps="${1:-3}"
calls32="${2:-50000}"
calls1="${3:-10000}"
py="${INTEROP_VENV:-$PWD/../.cache/py}/bin/python"
[ -x "$py" ] || { echo "bench/auth.sh: needs the venv of scripts/interop.sh ($py)" >&2; exit 1; }

cargo build --release -p bench-ours -p bench-runner --features bench-ours/oauth --quiet
ours=target/release/bench-ours
runner=target/release/bench-runner

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
tmp=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

issuer_port=$(free_port)
plain_port=$(free_port)
auth_port=$(free_port)
every_port=$(free_port)
dpop_port=$(free_port)
issuer="http://127.0.0.1:$issuer_port"
resource="http://127.0.0.1:$auth_port/mcp"
every_resource="http://127.0.0.1:$every_port/mcp"
dpop_resource="http://127.0.0.1:$dpop_port/mcp"
tokens=$("$py" - "$tmp/www" "$issuer" "$resource" "$every_resource" "$dpop_resource" "$tmp" <<'PY'
import base64, hashlib, json, os, sys, time, jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
www, issuer, resource, every_resource, dpop_resource, tmp = sys.argv[1:]
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
public.update({"kid": "bench", "alg": "RS256", "use": "sig"})
os.makedirs(f"{www}/.well-known")
with open(f"{www}/.well-known/openid-configuration", "w") as f:
    json.dump({"issuer": issuer, "jwks_uri": f"{issuer}/jwks"}, f)
with open(f"{www}/jwks", "w") as f:
    json.dump({"keys": [public]}, f)
now = int(time.time())
for aud in (resource, every_resource):
    claims = {"iss": issuer, "aud": aud, "sub": "bench", "client_id": "bench",
              "scope": "tools", "iat": now, "exp": now + 7200}
    print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench", "typ": "at+jwt"}))
# The client's DPoP key, and a token bound to it (cnf.jkt: its RFC 7638 thumbprint).
dpop_key = ec.generate_private_key(ec.SECP256R1())
with open(f"{tmp}/dpop.pem", "wb") as f:
    f.write(dpop_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
dpop_jwk = json.loads(ECAlgorithm.to_jwk(dpop_key.public_key()))
with open(f"{tmp}/dpop.jwk", "w") as f:
    json.dump(dpop_jwk, f)
canonical = json.dumps({k: dpop_jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"),
                       sort_keys=True)
jkt = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
claims = {"iss": issuer, "aud": dpop_resource, "sub": "bench", "client_id": "bench",
          "scope": "tools", "iat": now, "exp": now + 7200, "cnf": {"jkt": jkt}}
print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench", "typ": "at+jwt"}))
PY
)
token=$(sed -n 1p <<<"$tokens")
every_token=$(sed -n 2p <<<"$tokens")
dpop_token=$(sed -n 3p <<<"$tokens")

# COUNT fresh proofs for POST $dpop_resource with $dpop_token, one per line, into $tmp/proofs.
make_proofs() {
    "$py" - "$1" "$dpop_resource" "$dpop_token" "$tmp" <<'PY'
import base64, hashlib, json, sys, time, uuid, jwt
from cryptography.hazmat.primitives import serialization
count, url, token, tmp = sys.argv[1:]
key = serialization.load_pem_private_key(open(f"{tmp}/dpop.pem", "rb").read(), None)
header = {"typ": "dpop+jwt", "jwk": json.load(open(f"{tmp}/dpop.jwk"))}
ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
now, prefix = int(time.time()), uuid.uuid4().hex
with open(f"{tmp}/proofs", "w") as f:
    for i in range(int(count)):
        claims = {"jti": f"{prefix}-{i}", "htm": "POST", "htu": url, "iat": now, "ath": ath}
        f.write(jwt.encode(claims, key, algorithm="ES256", headers=header) + "\n")
PY
}
python3 -m http.server "$issuer_port" --bind 127.0.0.1 --directory "$tmp/www" >/dev/null 2>&1 &
pids+=($!)
"$ours" http "127.0.0.1:$plain_port" &
pids+=($!)
"$ours" http-auth "127.0.0.1:$auth_port" "$issuer" "$resource" &
pids+=($!)
# The same, checking the signature on every request (no verified-token cache).
"$ours" http-auth-every "127.0.0.1:$every_port" "$issuer" "$every_resource" &
pids+=($!)
"$ours" http-auth-dpop "127.0.0.1:$dpop_port" "$issuer" "$dpop_resource" &
pids+=($!)
for port in "$issuer_port" "$plain_port" "$auth_port" "$every_port" "$dpop_port"; do
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
    done
done

# One drive: "calls/s p50_us p99_us" from the runner's output.
drive() { # ADDR CONNECTIONS CALLS [TOKEN [PROOFS]]
    env BENCH_BEARER="${4:-}" ${5:+BENCH_DPOP_PROOFS="$5"} "$runner" --drive-http "$1" "$2" "$3" 2>&1 |
        python3 -c '
import re, sys
text = sys.stdin.read()
rate = re.search(r"([0-9.]+) calls/s", text)
p50 = re.search(r"p50 ([0-9.]+)", text)
p99 = re.search(r"p99 ([0-9.]+)", text)
if not (rate and p50 and p99) or re.search(r"[1-9][0-9]* errors", text):
    sys.exit("unexpected runner output: " + text)
print(rate.group(1), p50.group(1), p99.group(1))'
}

declare -A samples
for rep in $(seq "$reps"); do
    for conns in 1 32; do
        calls=$([ "$conns" = 1 ] && echo "$calls1" || echo "$calls32")
        order=("plain" "auth" "every" "dpop")
        [ $((rep % 2)) = 0 ] && order=("dpop" "every" "auth" "plain")
        for which in "${order[@]}"; do
            case "$which" in
                plain) result=$(drive "127.0.0.1:$plain_port" "$conns" "$calls") ;;
                auth) result=$(drive "127.0.0.1:$auth_port" "$conns" "$calls" "$token") ;;
                every) result=$(drive "127.0.0.1:$every_port" "$conns" "$calls" "$every_token") ;;
                dpop)
                    # Each connection's initialize takes a proof too.
                    make_proofs $((calls + conns + 100))
                    result=$(drive "127.0.0.1:$dpop_port" "$conns" "$calls" "$dpop_token" "$tmp/proofs")
                    ;;
            esac
            echo "rep $rep, $conns connection(s), $which: $result" >&2
            samples["$which-$conns"]+="$result;"
        done
    done
done

python3 - "$reps" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "${samples[plain-1]}" "${samples[auth-1]}" "${samples[every-1]}" "${samples[dpop-1]}" \
    "${samples[plain-32]}" "${samples[auth-32]}" "${samples[every-32]}" "${samples[dpop-32]}" <<'PY' | tee auth-results.md
import statistics, sys
reps, commit, *raw = sys.argv[1:]
def med(s):
    rows = [tuple(map(float, r.split())) for r in s.strip(";").split(";")]
    return [statistics.median(c) for c in zip(*rows)]
p1, a1, e1, d1, p32, a32, e32, d32 = map(med, raw)
print(f"# OAuth rows (bench/auth.sh, {reps} reps, commit {commit})\n")
print("HTTP `tools/call add` on the benchmark server, keep-alive connections, JSON replies. With")
print("OAuth every request carries an RS256 JWT, validated against the issuer's JWKS (fetched once,")
print("then cached): by default a token whose signature was checked is remembered by its SHA-256")
print("for up to a minute (never past `exp`); `every request` turns that off")
print("(`verified_token_cache(Duration::ZERO)`), so each call checks the RS256 signature. `DPoP`")
print("sends a DPoP-bound token (`OAuth::accept_dpop`) with a fresh ES256 proof on every call (made")
print("before the drive): the token's check is cached as by default, the proof's signature, claims")
print("and `jti` are checked on each call.\n")
print("| row | calls/s | p50 µs | p99 µs | overhead per call vs no OAuth |")
print("|---|---|---|---|---|")
for name, plain, rows in (("1 connection", p1, ((a1, "JWT, default"), (e1, "JWT, signature every request"),
                                                (d1, "DPoP, a proof every request"))),
                          ("32 connections", p32, ((a32, "JWT, default"), (e32, "JWT, signature every request"),
                                                   (d32, "DPoP, a proof every request")))):
    print(f"| {name}, no OAuth | {plain[0]:.0f} | {plain[1]:.0f} | {plain[2]:.0f} | |")
    for auth, label in rows:
        per_call = 1e6 / auth[0] - 1e6 / plain[0]
        print(f"| {name}, {label} | {auth[0]:.0f} | {auth[1]:.0f} | {auth[2]:.0f} | "
              f"{per_call:+.1f} µs of wall time per call ({auth[1] - plain[1]:+.0f} µs at p50) |")
PY
