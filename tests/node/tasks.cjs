// Interop: the TypeScript SDK's client (1.32) runs task tools of the `everything` example in the
// handshake era (2025-11-25's experimental core tasks) over Streamable HTTP: the tools announce
// `execution.taskSupport`; a task is created, polled and its result read; a task that asks a
// question halfway gets its elicitation answered (on the `tasks/result` stream); a tool error is a
// completed task with `isError`; another task is cancelled; `tasks/list` shows them. Run by
// scripts/interop-tasks.sh, which installs the SDK into a local cache.
//
//   node tests/node/tasks.cjs <node_modules dir> <mcp url>
'use strict';

const assert = require('node:assert/strict');
const { createRequire } = require('node:module');
const path = require('node:path');

const [modules, url] = process.argv.slice(2);
if (!modules || !url) {
    console.error('usage: tasks.cjs <node_modules dir> <mcp url>');
    process.exit(2);
}
const load = createRequire(path.join(path.resolve(modules), 'noop.js'));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { CallToolResultSchema, ElicitRequestSchema } = load('@modelcontextprotocol/sdk/types.js');
const sdkVersion = JSON.parse(
    require('node:fs').readFileSync(
        path.join(modules, '@modelcontextprotocol', 'sdk', 'package.json'),
        'utf8',
    ),
).version;

/// Runs a task tool through the SDK's stream: every message, in order.
async function stream(client, name, args) {
    const messages = [];
    const run = client.experimental.tasks.callToolStream(
        { name, arguments: args },
        CallToolResultSchema,
        { task: { ttl: 60000 }, timeout: 30000 },
    );
    for await (const message of run) {
        messages.push(message);
    }
    return messages;
}

function finalResult(messages) {
    const last = messages[messages.length - 1];
    assert.equal(last.type, 'result', `the stream ended with ${JSON.stringify(last)}`);
    return last.result;
}

async function main() {
    const client = new Client(
        { name: 'tasks-interop', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
    );
    const questions = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        questions.push(request.params);
        return { action: 'accept', content: { confirm: true } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport, { timeout: 15000 });
    try {
        assert.equal(client.getServerVersion().name, 'mcp-conformance-everything');
        const capabilities = client.getServerCapabilities();
        assert.ok(capabilities.tasks, 'the server advertises tasks');
        assert.ok(capabilities.tasks.requests.tools.call, 'tasks for tools/call');

        const { tools } = await client.listTools();
        const support = Object.fromEntries(
            tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? 'forbidden']),
        );
        assert.equal(support.slow_compute, 'optional');
        assert.equal(support.failing_job, 'required');
        assert.equal(support.greet, 'forbidden');

        // Create, poll, result.
        const slow = await stream(client, 'slow_compute', { seconds: 1, label: 'interop' });
        assert.equal(slow[0].type, 'taskCreated');
        const slowId = slow[0].task.taskId;
        assert.ok(slowId.length >= 22, `an unguessable id: ${slowId}`);
        assert.ok(slow.some((m) => m.type === 'taskStatus' && m.task.status === 'working'));
        const slowResult = finalResult(slow);
        assert.match(slowResult.content[0].text, /interop: computed for 1 s/);

        // A question halfway: the elicitation reaches the client, tied to the task.
        const confirm = await stream(client, 'confirm_delete', { filename: 'notes.txt' });
        const confirmId = confirm[0].task.taskId;
        assert.equal(questions.length, 1, 'one elicitation');
        assert.equal(
            questions[0]._meta['io.modelcontextprotocol/related-task'].taskId,
            confirmId,
        );
        assert.equal(finalResult(confirm).content[0].text, 'Deleted notes.txt');

        // A tool error is a completed task whose result says so.
        const failing = await stream(client, 'failing_job', {});
        assert.equal(failing[0].type, 'taskCreated');
        const failingResult = finalResult(failing);
        assert.equal(failingResult.isError, true);

        // Cancel another.
        const created = await client.request(
            { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60 } } },
            load('@modelcontextprotocol/sdk/types.js').CreateTaskResultSchema,
            { task: { ttl: 60000 } },
        );
        const longId = created.task.taskId;
        assert.equal(created.task.status, 'working');
        const cancelled = await client.experimental.tasks.cancelTask(longId);
        assert.equal(cancelled.status, 'cancelled');
        const after = await client.experimental.tasks.getTask(longId);
        assert.equal(after.status, 'cancelled');
        await assert.rejects(
            client.experimental.tasks.cancelTask(longId),
            (error) => error.code === -32602,
            'cancelling an ended task is refused',
        );

        const listed = await client.experimental.tasks.listTasks();
        const ids = listed.tasks.map((task) => task.taskId);
        for (const id of [slowId, confirmId, longId]) {
            assert.ok(ids.includes(id), `tasks/list misses ${id}`);
        }

        // A second client (another session) sees none of them.
        const other = new Client({ name: 'tasks-interop-other', version: '1.0.0' });
        await other.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: 15000 });
        try {
            const theirs = await other.experimental.tasks.listTasks();
            assert.equal(theirs.tasks.length, 0);
            await assert.rejects(
                other.experimental.tasks.getTask(slowId),
                (error) => error.code === -32602,
            );
        } finally {
            await other.close();
        }
    } finally {
        await client.close();
    }
    console.log(`tasks interop with @modelcontextprotocol/sdk ${sdkVersion}: ok`);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
