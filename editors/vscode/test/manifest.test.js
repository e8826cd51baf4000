// The extension manifest points at files that exist and agree with each other.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

test('the sync language and its grammar are contributed', () => {
    const [language] = manifest.contributes.languages.filter((l) => l.id === 'sync');
    assert.ok(language, 'language `sync` is contributed');
    assert.deepEqual(language.extensions, ['.sync']);
    assert.ok(language.aliases.includes('Sync'));
    const configuration = JSON.parse(fs.readFileSync(path.join(ROOT, language.configuration), 'utf8'));
    assert.equal(configuration.comments.lineComment, '//');
    assert.deepEqual(configuration.comments.blockComment, ['/*', '*/']);
    // Its regular expressions compile, and indent after an opening bracket.
    const increase = new RegExp(configuration.indentationRules.increaseIndentPattern);
    const decrease = new RegExp(configuration.indentationRules.decreaseIndentPattern);
    assert.ok(increase.test('for i in 0..N {'));
    assert.ok(increase.test('let ch = HcclChannelAcquire('));
    assert.ok(!increase.test('aclrtRecordEvent(ev, s1);'));
    assert.ok(!increase.test('// a comment {'));
    assert.ok(decrease.test('    }'));
    new RegExp(configuration.wordPattern);
    new RegExp(configuration.folding.markers.start);
    for (const rule of configuration.onEnterRules) {
        new RegExp(rule.beforeText);
    }

    const [grammar] = manifest.contributes.grammars.filter((g) => g.language === 'sync');
    assert.ok(grammar, 'a grammar for `sync` is contributed');
    const raw = JSON.parse(fs.readFileSync(path.join(ROOT, grammar.path), 'utf8'));
    assert.equal(raw.scopeName, grammar.scopeName);
    assert.equal(grammar.scopeName, 'source.sync');
});

test('commands, activation and packaging fields', () => {
    const commands = manifest.contributes.commands.map((c) => c.command);
    assert.deepEqual(commands.sort(), ['syncguard.restartServer', 'syncguard.showTimeline']);
    for (const language of ['sync', 'c', 'cpp', 'cuda-cpp', 'python', 'jsonl', 'json']) {
        assert.ok(manifest.activationEvents.includes(`onLanguage:${language}`), language);
    }
    // Activation only registers listeners: the server starts for the first document that
    // needs it (src/relevance.ts), never for every file.
    assert.ok(!manifest.activationEvents.includes('*'));
    assert.equal(manifest.main, './dist/extension.js');
    assert.equal(manifest.engines.vscode, '^1.82.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '~1.82.0');
    assert.match(manifest.repository.url, /^https:\/\/github\.com\/[^/]+\/[^/]+$/);
    assert.equal(manifest.license, 'Apache-2.0');
    // The packaging tools are pinned, so that CI needs no global install.
    assert.match(manifest.devDependencies['@vscode/vsce'], /^\d+\.\d+\.\d+$/);
    assert.match(manifest.devDependencies.esbuild, /^\d+\.\d+\.\d+$/);
    assert.match(manifest.scripts.package, /^vsce package --no-dependencies/);
});

test('the extension source serves the same documents', () => {
    const source = fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8');
    for (const language of ['sync', 'c', 'cpp', 'cuda-cpp', 'python']) {
        assert.ok(source.includes(`language: '${language}'`), `documentSelector has ${language}`);
    }
    assert.ok(source.includes(`pattern: '**/*.jsonl'`));
    assert.ok(source.includes(`pattern: '**/*.json'`));
    assert.ok(source.includes(`'syncguard.restartServer'`));
    assert.ok(source.includes(`'syncguard.showTimeline'`));
});

test('the README links nothing relative (vsce rejects it)', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const [, target] of readme.matchAll(/\]\(([^)]+)\)/g)) {
        assert.match(target, /^(https:\/\/|#)/, target);
    }
});
