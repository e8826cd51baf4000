// Which documents start the server, and which `.jsonl` files it is handed (compiled
// code: run `npm run compile` first). Where the extension sits in its checkout, the
// rules are also held against the repository: the API catalogue, the example and
// fixture sources, and `syncguard check DIR` itself when a build is there.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'out', 'relevance.js');
assert.ok(fs.existsSync(compiled), `${compiled} is missing: run \`npm run compile\` first`);
const { isCallTraceText, isRecordText, kindOf, mentionsSyncApi, startsServer, parseJson, TRACE_HEAD_BYTES } = require(compiled);

const { REPO } = require('./binary');

const { syncguardBinary } = require('./binary');

test('a document is what the server takes it for: extension first, then language', () => {
    assert.equal(kindOf('/w/a.sync', 'plaintext'), 'sync');
    assert.equal(kindOf('/w/run.jsonl', 'plaintext'), 'trace');
    assert.equal(kindOf('/w/run.ndjson', 'json'), 'trace');
    assert.equal(kindOf('/w/k.cu', 'cuda-cpp'), 'cpp');
    assert.equal(kindOf('/w/k.asc', 'plaintext'), 'cpp');
    assert.equal(kindOf('/w/m.pyi', 'python'), 'python');
    assert.equal(kindOf('/w/noext', 'cpp'), 'cpp');
    assert.equal(kindOf('/w/noext', 'python'), 'python');
    assert.equal(kindOf('/w/notes.md', 'markdown'), undefined);
    // JSON may be a record of a run; its text decides (`isRecordText`).
    assert.equal(kindOf('/w/data.json', 'json'), 'record');
    assert.equal(kindOf('/w/dumps/nccl_trace_rank_3', 'plaintext'), 'record');
    assert.equal(kindOf('/w/Makefile.v2', 'plaintext'), undefined);
});

/** The repository's records of a run, and JSON that is none. */
const RECORDS = [
    ['tests/fixtures/profiles/kineto/fail_wait_on_recording_stream.json', true],
    ['tests/fixtures/profiles/graph/fail_collectives_ready_together.json', true],
    ['tests/fixtures/profiles/ascend/fail_wait_without_record/node0_0_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json', true],
    ['analyzer/tests/fixtures/SG901/fail_desync/nccl_trace_rank_0.json', true],
    ['tests/fixtures/profiles/kineto_et/fail_race_across_streams/rank0_et.json', false],
    ['editors/vscode/package.json', false],
    ['editors/vscode/tsconfig.json', false],
];

test('records of a run start the server, other JSON does not', () => {
    for (const [file, record] of RECORDS) {
        const text = fs.readFileSync(path.join(REPO, file), 'utf8');
        assert.equal(isRecordText(text), record, file);
        assert.equal(startsServer(`/w/${path.basename(file)}`, 'json', 'file', () => text), record, file);
    }
    assert.equal(isRecordText(''), false);
    assert.equal(isRecordText('[1, 2, 3]'), false);
    assert.equal(isRecordText('{"name": "package", "traceEvents": 3}'), false);
    assert.equal(startsServer('/w/graph_1.json', 'json', 'untitled', () => '[{"tid": "stream1", "Task Id": 0}]'), false);
});

test('the same JSON files are records as `syncguard check` takes them', { skip: syncguardBinary() === undefined }, () => {
    const binary = syncguardBinary();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-json-'));
    try {
        // An execution trace alone is checked as an unpaired note, not as a record the
        // server opens: it is left out here.
        RECORDS.filter(([file]) => !file.endsWith('_et.json')).forEach(([file], index) => {
            const dir = path.join(root, `case${index}`);
            fs.mkdirSync(dir);
            const text = fs.readFileSync(path.join(REPO, file), 'utf8');
            fs.writeFileSync(path.join(dir, path.basename(file)), text);
            const run = spawnSync(binary, ['check', '--isolated', '--format', 'json', dir], { encoding: 'utf8' });
            assert.equal(run.error, undefined, `${binary} ran`);
            const checked = JSON.parse(run.stdout).summary.files > 0;
            assert.equal(checked, isRecordText(text), `${file}\n${run.stderr}`);
        });
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
});

test('C/C++ sources that call a synchronization API start the server', () => {
    const yes = [
        'aclrtRecordEvent(ev, s1);',
        'CHECK(aclrtSynchronizeStream(stream));',
        'aclInit(nullptr);',
        'aclmdlExecuteAsync(model, in, out, s);',
        'cudaStreamWaitEvent(s, e, 0);',
        'cuStreamWaitValue32(s, addr, 1, 0);',
        'HcclAllReduce(a, b, n, t, op, comm, s);',
        'HcommWriteNotify(thread, channel, 0);',
        'ncclAllReduce(a, b, n, t, op, comm, s);',
        'AscendC::SetNextTaskStart();',
        'KernelLaunchInfo::CreateHcomRecordTask(ctx, 0);',
        'SetFlag<HardEvent::MTE2_V>(eventId);',
        'WaitFlag<HardEvent::V_MTE3>(id);',
        'PipeBarrier<PIPE_ALL>();',
        'extern "C" __global__ __aicore__ void k(GM_ADDR x) {}',
        'k<<<grid, block, 0, s>>>(x);',
        '// syncguard: ranks 4',
    ];
    for (const text of yes) {
        assert.ok(mentionsSyncApi('cpp', `int f() {\n    ${text}\n}\n`), text);
    }
    const no = [
        '#include <vector>\nint main() { std::vector<int> v; return v.size(); }',
        'int accumulate(int x) { return x << 2; }',
        'void cuda_free_list(); // lowercase, no API',
        'struct Hcclx {}; int aclr = 0; int cudax = 1;',
        'const char *s = "oracle"; int miracle();',
    ];
    for (const text of no) {
        assert.ok(!mentionsSyncApi('cpp', text), text);
    }
});

test('Python sources that use pyACL, torch_npu or device tensors start the server', () => {
    const yes = [
        'import acl\n',
        'ret = acl.rt.record_event(ev, stream)\n',
        'import torch_npu\n',
        's = torch.npu.Stream()\n',
        'torch.cuda.synchronize()\n',
        'import torch.distributed as dist\n',
        'x = torch.ones(4).npu()\n',
        'x = torch.zeros(4, device="npu:0")\n',
        "y = torch.empty(8, device='cuda')\n",
        '# syncguard: ignore[SG601] reason\n',
    ];
    for (const text of yes) {
        assert.ok(mentionsSyncApi('python', text), text);
    }
    const no = [
        'import numpy as np\nx = np.zeros(4)\n',
        'import torch\nx = torch.ones(4) + 1\n',
        'self.acl.value = 1\n',
        'oracle.run()\n',
        'print("cudadevice")\n',
    ];
    for (const text of no) {
        assert.ok(!mentionsSyncApi('python', text), text);
    }
});

test('what starts the server', () => {
    const text = (value) => () => value;
    assert.ok(startsServer('/w/a.sync', 'sync', 'file', text('')));
    assert.ok(startsServer('/w/Untitled-1', 'sync', 'untitled', text('')));
    assert.ok(startsServer('/w/run.jsonl', 'plaintext', 'file', text('{"api": "aclrtCreateStream"}\n')));
    assert.ok(!startsServer('/w/data.jsonl', 'plaintext', 'file', text('{"question": "q"}\n')));
    assert.ok(startsServer('/w/main.cpp', 'cpp', 'file', text('aclrtSetDevice(0);')));
    assert.ok(!startsServer('/w/main.cpp', 'cpp', 'file', text('int main() {}')));
    assert.ok(startsServer('/w/k.asc', 'plaintext', 'file', text('__aicore__ void k() {}')));
    assert.ok(startsServer('/w/train.py', 'python', 'file', text('import torch_npu')));
    assert.ok(!startsServer('/w/train.py', 'python', 'file', text('import os')));
    // Not on disk, or a language the client does not serve.
    assert.ok(!startsServer('/w/main.cpp', 'cpp', 'git', text('aclrtSetDevice(0);')));
    assert.ok(!startsServer('/w/notes.md', 'markdown', 'file', text('aclrtSetDevice(0);')));
    // The text is read only when the kind needs it.
    assert.ok(startsServer('/w/a.sync', 'sync', 'file', () => assert.fail('a .sync file is not read')));
    assert.ok(!startsServer('/w/notes.md', 'markdown', 'file', () => assert.fail('markdown is not read')));
});

/** Catalogued API names: `host("name", ...)`, `gen_task(...)`, `core(...)` in model/src/api.rs. */
function cataloguedNames() {
    const file = path.join(REPO, 'model', 'src', 'api.rs');
    if (!fs.existsSync(file)) {
        return undefined;
    }
    const source = fs.readFileSync(file, 'utf8');
    const table = source.slice(source.indexOf('pub static APIS'));
    return [...table.matchAll(/\b(?:host|gen_task|core)\(\s*"([^"]+)"/g)].map((match) => match[1]);
}

test('every catalogued API is recognised', { skip: cataloguedNames() === undefined }, () => {
    const names = cataloguedNames();
    assert.ok(names.length > 100, `only ${names.length} catalogued names found: has api.rs changed shape?`);
    // libc and the .sync model's pseudo-operations (`kernel`, `host_read`, `existing_event`).
    const generic = names.filter((name) => /^[a-z_]+$/.test(name));
    for (const name of names) {
        if (generic.includes(name)) {
            continue;
        }
        if (/^[a-z]+\./.test(name)) {
            // pyACL: `acl.rt.create_stream`.
            assert.ok(mentionsSyncApi('python', `    ret = ${name}(a, b)`), name);
        } else {
            assert.ok(mentionsSyncApi('cpp', `    ${name}(a, b);`), name);
        }
    }
});

/** C/C++ and Python sources below `dir`, recursively. */
function sources(dir) {
    if (!fs.existsSync(dir)) {
        return [];
    }
    const found = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            found.push(...sources(full));
        } else {
            const kind = kindOf(full, '');
            if (kind === 'cpp' || kind === 'python') {
                found.push({ file: full, kind });
            }
        }
    }
    return found;
}

test('the examples and frontend fixtures with synchronization all start the server', () => {
    const all = ['examples', 'cpp/tests/fixtures', 'python/tests/fixtures'].flatMap((dir) => sources(path.join(REPO, dir)));
    if (all.length === 0) {
        return;
    }
    // A source counts when the project around it has synchronization: a single-file
    // program must mention an API itself; a folder program (`X/`) through one file.
    const byProgram = new Map();
    for (const { file, kind } of all) {
        const program = path.basename(path.dirname(file)).match(/^(fail|pass)_/) ? path.dirname(file) : file;
        const entry = byProgram.get(program) ?? { files: [], matched: false };
        entry.files.push(path.relative(REPO, file));
        entry.matched ||= mentionsSyncApi(kind, fs.readFileSync(file, 'utf8'));
        byProgram.set(program, entry);
    }
    const missed = [...byProgram.values()].filter((entry) => !entry.matched).map((entry) => entry.files.join(', '));
    assert.deepEqual(missed, [], 'sources syncguard checks that would not start the server');
});

test('call traces and other JSONL, as project/src/inputs.rs decides', () => {
    // The Rust unit tests of `is_call_trace_text`.
    assert.ok(isCallTraceText('{"syncguard_trace": 1, "world_size": 2}\n'));
    assert.ok(isCallTraceText('\n{"rank": 0, "api": "aclrtCreateStream"}\n'));
    assert.ok(isCallTraceText(''));
    assert.ok(isCallTraceText('{"syncguard_tr'));
    assert.ok(!isCallTraceText('{"question": "why", "answer": "because"}\n'));
    assert.ok(!isCallTraceText('[1, 2, 3]\n'));
    assert.ok(!isCallTraceText('{"api": 7}\n'));
    const blank = ' '.repeat(TRACE_HEAD_BYTES) + '{"label": 1}\n';
    assert.ok(isCallTraceText(blank), 'only the first 64 KiB count');

    // Blank lines, CRLF, Unicode blanks before the first line.
    assert.ok(isCallTraceText('\r\n  \t\n\u00a0\u3000\n{"api": "cudaMalloc"}\r\n'));
    assert.ok(!isCallTraceText('\r\n{"label": 1}\r\n{"api": "cudaMalloc"}\n'), 'only the first line counts');
    // A first line cut short: a trace (the reader reports it).
    for (const cut of ['{', '{"a": ', '{"a": [1, 2', '{"a": "\\u12', '{"a": 1.', '{"a": -', '{"a": tr', '{"a": 1e+']) {
        assert.ok(isCallTraceText(cut), cut);
    }
    // Not JSON, or not an object: `"api"` or `syncguard_trace` in it decides.
    assert.ok(isCallTraceText('{"api": "aclrtCreateStream",}\n'), 'a trailing comma, but a call');
    assert.ok(isCallTraceText('["api", 1]\n'));
    assert.ok(isCallTraceText('# syncguard_trace 1\n'));
    assert.ok(!isCallTraceText('{"a": 1,}\n'));
    assert.ok(!isCallTraceText('{"a": 01}\n'));
    assert.ok(!isCallTraceText('{"a": 1e400}\n'), 'a number f64 cannot hold');
    assert.ok(!isCallTraceText('{"a": 1} {"b": 2}\n'));
    assert.ok(!isCallTraceText('"text"\n'));
    assert.ok(!isCallTraceText('\u00ff\u00fe binary\n'));
    // The last `api` counts, as in serde_json's map; a nested one does not.
    assert.ok(isCallTraceText('{"api": 1, "api": "aclrtFree"}\n'));
    assert.ok(!isCallTraceText('{"api": "aclrtFree", "api": null}\n'));
    assert.ok(!isCallTraceText('{"call": {"api": "aclrtFree"}}\n'));
    // Escapes in keys count as their characters.
    assert.ok(isCallTraceText('{"\\u0061pi": "aclrtFree"}\n'));
    assert.ok(isCallTraceText('{"syncguard\\u005ftrace": 1}\n'));
    // Non-ASCII text, and a first line longer than what is read.
    assert.ok(isCallTraceText('{"note": "é—日本", "api": "aclrtFree"}\n'));
    assert.ok(isCallTraceText('{"note": "' + 'é'.repeat(TRACE_HEAD_BYTES) + '"}\n'));
});

test('parseJson tells a value cut short from a wrong one', () => {
    assert.equal(parseJson('{"a": [1, {"b": null}], "api": "x"}').kind, 'object');
    assert.equal(parseJson('{"a": "\\ud83d\\ude00"}').kind, 'object');
    assert.equal(parseJson('{"a": "\\ud83d"}').kind, 'error', 'a lone leading surrogate');
    assert.equal(parseJson('{"a": "\\ude00"}').kind, 'error', 'a lone trailing surrogate');
    assert.equal(parseJson('{"a": "\\ud83d').kind, 'eof');
    assert.equal(parseJson('{"a": "\\ud83d\\').kind, 'eof');
    assert.equal(parseJson('{"a": "tab\there"}').kind, 'error', 'a control character in a string');
    assert.equal(parseJson('{"a": "\\x"}').kind, 'error');
    assert.equal(parseJson('{a: 1}').kind, 'error');
    assert.equal(parseJson('{"a" 1}').kind, 'error');
    assert.equal(parseJson('nul').kind, 'eof');
    assert.equal(parseJson('nulx').kind, 'error');
    assert.equal(parseJson('-x').kind, 'error');
    assert.equal(parseJson('1.x').kind, 'error');
    assert.equal(parseJson('[1 2]').kind, 'error');
    assert.equal(parseJson('42').kind, 'other');
    // serde_json's nesting limit.
    assert.equal(parseJson('['.repeat(127) + ']'.repeat(127)).kind, 'other');
    assert.equal(parseJson('['.repeat(128) + ']'.repeat(128)).kind, 'error');
    assert.equal(parseJson('['.repeat(200)).kind, 'error');
});

test('the same .jsonl files are skipped as `syncguard check DIR` skips', { skip: syncguardBinary() === undefined }, () => {
    const binary = syncguardBinary();
    const cases = [
        '{"syncguard_trace": 1, "world_size": 1}\n',
        '{"rank": 0, "api": "aclrtCreateStream", "ret": 0}\n',
        '',
        '\n\n',
        '{"question": "why", "answer": "because"}\n',
        '[1, 2, 3]\n',
        '{"api": 7}\n',
        '{"api": "x",}\n',
        '["api"]\n',
        '{"a": 1,}\n',
        '{"a": 1e400}\n',
        '{"syncguard_tr',
        '{"label": "' + 'x'.repeat(TRACE_HEAD_BYTES) + '"}\n',
        ' '.repeat(TRACE_HEAD_BYTES) + '{"label": 1}\n',
        '{"note": "é", "api": "aclrtFree"}\n',
        '{"\\u0061pi": "aclrtFree"}\n',
        '{"api": "aclrtFree", "api": null}\n',
        '\u00a0\n{"label": 1}\n',
        '{"a": "\\ud83d"}\n',
    ];
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-jsonl-'));
    try {
        cases.forEach((text, index) => {
            const dir = path.join(root, `case${index}`);
            fs.mkdirSync(dir);
            fs.writeFileSync(path.join(dir, `case${index}.jsonl`), text);
            const run = spawnSync(binary, ['check', '--isolated', '--format', 'concise', dir], { encoding: 'utf8' });
            assert.equal(run.error, undefined, `${binary} ran`);
            const skipped = run.stderr.split('\n').some((line) => line.includes('skipped') && line.includes(`case${index}.jsonl`));
            assert.equal(!skipped, isCallTraceText(text), `case ${index}: ${JSON.stringify(text.slice(0, 60))}\n${run.stderr}`);
        });
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
});
