// The bundle (dist/extension.js, `npm run compile` first) loaded against a stand-in for
// the `vscode` module: activation starts nothing until a document needs the server, and
// the middleware holds back `.jsonl` files that are not call traces.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const BUNDLE = path.join(__dirname, '..', 'dist', 'extension.js');
assert.ok(fs.existsSync(BUNDLE), `${BUNDLE} is missing: run \`npm run compile\` first`);

/** Anything: callable, constructible, every property another one. */
function anything() {
    const target = function () {};
    return new Proxy(target, {
        get: (_, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => '' : anything()),
        apply: () => anything(),
        construct: () => anything(),
    });
}

/** A stand-in for `vscode` that records what the extension does. */
function fakeVscode(settings) {
    const events = { open: [], change: [], config: [] };
    const log = [];
    const errors = [];
    const commands = new Map();
    const disposable = { dispose() {} };
    const on = (list) => (listener) => {
        list.push(listener);
        return disposable;
    };
    const vscode = new Proxy(
        {
            window: new Proxy(
                {
                    createOutputChannel: () => ({ appendLine: (line) => log.push(line), show() {}, dispose() {} }),
                    showErrorMessage: (message) => {
                        errors.push(message);
                        return Promise.resolve(undefined);
                    },
                    showInformationMessage: () => Promise.resolve(undefined),
                },
                { get: (target, key) => (key in target ? target[key] : anything()) },
            ),
            workspace: new Proxy(
                {
                    textDocuments: [],
                    workspaceFolders: undefined,
                    onDidOpenTextDocument: on(events.open),
                    onDidChangeTextDocument: on(events.change),
                    onDidChangeConfiguration: on(events.config),
                    getConfiguration: () => ({
                        get: (key, fallback) => (key in settings ? settings[key] : fallback),
                        inspect: () => undefined,
                    }),
                    asRelativePath: (uri) => uri.fsPath,
                },
                { get: (target, key) => (key in target ? target[key] : anything()) },
            ),
            commands: new Proxy(
                {
                    registerCommand: (name, callback) => {
                        commands.set(name, callback);
                        return disposable;
                    },
                },
                { get: (target, key) => (key in target ? target[key] : anything()) },
            ),
            CodeActionKind: { QuickFix: 'quickfix' },
            languages: new Proxy(
                { registerCodeActionsProvider: () => disposable },
                { get: (target, key) => (key in target ? target[key] : anything()) },
            ),
        },
        { get: (target, key) => (key in target ? target[key] : anything()) },
    );
    return { vscode, events, log, errors, commands };
}

/** Load a fresh copy of the bundle with `vscode` resolving to `fake`. */
function loadBundle(fake) {
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
        return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
    };
    require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: fake };
    delete require.cache[BUNDLE];
    try {
        return require(BUNDLE);
    } finally {
        Module._resolveFilename = resolve;
        delete require.cache.vscode;
    }
}

const doc = (file, languageId, text, scheme = 'file') => ({
    uri: { scheme, fsPath: file, path: file, toString: () => `${scheme}://${file}` },
    languageId,
    getText: () => text,
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

test('activation starts no server until a document can hold synchronization code', async () => {
    const fake = fakeVscode({ path: '/nonexistent/syncguard' });
    const extension = loadBundle(fake.vscode);
    extension.activate({ subscriptions: [] });
    assert.deepEqual([...fake.commands.keys()].sort(), ['syncguard.restartServer', 'syncguard.showTimeline']);
    await settle();
    assert.deepEqual(fake.errors, [], 'nothing is started at activation');

    for (const listener of fake.events.open) {
        listener(doc('/w/main.cpp', 'cpp', '#include <vector>\nint main() { return 0; }\n'));
        listener(doc('/w/train.py', 'python', 'import torch\nx = torch.ones(2)\n'));
        listener(doc('/w/data.jsonl', 'plaintext', '{"prompt": "p", "completion": "c"}\n'));
    }
    await settle();
    assert.deepEqual(fake.errors, [], 'no file so far needs the server');

    for (const listener of fake.events.open) {
        listener(doc('/w/stream.cpp', 'cpp', 'void f(aclrtStream s) { aclrtSynchronizeStream(s); }\n'));
    }
    await settle();
    // The start was tried: the executable of the settings is missing, which it says.
    assert.equal(fake.errors.length, 1);
    assert.match(fake.errors[0], /cannot find the `\/nonexistent\/syncguard` executable/);
    assert.ok(fake.log.some((line) => line.includes('/w/stream.cpp starts the language server')));
    await extension.deactivate();
});

test('an edit that adds a synchronization call starts the server', async () => {
    const fake = fakeVscode({ path: '/nonexistent/syncguard' });
    const extension = loadBundle(fake.vscode);
    extension.activate({ subscriptions: [] });
    const document = doc('/w/main.py', 'python', 'import os\n');
    fake.events.open.forEach((listener) => listener(document));
    await settle();
    assert.deepEqual(fake.errors, []);
    document.getText = () => 'import os\nimport acl\n';
    fake.events.change.forEach((listener) => listener({ document, contentChanges: [{}] }));
    await settle();
    assert.equal(fake.errors.length, 1);
    await extension.deactivate();
});

test('a .jsonl that is not a call trace is held back until it becomes one', async () => {
    const fake = fakeVscode({});
    const { traceFilter } = loadBundle(fake.vscode);
    const sent = [];
    const client = {
        sendNotification: (type, params) => {
            sent.push(['open(direct)', params.textDocument.uri]);
            return Promise.resolve();
        },
        code2ProtocolConverter: {
            asOpenTextDocumentParams: (document) => ({ textDocument: { uri: document.uri.toString() } }),
        },
    };
    const middleware = traceFilter(() => client);
    const next = (what) => (arg) => {
        sent.push([what, (arg.document ?? arg).uri.toString()]);
        return Promise.resolve();
    };

    const data = doc('/w/data.jsonl', 'plaintext', '{"question": "q"}\n');
    const trace = doc('/w/run.jsonl', 'plaintext', '{"syncguard_trace": 1}\n');
    const model = doc('/w/a.sync', 'sync', '');
    await middleware.didOpen(data, next('open'));
    await middleware.didOpen(trace, next('open'));
    await middleware.didOpen(model, next('open'));
    assert.deepEqual(sent, [
        ['open', 'file:///w/run.jsonl'],
        ['open', 'file:///w/a.sync'],
    ]);

    sent.length = 0;
    await middleware.didChange({ document: data }, next('change'));
    await middleware.didSave(data, next('save'));
    await middleware.didChange({ document: trace }, next('change'));
    assert.deepEqual(sent, [['change', 'file:///w/run.jsonl']], 'a held file sends nothing');

    // Edited into a trace: opened with its text, then followed as any other.
    sent.length = 0;
    data.getText = () => '{"api": "aclrtCreateStream"}\n';
    await middleware.didChange({ document: data }, next('change'));
    await middleware.didChange({ document: data }, next('change'));
    await middleware.didClose(data, next('close'));
    assert.deepEqual(sent, [
        ['open(direct)', 'file:///w/data.jsonl'],
        ['change', 'file:///w/data.jsonl'],
        ['close', 'file:///w/data.jsonl'],
    ]);

    // A held file closes without a word to the server.
    sent.length = 0;
    const other = doc('/w/other.jsonl', 'plaintext', '[1, 2]\n');
    await middleware.didOpen(other, next('open'));
    await middleware.didClose(other, next('close'));
    assert.deepEqual(sent, []);
});
