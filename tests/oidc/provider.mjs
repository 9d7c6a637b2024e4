// A real authorization server for the OAuth tests: the OpenID Certified `oidc-provider`, on
// 127.0.0.1 (an ephemeral port), issuing JWT access tokens bound to a resource (RFC 8707)
// through the client-credentials grant and dynamic client registration, and opaque ones for a
// resource whose path contains `/opaque` (those are checked by introspection, RFC 7662, and can
// be revoked). Started by tests/tests/oauth.rs and by scripts/oauth-e2e.sh; prints
// `READY <issuer>` when it listens.
//
// Usage: node provider.mjs <dir holding node_modules/oidc-provider>
//
// Beside the provider, one route for the hostile-token table, `POST /test/sign`: signs the
// given claims with the provider's own key (or, with `"key": "other"`, a key the provider does
// not publish, under the provider's `kid` unless one is given), so expired, not-yet-valid,
// wrong-issuer and wrong-audience tokens are real RS256 JWTs that differ from a good one only in
// the claim under test.
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.argv[2];
if (!modules) {
  console.error('usage: node provider.mjs <dir with node_modules/oidc-provider>');
  process.exit(2);
}
const { default: Provider } = await import(
  pathToFileURL(path.join(modules, 'node_modules', 'oidc-provider', 'lib', 'index.js')).href
);

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const { privateKey: otherKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = 'test-key-1';
const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
function sign(header, claims, key) {
  const input = `${b64(header)}.${b64(claims)}`;
  const signature = crypto.sign('sha256', Buffer.from(input), key).toString('base64url');
  return `${input}.${signature}`;
}

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const SCOPES = 'notes:read notes:write admin';

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'agent',
      client_secret: 'agent-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
    },
    {
      // The MCP server's own client, for introspection.
      client_id: 'mcp-server',
      client_secret: 'mcp-server-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  clientDefaults: { grant_types: ['client_credentials'], response_types: [], scope: SCOPES },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: SCOPES,
        audience: resourceIndicator,
        accessTokenTTL: 3600,
        accessTokenFormat: resourceIndicator.includes('/opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
provider.proxy = false;
const callback = provider.callback();

// Key rotation: `POST /test/rotate` adds the "other" key (kid `test-key-2`) to the JWKS this
// issuer publishes; `/jwks` is answered here so the published set can change while running.
let rotated = false;
const publicJwk = (key, id) => ({
  ...crypto.createPublicKey(key).export({ format: 'jwk' }),
  kid: id,
  alg: 'RS256',
  use: 'sig',
});

server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    rotated = true;
    res.end('{}');
    return;
  }
  if (req.method === 'GET' && req.url === '/jwks') {
    const keys = [publicJwk(privateKey, kid)];
    if (rotated) keys.push(publicJwk(otherKey, 'test-key-2'));
    res.setHeader('content-type', 'application/jwk-set+json');
    res.end(JSON.stringify({ keys }));
    return;
  }
  if (req.method === 'POST' && req.url === '/test/sign') {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const { claims, key, header } = JSON.parse(body);
      if (key === 'hs256-public') {
        // The algorithm-confusion attack: HS256 with the issuer's public key as the secret.
        const pem = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' });
        const input = `${b64({ alg: 'HS256', typ: 'at+jwt', kid })}.${b64(claims)}`;
        const mac = crypto.createHmac('sha256', pem).update(input).digest('base64url');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ token: `${input}.${mac}` }));
        return;
      }
      const token = sign(
        { alg: 'RS256', typ: 'at+jwt', kid, ...(header || {}) },
        claims,
        key === 'other' ? otherKey : privateKey,
      );
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ token }));
    });
    return;
  }
  callback(req, res);
});

console.log(`READY ${issuer}`);
// The reader of stdout may stop after READY: the provider's notices go to stderr.
process.stdout.on('error', () => {});
console.log = console.info = console.warn = console.error;
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
