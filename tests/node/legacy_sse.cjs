// Interop: the TypeScript SDK's client for the deprecated HTTP+SSE transport of 2024-11-05
// (`SSEClientTransport`) against the `everything` example's `/sse`: connect, list the tools,
// call two. Run by scripts/interop-legacy.sh, which installs the SDK into a local cache.
//
//   node tests/node/legacy_sse.cjs <node_modules dir> <sse url>
'use strict';

const assert = require('node:assert/strict');
const { createRequire } = require('node:module');
const path = require('node:path');

const [modules, url] = process.argv.slice(2);
if (!modules || !url) {
    console.error('usage: legacy_sse.cjs <node_modules dir> <sse url>');
    process.exit(2);
}
const load = createRequire(path.join(path.resolve(modules), 'noop.js'));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { SSEClientTransport } = load('@modelcontextprotocol/sdk/client/sse.js');
const sdkVersion = JSON.parse(
    require('node:fs').readFileSync(
        path.join(modules, '@modelcontextprotocol', 'sdk', 'package.json'),
        'utf8',
    ),
).version;

async function main() {
    const client = new Client({ name: 'legacy-sse-interop', version: '1.0.0' });
    const transport = new SSEClientTransport(new URL(url));
    await client.connect(transport, { timeout: 15000 });
    try {
        assert.equal(client.getServerVersion().name, 'mcp-conformance-everything');
        // The endpoint event named this session's messages URI on the same origin.
        assert.ok(transport._endpoint, 'no endpoint event');
        assert.equal(transport._endpoint.origin, new URL(url).origin);
        assert.match(transport._endpoint.search, /^\?sessionId=[0-9a-f]{32,}$/);

        const { tools } = await client.listTools();
        const names = tools.map((tool) => tool.name);
        for (const name of ['test_simple_text', 'test_structured_content', 'test_error_handling']) {
            assert.ok(names.includes(name), `${name} missing from tools/list: ${names}`);
        }

        const simple = await client.callTool({ name: 'test_simple_text', arguments: {} });
        assert.ok(!simple.isError);
        assert.deepEqual(simple.content, [
            { type: 'text', text: 'This is a simple text response for testing.' },
        ]);

        const weather = await client.callTool({
            name: 'test_structured_content',
            arguments: { city: 'Paris' },
        });
        assert.deepEqual(weather.structuredContent, {
            city: 'Paris',
            temperature: 21.5,
            conditions: 'sunny',
        });

        const progress = [];
        const slow = await client.callTool(
            { name: 'test_tool_with_progress', arguments: {} },
            undefined,
            { onprogress: (p) => progress.push(p.progress), timeout: 15000 },
        );
        assert.ok(!slow.isError);
        // The SDK hands notifications to their handlers a microtask late, and drops a request's
        // progress handler as soon as its response is read: the last update, written right
        // before the result, can arrive in the same read and be dropped. Those before it cannot.
        assert.ok(progress.length >= 2, `progress: ${progress}`);
        assert.deepEqual(progress, [0, 50, 100].slice(0, progress.length));
    } finally {
        await client.close();
    }
    console.log(`ok: @modelcontextprotocol/sdk ${sdkVersion} SSEClientTransport: ` +
        'connected, listed tools, called three');
}

const deadline = setTimeout(() => {
    console.error('timed out after 60 s');
    process.exit(1);
}, 60000);
main().then(
    () => {
        clearTimeout(deadline);
        process.exit(0);
    },
    (error) => {
        console.error(error);
        process.exit(1);
    },
);
