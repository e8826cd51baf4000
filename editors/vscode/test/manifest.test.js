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

test('settings, command and activation', () => {
    const properties = manifest.contributes.configuration.properties;
    assert.equal(properties['syncguard.path'].default, 'syncguard');
    assert.equal(properties['syncguard.args'].type, 'array');
    assert.deepEqual(properties['syncguard.trace.server'].enum, ['off', 'messages', 'verbose']);
    assert.ok(manifest.contributes.commands.some((c) => c.command === 'syncguard.restartServer'));
    for (const language of ['sync', 'c', 'cpp', 'cuda-cpp', 'python']) {
        assert.ok(manifest.activationEvents.includes(`onLanguage:${language}`), language);
    }
    assert.equal(manifest.main, './out/extension.js');
    assert.equal(manifest.engines.vscode, '^1.82.0');
});

test('the extension source serves the same languages', () => {
    const source = fs.readFileSync(path.join(ROOT, 'src', 'extension.ts'), 'utf8');
    for (const language of ['sync', 'c', 'cpp', 'cuda-cpp', 'python']) {
        assert.ok(source.includes(`language: '${language}'`), `documentSelector has ${language}`);
    }
    assert.ok(source.includes(`pattern: '**/*.jsonl'`));
    assert.ok(source.includes(`'syncguard.restartServer'`));
});
