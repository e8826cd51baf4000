// How the extension finds the executable that `syncguard.path` names (compiled code:
// run `npm run compile` first).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'out', 'executable.js');
assert.ok(fs.existsSync(compiled), `${compiled} is missing: run \`npm run compile\` first`);
const { expandVariables, findExecutable } = require(compiled);

function withPath(value, body) {
    const saved = process.env.PATH;
    process.env.PATH = value;
    try {
        return body();
    } finally {
        process.env.PATH = saved;
    }
}

const posix = process.platform !== 'win32';

test('a name is looked up on PATH; a missing one is undefined', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-path-'));
    try {
        const exe = path.join(dir, 'syncguard');
        fs.writeFileSync(exe, '#!/bin/sh\n');
        fs.chmodSync(exe, 0o755);
        const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-empty-'));
        const found = withPath([empty, dir].join(path.delimiter), () => findExecutable('syncguard', undefined));
        assert.equal(found, exe);
        assert.equal(withPath(empty, () => findExecutable('syncguard', undefined)), undefined);
        assert.equal(withPath('', () => findExecutable('syncguard', undefined)), undefined);
        fs.rmSync(empty, { recursive: true });
    } finally {
        fs.rmSync(dir, { recursive: true });
    }
});

test('a path is taken as it is, relative ones from the workspace folder', { skip: !posix }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-ws-'));
    try {
        fs.mkdirSync(path.join(dir, 'target', 'debug'), { recursive: true });
        const exe = path.join(dir, 'target', 'debug', 'syncguard');
        fs.writeFileSync(exe, '#!/bin/sh\n');
        assert.equal(findExecutable(exe, undefined), undefined, 'a file that is not executable is not found');
        fs.chmodSync(exe, 0o755);
        assert.equal(findExecutable(exe, undefined), exe);
        assert.equal(findExecutable('target/debug/syncguard', dir), exe);
        assert.equal(findExecutable('./target/debug/syncguard', dir), exe);
        assert.equal(findExecutable(path.join(dir, 'target'), undefined), undefined, 'a folder is not found');
        assert.equal(findExecutable(path.join(dir, 'nothing', 'syncguard'), undefined), undefined);
    } finally {
        fs.rmSync(dir, { recursive: true });
    }
});

test('~, ${userHome} and ${workspaceFolder} are expanded', () => {
    const home = os.homedir();
    assert.equal(expandVariables('~/.cargo/bin/syncguard', undefined), path.join(home, '.cargo/bin/syncguard'));
    assert.equal(expandVariables('${userHome}/bin/syncguard', undefined), `${home}/bin/syncguard`);
    assert.equal(
        expandVariables('${workspaceFolder}/target/release/syncguard', '/ws'),
        '/ws/target/release/syncguard',
    );
    assert.equal(expandVariables('syncguard', '/ws'), 'syncguard');
    assert.equal(expandVariables('a~b', undefined), 'a~b');
});
