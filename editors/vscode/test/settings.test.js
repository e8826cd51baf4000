// Every contributed setting does something, and the command lines they give are ones
// syncguard accepts (compiled code: run `npm run compile` first; the server is started
// for real when this checkout has a syncguard build).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const REPO = path.join(ROOT, '..', '..');
const compiled = path.join(ROOT, 'out', 'settings.js');
assert.ok(fs.existsSync(compiled), `${compiled} is missing: run \`npm run compile\` first`);
const { DEFAULTS, RESTART_SETTINGS, SETTINGS, checkArgs, configArgs, readSettings, serverArgs } = require(compiled);
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const properties = manifest.contributes.configuration.properties;

const { syncguardBinary } = require('./binary');

test('the settings the manifest contributes are the ones the code maps', () => {
    assert.deepEqual(Object.keys(properties).sort(), Object.keys(SETTINGS).sort());
    // readSettings asks for each of them but the client's own trace setting.
    const asked = [];
    readSettings((key) => {
        asked.push(`syncguard.${key}`);
        return undefined;
    });
    assert.deepEqual(asked.sort(), Object.keys(SETTINGS).filter((key) => key !== 'syncguard.trace.server').sort());
    // Defaults agree.
    assert.equal(properties['syncguard.path'].default, DEFAULTS.path);
    assert.equal(properties['syncguard.config'].default, DEFAULTS.config);
    assert.equal(properties['syncguard.isolated'].default, DEFAULTS.isolated);
    assert.equal(properties['syncguard.isolated'].type, 'boolean');
    assert.equal(properties['syncguard.config'].type, 'string');
    // Those that change what runs restart the server.
    for (const key of RESTART_SETTINGS) {
        assert.ok(key in properties, key);
    }
    // No setting is left over from before (`syncguard.args` could not start the server).
    assert.ok(!('syncguard.args' in properties));
});

test('syncguard.trace.server is read by vscode-languageclient under the client id', () => {
    assert.deepEqual(properties['syncguard.trace.server'].enum, ['off', 'messages', 'verbose']);
    const extension = fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8');
    assert.match(extension, /const CLIENT_ID = 'syncguard';/);
    const client = fs.readFileSync(require.resolve('vscode-languageclient/lib/common/client.js'), 'utf8');
    assert.match(client, /getConfiguration\(this\._id\)/);
    assert.match(client, /config\.get\('trace\.server', 'off'\)/);
});

test('wrong types are defaults; a blank path is `syncguard`', () => {
    const values = { path: '  ', config: 42, isolated: 'yes' };
    assert.deepEqual(readSettings((key) => values[key]), DEFAULTS);
    const given = { path: ' /opt/syncguard ', config: ' cfg/syncguard.toml ', isolated: true };
    assert.deepEqual(readSettings((key) => given[key]), {
        path: '/opt/syncguard',
        config: 'cfg/syncguard.toml',
        isolated: true,
    });
});

test('settings → server and check arguments', () => {
    const ws = path.resolve('/ws');
    const settings = (over) => ({ ...DEFAULTS, ...over });
    assert.deepEqual(serverArgs(settings({}), ws), ['lsp']);
    assert.deepEqual(serverArgs(settings({ isolated: true }), ws), ['lsp', '--isolated']);
    assert.deepEqual(serverArgs(settings({ config: 'syncguard.toml' }), ws), [
        'lsp',
        '--config',
        path.join(ws, 'syncguard.toml'),
    ]);
    assert.deepEqual(serverArgs(settings({ config: '${workspaceFolder}/ci/sg.toml' }), ws), [
        'lsp',
        '--config',
        path.join(ws, 'ci', 'sg.toml'),
    ]);
    assert.deepEqual(serverArgs(settings({ config: '~/sg.toml' }), ws), ['lsp', '--config', path.join(os.homedir(), 'sg.toml')]);
    // The two exclude each other in syncguard: --isolated wins, and says so.
    const both = configArgs(settings({ isolated: true, config: 'sg.toml' }), ws);
    assert.deepEqual(both.args, ['--isolated']);
    assert.equal(both.notes.length, 1);
    assert.deepEqual(checkArgs(settings({ config: 'sg.toml' }), ws, '/ws/a.sync', '/tmp/r.html'), [
        'check',
        '--config',
        path.join(ws, 'sg.toml'),
        '--format',
        'html',
        '--color',
        'never',
        '-o',
        '/tmp/r.html',
        '--',
        '/ws/a.sync',
    ]);
});

/** Start `syncguard ARGS` as the client does, initialize, shut down; resolves to its exit code. */
function startAndStop(binary, args, cwd) {
    return new Promise((resolve, reject) => {
        const server = spawn(binary, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = Buffer.alloc(0);
        let stderr = '';
        const timer = setTimeout(() => {
            server.kill();
            reject(new Error(`no answer from ${args.join(' ')}: ${stderr}`));
        }, 30000);
        const send = (message) => {
            const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
            server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
            server.stdin.write(body);
        };
        server.stderr.on('data', (data) => (stderr += data));
        server.stdout.on('data', (data) => {
            stdout = Buffer.concat([stdout, data]);
            for (;;) {
                const header = stdout.indexOf('\r\n\r\n');
                if (header < 0) {
                    return;
                }
                const length = Number(/Content-Length: (\d+)/i.exec(stdout.subarray(0, header).toString())[1]);
                if (stdout.length < header + 4 + length) {
                    return;
                }
                const message = JSON.parse(stdout.subarray(header + 4, header + 4 + length).toString('utf8'));
                stdout = stdout.subarray(header + 4 + length);
                if (message.id === 1) {
                    assert.ok(message.result && message.result.capabilities, JSON.stringify(message));
                    send({ method: 'initialized', params: {} });
                    send({ id: 2, method: 'shutdown', params: null });
                } else if (message.id === 2) {
                    send({ method: 'exit', params: null });
                }
            }
        });
        server.on('error', reject);
        server.on('exit', (code) => {
            clearTimeout(timer);
            resolve({ code, stderr });
        });
        send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
    });
}

test('each setting starts the real server', { skip: syncguardBinary() === undefined }, async () => {
    const binary = syncguardBinary();
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-settings-'));
    try {
        fs.writeFileSync(path.join(ws, 'syncguard.toml'), '');
        const variants = [
            {},
            { isolated: true },
            { config: 'syncguard.toml' },
            { config: '${workspaceFolder}/syncguard.toml' },
            { config: 'syncguard.toml', isolated: true },
        ];
        for (const over of variants) {
            const args = serverArgs({ ...DEFAULTS, ...over }, ws);
            const { code, stderr } = await startAndStop(binary, args, ws);
            assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
        }
    } finally {
        fs.rmSync(ws, { recursive: true, force: true });
    }
});
