// The packaged extension (`npm run package` first; run with `npm run test:vsix`): the
// .vsix holds the bundle and what the manifest names, nothing else.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const ROOT = path.join(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const VSIX = path.join(ROOT, `${manifest.name}-${manifest.version}.vsix`);

/** The entries of a zip file: name → { method, size, compressed, offset }. */
function entries(zip) {
    const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    assert.ok(end >= 0, 'a zip file');
    const count = zip.readUInt16LE(end + 10);
    let at = zip.readUInt32LE(end + 16);
    const found = new Map();
    for (let i = 0; i < count; i++) {
        assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory entry');
        const method = zip.readUInt16LE(at + 10);
        const compressed = zip.readUInt32LE(at + 20);
        const size = zip.readUInt32LE(at + 24);
        const nameLength = zip.readUInt16LE(at + 28);
        const extraLength = zip.readUInt16LE(at + 30);
        const commentLength = zip.readUInt16LE(at + 32);
        const offset = zip.readUInt32LE(at + 42);
        const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
        found.set(name, { method, size, compressed, offset });
        at += 46 + nameLength + extraLength + commentLength;
    }
    return found;
}

function read(zip, entry) {
    const local = entry.offset;
    assert.equal(zip.readUInt32LE(local), 0x04034b50, 'a local file header');
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + entry.compressed);
    return entry.method === 0 ? data : zlib.inflateRawSync(data);
}

test('the .vsix holds the bundle, manifest, README, LICENSE, grammar and language configuration', () => {
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run \`npm run package\` first`);
    const zip = fs.readFileSync(VSIX);
    const files = entries(zip);
    assert.deepEqual([...files.keys()].sort(), [
        '[Content_Types].xml',
        'extension.vsixmanifest',
        'extension/LICENSE.txt',
        'extension/dist/extension.js',
        'extension/language-configuration.json',
        'extension/package.json',
        'extension/README.md',
        'extension/syntaxes/sync.tmLanguage.json',
    ].sort());

    // The manifest packaged is this one, and what it names is there.
    const packaged = JSON.parse(read(zip, files.get('extension/package.json')).toString('utf8'));
    assert.equal(packaged.version, manifest.version);
    assert.equal(`extension/${path.posix.normalize(packaged.main)}`, 'extension/dist/extension.js');
    assert.ok(files.has(`extension/${path.posix.normalize(packaged.contributes.grammars[0].path)}`));
    assert.ok(files.has(`extension/${path.posix.normalize(packaged.contributes.languages[0].configuration)}`));
    assert.ok(packaged.repository.url.startsWith('https://'));

    // One bundle: vscode-languageclient is inside it; only `vscode` and Node's own
    // modules are required at run time.
    const bundle = read(zip, files.get('extension/dist/extension.js')).toString('utf8');
    const required = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]));
    const builtin = new Set(require('node:module').builtinModules);
    for (const name of required) {
        assert.ok(name === 'vscode' || builtin.has(name.replace(/^node:/, '')), `the bundle requires ${name}`);
    }
    assert.ok(bundle.includes('textDocument/didOpen'), 'the language client is bundled');

    // The repository's license.
    const license = read(zip, files.get('extension/LICENSE.txt')).toString('utf8');
    const repoLicense = path.join(ROOT, '..', '..', 'LICENSE');
    if (fs.existsSync(repoLicense)) {
        assert.equal(license, fs.readFileSync(repoLicense, 'utf8'));
    }
    assert.ok(zip.length < 1 << 20, `the .vsix is ${zip.length} bytes`);
});
