// Interop: the tasks extension's own requester (`@modelcontextprotocol/ext-tasks` 0.2.2, on the v2
// client `@modelcontextprotocol/client` 2.4.0) against the `everything` example at 2026-07-28 over
// Streamable HTTP: create, poll, result, cancel, input, failed and immediate, each through the
// package's `TaskEnabledSession`, as an application would drive it. The client negotiates the
// 2026-07-28 era with `server/discover`; as the package's README says, a 2026-07-28 tasks server
// needs the host to supply `rawDispatch` (a POST of the framed request, with the standard
// `Mcp-Method`/`Mcp-Name` headers) and `v2RequestFraming`. The package validates every task and
// result it reads against its schemas. Run by scripts/interop-tasks.sh, which installs the
// packages into a local cache.
//
//   node tests/node/ext_tasks.mjs <node_modules dir> <mcp url>
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, url] = process.argv.slice(2);
if (!modules || !url) {
    console.error('usage: ext_tasks.mjs <node_modules dir> <mcp url>');
    process.exit(2);
}
const root = path.resolve(modules);
const load = (file) => import(pathToFileURL(path.join(root, file)).href);
const version = (name) =>
    JSON.parse(readFileSync(path.join(root, name, 'package.json'), 'utf8')).version;
const { Client, StreamableHTTPClientTransport } = await load(
    '@modelcontextprotocol/client/dist/index.mjs',
);
const { createTaskSessionFromClient, resultFromTaskOutcome, TaskFailedError } = await load(
    '@modelcontextprotocol/ext-tasks/dist/client/index.js',
);

const PROTOCOL = '2026-07-28';
const clientInfo = { name: 'ext-tasks-interop', version: '1.0.0' };
const clientCapabilities = { elicitation: {} };

/// The host's request path for 2026-07-28 task traffic: one POST per framed request.
let nextId = 1;
async function rawDispatch(request, options = {}) {
    const params = request.params ?? {};
    // The package's own headers (it names the task in `Mcp-Name`) win; the rest as any
    // 2026-07-28 client sends them.
    const headers = new Headers(options.context?.headers ?? {});
    const standard = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        'mcp-method': request.method,
    };
    if (request.method === 'tools/call') standard['mcp-name'] = params.name;
    if (request.method.startsWith('tasks/')) standard['mcp-name'] = params.taskId;
    for (const [name, value] of Object.entries(standard)) {
        if (!headers.has(name)) headers.set(name, value);
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: request.method, params });
    const response = await fetch(url, { method: 'POST', headers, body, signal: options.signal });
    const text = await response.text();
    let message;
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        message = text
            .split(/\r?\n/)
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .filter((data) => data.length > 0)
            .map((data) => JSON.parse(data))
            .find((m) => 'result' in m || 'error' in m);
    } else {
        message = JSON.parse(text);
    }
    assert.ok(message, `no JSON-RPC response to ${request.method}: ${text.slice(0, 300)}`);
    return 'error' in message
        ? { kind: 'error', error: message.error }
        : { kind: 'result', result: message.result };
}

const questions = [];
const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: PROTOCOL } },
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: 15000 });
assert.equal(client.getProtocolEra(), 'modern', 'the 2026-07-28 era was negotiated');
const session = createTaskSessionFromClient(client, {
    endpointId: 'everything-interop',
    rawDispatch,
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
    onInputRequest: async (request) => {
        questions.push(request);
        assert.equal(request.kind, 'elicitation');
        return { action: 'accept', content: { confirm: true } };
    },
});

const passed = [];
async function scenario(name, run) {
    await run();
    passed.push(name);
    console.log(`ok - ${name}`);
}

try {
    assert.equal(session.capabilities.execution, true, 'the server serves task execution');

    let createdId;
    await scenario('create', async () => {
        const execution = await session.callTool('slow_compute', { seconds: 1.5, label: 'ext' });
        assert.equal(execution.kind, 'task');
        createdId = execution.handle.taskId;
        assert.ok(createdId.length >= 22, `an unguessable id: ${createdId}`);
        const snapshot = await session.task(createdId).snapshot();
        assert.ok(['working', 'completed'].includes(snapshot.status), snapshot.status);
        assert.ok(snapshot.retentionMs > 0);
        await execution.detach();
    });

    await scenario('poll', async () => {
        const controller = session.task(createdId);
        const seen = new Set();
        const deadline = Date.now() + 15000;
        for (;;) {
            const view = await controller.snapshot();
            seen.add(view.status);
            if (view.status === 'completed') break;
            assert.equal(view.status, 'working');
            assert.ok(Date.now() < deadline, `still ${view.status}`);
            await new Promise((resolve) => setTimeout(resolve, view.suggestedPollIntervalMs ?? 200));
        }
        assert.ok(seen.has('completed'), [...seen].join());
    });

    await scenario('result', async () => {
        const outcome = await session.task(createdId).result();
        assert.equal(outcome.status, 'completed', outcome.error?.message);
        const result = resultFromTaskOutcome(outcome);
        assert.match(result.content[0].text, /ext: computed for 1.5 s/);
        // Settling a fresh call reads the same way, through its own events.
        const execution = await session.callTool('slow_compute', { seconds: 0.3, label: 'settle' });
        const events = [];
        const { outcome: settled } = await execution.settle({ onEvent: (e) => events.push(e.type) });
        assert.equal(settled.status, 'completed');
        assert.match(settled.result.content[0].text, /settle: computed/);
        assert.ok(events.includes('outcome'), events.join());
    });

    await scenario('cancel', async () => {
        const execution = await session.callTool('slow_compute', { seconds: 60, label: 'long' });
        assert.equal(execution.kind, 'task');
        await execution.cancel();
        const outcome = await execution.result();
        assert.equal(outcome.status, 'cancelled');
        const view = await session.task(execution.handle.taskId).snapshot();
        assert.equal(view.status, 'cancelled');
    });

    await scenario('input', async () => {
        const execution = await session.callTool('confirm_delete', { filename: 'notes.txt' });
        assert.equal(execution.kind, 'task');
        const { outcome } = await execution.settle();
        assert.equal(outcome.status, 'completed');
        assert.equal(outcome.result.content[0].text, 'Deleted notes.txt');
        assert.equal(questions.length, 1, 'one elicitation, answered through tasks/update');
        assert.match(JSON.stringify(questions[0].params), /notes\.txt/);
    });

    await scenario('failed', async () => {
        const execution = await session.callTool('protocol_error_job', {});
        assert.equal(execution.kind, 'task');
        const { outcome } = await execution.settle();
        assert.equal(outcome.status, 'failed');
        assert.ok(outcome.error instanceof TaskFailedError);
        assert.equal(outcome.error.code, -32603);
        // A tool error is a completed task whose result says so.
        const failing = await session.callTool('failing_job', {});
        const { outcome: toolError } = await failing.settle();
        assert.equal(toolError.status, 'completed');
        assert.equal(toolError.result.isError, true);
    });

    await scenario('immediate', async () => {
        // An optional task tool done at once answers plainly; a tool that is never a task too.
        const quick = await session.callTool('slow_compute', { seconds: 0, label: 'now' });
        assert.equal(quick.kind, 'immediate');
        const { outcome } = await quick.settle();
        assert.equal(outcome.status, 'completed');
        assert.match(outcome.result.content[0].text, /now: computed for 0 s/);
        const plain = await session.callTool('greet', { name: 'ext-tasks' });
        assert.equal(plain.kind, 'immediate');
        assert.equal(resultFromTaskOutcome(await plain.result()).content[0].text, 'Hello, ext-tasks!');
    });
} finally {
    await session.close();
    await client.close();
}
assert.deepEqual(passed, ['create', 'poll', 'result', 'cancel', 'input', 'failed', 'immediate']);
console.log(
    `ext-tasks interop with @modelcontextprotocol/ext-tasks ${version('@modelcontextprotocol/ext-tasks')}` +
        ` and @modelcontextprotocol/client ${version('@modelcontextprotocol/client')}: ${passed.length}/7 ok`,
);
