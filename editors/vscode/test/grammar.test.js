// The TextMate grammar for .sync loads, compiles and gives the expected scopes.
// Run with `npm test` (node --test); needs `npm ci` first.
'use strict';

const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const ROOT = path.join(__dirname, '..');
const GRAMMAR = path.join(ROOT, 'syntaxes', 'sync.tmLanguage.json');
const FIXTURE = path.join(__dirname, 'fixtures', 'sample.sync');
// The repository's examples, when the extension sits in its checkout (editors/vscode).
const EXAMPLES = path.join(ROOT, '..', '..', 'examples');

let grammar;

before(async () => {
    const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
    const registry = new vsctm.Registry({
        onigLib: Promise.resolve({
            createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
            createOnigString: (text) => new oniguruma.OnigString(text),
        }),
        loadGrammar: async (scopeName) => {
            if (scopeName !== 'source.sync') {
                return null;
            }
            return vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR);
        },
    });
    grammar = await registry.loadGrammar('source.sync');
    assert.ok(grammar, 'the grammar of source.sync loads');
});

/** Every line of `text` as a list of `{ text, scopes }` tokens. */
function tokenize(text) {
    let state = vsctm.INITIAL;
    return text.split(/\r\n|\r|\n/).map((line) => {
        const result = grammar.tokenizeLine(line, state);
        state = result.ruleStack;
        return result.tokens.map((token) => ({
            text: line.slice(token.startIndex, token.endIndex),
            scopes: token.scopes,
        }));
    });
}

/** The scopes of the token `text` on the line that starts with `linePrefix` (its `nth` occurrence). */
function scopesOf(lines, linePrefix, text, nth = 0) {
    const line = lines.find((tokens) => tokens.map((t) => t.text).join('').trimStart().startsWith(linePrefix));
    assert.ok(line, `no line starts with ${JSON.stringify(linePrefix)}`);
    const matches = line.filter((t) => t.text.trim() === text);
    assert.ok(
        matches.length > nth,
        `no token ${JSON.stringify(text)} on ${JSON.stringify(linePrefix)}; tokens: ` +
            JSON.stringify(line.map((t) => t.text)),
    );
    return matches[nth].scopes;
}

function assertScope(lines, linePrefix, text, scope, nth = 0) {
    const scopes = scopesOf(lines, linePrefix, text, nth);
    assert.ok(
        scopes.includes(scope),
        `${JSON.stringify(text)} on ${JSON.stringify(linePrefix)} has scopes ${scopes.join(' ')}, not ${scope}`,
    );
}

test('the fixture gets the expected scopes', () => {
    const lines = tokenize(fs.readFileSync(FIXTURE, 'utf8'));
    const cases = [
        // comments and the expect directive
        ['// Stream s2', '//', 'punctuation.definition.comment.sync'],
        ['// Stream s2', 'Stream s2 consumes what a kernel on s1 produced.', 'comment.line.double-slash.sync'],
        ['// expect:', 'expect', 'keyword.other.directive.expect.sync'],
        ['// expect:', 'SG202', 'constant.other.diagnostic-code.sync'],
        ['aclrtRecordEvent(ev, s1);', 'captures the producer', 'comment.line.double-slash.sync'],
        ['/* a block comment', '/*', 'punctuation.definition.comment.begin.sync'],
        ['/* a block comment', 'a block comment', 'comment.block.sync'],
        ['over two lines */', 'over two lines', 'comment.block.sync'],
        // settings and parameters
        ['target A3;', 'target', 'keyword.other.setting.sync'],
        ['target A3;', 'A3', 'constant.language.product.sync'],
        ['cann current;', 'current', 'constant.language.setting-value.sync'],
        ['ranks N in', 'ranks', 'keyword.other.ranks.sync'],
        ['ranks N in', 'N', 'variable.other.constant.parameter.sync'],
        ['ranks N in', '..=', 'keyword.operator.range.sync'],
        ['param K in', 'param', 'keyword.other.param.sync'],
        ['hccl_buffer_size', '400', 'constant.numeric.integer.sync'],
        ['hccl_buffer_size', 'MiB', 'keyword.other.unit.sync'],
        // declarations and calls
        ['let s1 =', 'let', 'storage.type.let.sync'],
        ['let s1 =', 's1', 'variable.other.definition.sync'],
        ['let s1 =', 'aclrtCreateStream', 'entity.name.function.sync'],
        ['let ev =', 'ACL_EVENT_SYNC', 'constant.other.sync'],
        ['let x = aclrtMalloc', '4', 'constant.numeric.integer.sync'],
        ['let x = aclrtMalloc', 'KiB', 'keyword.other.unit.sync'],
        ['let MASK', '0x1F', 'constant.numeric.integer.hexadecimal.sync'],
        ['let BIG', '1_000_000', 'constant.numeric.integer.decimal.sync'],
        ['aclrtRecordEvent(ev, s1);', 'aclrtRecordEvent', 'entity.name.function.sync'],
        ['aclrtRecordEvent(ev, s1);', ';', 'punctuation.terminator.statement.sync'],
        ['kernel(s1,', 'kernel', 'support.function.builtin.sync'],
        ['kernel(s1,', '"', 'punctuation.definition.string.begin.sync'],
        ['kernel(s1,', 'producer', 'string.quoted.double.sync'],
        ['kernel(s1,', 'writes', 'variable.parameter.name.sync'],
        ['kernel(s2,', '\\"', 'constant.character.escape.sync'],
        ['kernel(s2,', '\\n', 'constant.character.escape.sync'],
        ['kernel(s2,', '..', 'keyword.operator.range.sync'],
        // host code and control flow
        ['let mut offset', 'mut', 'storage.modifier.mut.sync'],
        ['while offset', 'while', 'keyword.control.loop.sync'],
        ['while offset', '<', 'keyword.operator.comparison.sync'],
        ['offset = offset', 'rank', 'variable.language.rank.sync'],
        ['offset = offset', '?', 'keyword.operator.ternary.sync'],
        ['offset = offset', 'B', 'keyword.other.unit.sync'],
        ['for i in', 'for', 'keyword.control.loop.for.sync'],
        ['for i in', 'i', 'variable.other.loop.sync'],
        ['if rank == 0', 'if', 'keyword.control.conditional.sync'],
        ['if rank == 0', '&&', 'keyword.operator.logical.sync'],
        ['aclrtSynchronizeStream(stream: s2);', 'stream', 'variable.parameter.name.sync'],
        ['} else {', 'else', 'keyword.control.conditional.sync'],
        // blocks
        ['thread poller', 'thread', 'storage.type.thread.sync'],
        ['thread poller', 'poller', 'entity.name.function.thread.sync'],
        ['op MatmulAllReduce', 'op', 'storage.type.op.sync'],
        ['op MatmulAllReduce', 'attrs', 'keyword.other.attrs.sync'],
        ['op MatmulAllReduce', 'ranks', 'variable.parameter.attribute.sync'],
        ['KernelLaunchInfo::', 'KernelLaunchInfo', 'entity.name.namespace.sync'],
        ['KernelLaunchInfo::', 'CreateHcomWaitTask', 'entity.name.function.sync'],
        ['KernelLaunchInfo::', 'stream_id', 'variable.parameter.name.sync'],
        ['superkernel fused', 'superkernel', 'storage.type.superkernel.sync'],
        ['subkernel add_custom', 'tiling_keys', 'variable.parameter.name.sync'],
        ['AscendC::SetNextTaskStart', 'SetNextTaskStart', 'entity.name.function.sync'],
        ['AscendC::SetNextTaskStart', '<', 'punctuation.definition.template.begin.sync'],
        ['AscendC::SetNextTaskStart', 'PIPE_MTE3', 'constant.other.sync'],
        ['if GetBlockIdx() < 40', '<', 'keyword.operator.comparison.sync'],
        ['if GetBlockIdx() < 40', 'GetBlockIdx', 'entity.name.function.sync'],
    ];
    for (const [linePrefix, text, scope] of cases) {
        assertScope(lines, linePrefix, text, scope);
    }
});

test('a keyword is not a call, and a call name is not a variable', () => {
    const [line] = tokenize('while aclrtQueryEventStatus(done) != ACL_EVENT_RECORDED_STATUS_COMPLETE {}');
    const byText = Object.fromEntries(line.map((t) => [t.text.trim(), t.scopes]));
    assert.ok(byText['while'].includes('keyword.control.loop.sync'));
    assert.ok(byText['aclrtQueryEventStatus'].includes('entity.name.function.sync'));
    assert.ok(!byText['aclrtQueryEventStatus'].some((s) => s.startsWith('variable.')));
    assert.ok(byText['!='].includes('keyword.operator.comparison.sync'));
    assert.ok(byText['done'].includes('variable.other.sync'));
});

test('pyACL paths, products and bad input', () => {
    const lines = tokenize(
        [
            'let s = acl.rt.create_stream();',
            'target "310P";',
            'let bad = 12abc;',
            'let q = 1 @ 2;',
            'let unterminated = "no end',
            'let after = 1;',
        ].join('\n'),
    );
    assertScope(lines, 'let s =', 'acl', 'entity.name.namespace.sync');
    assertScope(lines, 'let s =', 'rt', 'entity.name.namespace.sync');
    assertScope(lines, 'let s =', 'create_stream', 'entity.name.function.sync');
    assertScope(lines, 'target "310P"', '310P', 'string.quoted.double.sync');
    assertScope(lines, 'let bad', '12abc', 'invalid.illegal.numeric.sync');
    assertScope(lines, 'let q', '@', 'invalid.illegal.character.sync');
    // A string ends at the end of its line: the next line is code again.
    assertScope(lines, 'let after', 'let', 'storage.type.let.sync');
    assertScope(lines, 'let after', '1', 'constant.numeric.integer.decimal.sync');
});

test('a comment ends its line, a block comment spans lines', () => {
    const lines = tokenize('let a = 1; // x = 2;\n/* let b\n= 3; */ let c = 4;');
    assertScope(lines, 'let a', '1', 'constant.numeric.integer.decimal.sync');
    assert.ok(!lines[0].some((t) => t.text.includes('x =') && !t.scopes.includes('comment.line.double-slash.sync')));
    assertScope(lines, '= 3; */', '= 3;', 'comment.block.sync');
    assertScope(lines, '= 3; */', 'c', 'variable.other.definition.sync');
});

function* syncFiles(dir) {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            yield* syncFiles(full);
        } else if (entry.name.endsWith('.sync')) {
            yield full;
        }
    }
}

test("the repository's examples tokenize without invalid scopes", (t) => {
    if (!fs.existsSync(EXAMPLES)) {
        t.skip(`no examples at ${EXAMPLES}`);
        return;
    }
    const files = [...syncFiles(EXAMPLES), FIXTURE];
    assert.ok(files.length > 10, `found only ${files.length} .sync files`);
    for (const file of files) {
        const lines = tokenize(fs.readFileSync(file, 'utf8'));
        lines.forEach((tokens, index) => {
            for (const token of tokens) {
                const where = `${path.relative(ROOT, file)}:${index + 1}: ${JSON.stringify(token.text)}`;
                assert.ok(!token.scopes.some((s) => s.startsWith('invalid.')), `${where} is ${token.scopes.join(' ')}`);
                // Every piece of text that is not blank gets a scope of its own.
                if (token.text.trim() !== '') {
                    assert.ok(token.scopes.length > 1, `${where} has no scope but source.sync`);
                }
            }
        });
    }
});
