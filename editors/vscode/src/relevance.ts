// Which open documents are syncguard's: what starts the language server, and which
// `.jsonl` and `.json` files are handed to it. No `vscode` import, so that tests can load it in
// plain Node.

/** The C/C++ frontend's extensions (`syncguard_cpp::EXTENSIONS`). */
export const CPP_EXTENSIONS = [
    'c', 'cc', 'cpp', 'cxx', 'c++', 'h', 'hh', 'hpp', 'hxx', 'cu', 'cuh', 'asc', 'aicpu',
];
/** The Python frontend's extensions (`syncguard_python::EXTENSIONS`). */
export const PYTHON_EXTENSIONS = ['py', 'pyi'];

/** VS Code's language ids of the sources the server reads. */
export const CPP_LANGUAGES = ['c', 'cpp', 'cuda-cpp', 'cuda'];
export const PYTHON_LANGUAGES = ['python'];

export type Kind = 'sync' | 'trace' | 'record' | 'cpp' | 'python';

function extensionOf(path: string): string {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dot = name.lastIndexOf('.');
    return dot < 0 ? '' : name.slice(dot + 1);
}

/**
 * What the server takes a document for, as it decides (`lsp/src/documents.rs`,
 * `Kind::of`): by the file's extension, else by the editor's language id. `undefined`:
 * not a file syncguard reads.
 */
export function kindOf(path: string, languageId: string): Kind | undefined {
    const extension = extensionOf(path);
    if (extension === 'sync') {
        return 'sync';
    }
    if (extension === 'jsonl' || extension === 'ndjson') {
        return 'trace';
    }
    if (extension === 'json') {
        return 'record';
    }
    if (CPP_EXTENSIONS.includes(extension)) {
        return 'cpp';
    }
    if (PYTHON_EXTENSIONS.includes(extension)) {
        return 'python';
    }
    if (languageId === 'sync') {
        return 'sync';
    }
    if (languageId === 'jsonl') {
        return 'trace';
    }
    if (CPP_LANGUAGES.includes(languageId)) {
        return 'cpp';
    }
    if (PYTHON_LANGUAGES.includes(languageId)) {
        return 'python';
    }
    if (isRankNumbered(path)) {
        return 'record';
    }
    return undefined;
}

/** A file name without extension that ends in a number, as PyTorch names a Flight
 * Recorder dump (`nccl_trace_rank_3`; `is_rank_numbered` in `lsp/src/documents.rs`). */
export function isRankNumbered(path: string): boolean {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return !name.includes('.') && /[0-9]$/.test(name);
}

// --- Sources that can hold synchronization code -------------------------------------

/**
 * C, C++, CUDA and Ascend C: a name of the vendors' libraries as the C/C++ frontend
 * tells them (`is_library_api` in `cpp/src/index.rs`: a prefix followed by a capital,
 * which covers every catalogued host API: `aclrtRecordEvent`, `cudaStreamWaitEvent`,
 * `HcclAllReduce`, `HcommWriteNotify`, `ncclAllReduce`, `cuStreamWaitValue32`), the
 * device-side and task-generation APIs (`AscendC::`, `KernelLaunchInfo::`), the
 * pipe flags and barriers of Ascend C kernels, an Ascend C kernel, a kernel launch
 * (`<<<`), or a `// syncguard:` comment.
 */
const CPP_SYNC =
    /\b(?:aclrt|aclmdl|acltdt|aclop|aclnn|acldvpp|aclprof|acl|cuda|cu|Hccl|Hcomm|nccl)[A-Z]|\bAscendC::|\bKernelLaunchInfo\b|\b(?:SetFlag|WaitFlag|CrossCoreSetFlag|CrossCoreWaitFlag|PipeBarrier|SyncAll|SetNextTaskStart|WaitPreTaskEnd|set_flag|wait_flag|pipe_barrier)\b|__aicore__|<<<|syncguard:/;

/**
 * Python: pyACL (`acl.rt.*`, `import acl`), torch_npu and torch's device, stream and
 * distributed APIs (`torch.npu`, `torch.cuda`, `torch.distributed`), tensors put on a
 * device (`.npu()`, `.cuda()`, `device="npu:0"`), or a `# syncguard:` comment: what
 * the Python frontend turns into calls (`python/src/walk`). CPU-only torch or numpy
 * code has none.
 */
const PYTHON_SYNC =
    /(?<![\w.])acl\.\w|\bimport\s+acl\b|\btorch_npu\b|\btorch\.(?:npu|cuda|distributed)\b|\.(?:npu|cuda)\(|["'](?:npu|cuda)\b|syncguard:/;

/** Whether source text of `kind` mentions a synchronization API syncguard knows. */
export function mentionsSyncApi(kind: 'cpp' | 'python', text: string): boolean {
    return (kind === 'cpp' ? CPP_SYNC : PYTHON_SYNC).test(text);
}

/**
 * Whether opening this document starts the language server: a `.sync` program, a
 * call trace (`.jsonl` that `isCallTraceText` takes), or a C/C++/CUDA/Python source
 * that mentions a synchronization API. Other sources do not: a C++ or Python project
 * without any gets no server.
 */
export function startsServer(path: string, languageId: string, scheme: string, text: () => string): boolean {
    const kind = kindOf(path, languageId);
    switch (kind) {
        case 'sync':
            return scheme === 'file' || scheme === 'untitled';
        case 'trace':
            return scheme === 'file' && isTracePath(path) && isCallTraceText(text());
        case 'record':
            return scheme === 'file' && isRecordPath(path) && isRecordText(text());
        case 'cpp':
        case 'python':
            return scheme === 'file' && isServedLanguage(languageId, path) && mentionsSyncApi(kind, text());
        default:
            return false;
    }
}

/** Whether the client's document selector gives the server this file at all. */
function isServedLanguage(languageId: string, path: string): boolean {
    return (
        CPP_LANGUAGES.includes(languageId) ||
        PYTHON_LANGUAGES.includes(languageId) ||
        ASCEND_C_EXTENSIONS.includes(extensionOf(path))
    );
}

/** Ascend C sources that VS Code gives no C++ language by default. */
export const ASCEND_C_EXTENSIONS = ['asc', 'aicpu'];

// --- Records of a run ----------------------------------------------------------------

/** The files the client hands the server as possible records of a run (by the
 * `**\/*.json` and `**\/*[0-9]` patterns): JSON files and rank-numbered dumps. */
export function isRecordPath(path: string): boolean {
    return path.endsWith('.json') || isRankNumbered(path);
}

/**
 * Whether text is a record of a run the server checks (`Record::of` in
 * `lsp/src/records.rs`), judged on its first 64 KiB as `syncguard check` judges a file:
 * a Flight Recorder dump in JSON form (`flight-recorder/src/dump.rs`, `sniff`), or a
 * profile (`profiles/src/lib.rs`, `sniff`): a Kineto trace, an msprof timeline or a
 * graph task dump. Any other JSON (a config, a dataset, an execution trace, which is
 * checked with its profile) is not.
 */
export function isRecordText(text: string): boolean {
    // The same 64 KiB the server sniffs (`SNIFF_BYTES`), after ASCII whitespace.
    const sniffed = head(text);
    const start = sniffed.search(/[^\t\n\f\r ]/);
    if (start < 0) {
        return false;
    }
    const has = (needle: string) => sniffed.includes(needle);
    const first = sniffed[start];
    if (first === '{') {
        const entryFields = has('"profiling_name"') || has('"collective_seq_id"') || has('"record_id"');
        const config = has('"pg_config"') && (has('"pg_status"') || has('"version"'));
        if ((has('"entries"') && entryFields) || config) {
            return true;
        }
    }
    const graphRows = has('"tid": "stream') || has('"tid":"stream');
    if (first === '[' && has('"Task Id"') && graphRows) {
        return true;
    }
    const ascend = ['"Ascend Hardware"', '"HCCL"', '"AscendCL"', '"CANN"', '"Task Type"', '"notify_id"'].some(has);
    const kineto = [
        '"cuda_runtime"', '"cuda_driver"', '"cpu_op"', '"kernel"', '"gpu_memcpy"', '"python_function"',
        '"user_annotation"', '"deviceProperties"', '"distributedInfo"', '"schemaVersion"',
    ].some(has);
    if (first === '[') {
        return has('"ph"') && ascend;
    }
    return first === '{' && has('"traceEvents"') && (ascend || kineto);
}

// --- Call traces -------------------------------------------------------------------

/** The `.jsonl` files the client hands the server (by the `**\/*.jsonl` pattern). */
export function isTracePath(path: string): boolean {
    return path.endsWith('.jsonl');
}

/** How much of a `.jsonl` file decides whether it is a call trace (`TRACE_HEAD_BYTES`). */
export const TRACE_HEAD_BYTES = 64 << 10;

/**
 * Whether text is a call trace, as `syncguard check DIR` and the server decide
 * (`is_call_trace_text` in `project/src/inputs.rs`): within its first 64 KiB, its first
 * non-blank line is a header (`{"syncguard_trace": 1, ...}`) or a call (`{"api": "..."}`);
 * blank text is an empty trace; a first line cut short (longer than 64 KiB, or still
 * being typed) counts as a trace; a first line that is not a JSON object counts if it
 * mentions `"api"` or `syncguard_trace`. Anything else (a dataset's records) is not.
 */
export function isCallTraceText(text: string): boolean {
    const first = firstLine(head(text));
    if (first === undefined) {
        return true;
    }
    const parsed = parseJson(first);
    switch (parsed.kind) {
        case 'object':
            return parsed.keys.has('syncguard_trace') || parsed.apiIsString;
        case 'eof':
            return true;
        case 'other':
        case 'error':
            // Another value, or not JSON: `"api"` or `syncguard_trace` in it decides.
            return first.includes('"api"') || first.includes('syncguard_trace');
    }
}

/** The first `TRACE_HEAD_BYTES` bytes of the text's UTF-8, decoded again (a character
 * cut in two becomes U+FFFD, as `String::from_utf8_lossy` does). */
function head(text: string): string {
    // A character is at most 4 bytes and at least one UTF-16 unit: this prefix holds
    // at least TRACE_HEAD_BYTES bytes when the text does.
    const prefix = text.length > TRACE_HEAD_BYTES ? text.slice(0, TRACE_HEAD_BYTES) : text;
    const bytes = Buffer.from(prefix, 'utf8');
    return bytes.length <= TRACE_HEAD_BYTES ? prefix : bytes.subarray(0, TRACE_HEAD_BYTES).toString('utf8');
}

/** Rust's `str::lines().find(|line| !line.trim().is_empty())`. */
function firstLine(text: string): string | undefined {
    let start = 0;
    while (start < text.length) {
        const end = text.indexOf('\n', start);
        let line = end < 0 ? text.slice(start) : text.slice(start, end);
        if (end >= 0 && line.endsWith('\r')) {
            line = line.slice(0, -1);
        }
        if (!isRustBlank(line)) {
            return line;
        }
        if (end < 0) {
            break;
        }
        start = end + 1;
    }
    return undefined;
}

/** Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` removes. */
const RUST_BLANK = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

function isRustBlank(line: string): boolean {
    return RUST_BLANK.test(line);
}

type Parsed =
    | { kind: 'object'; keys: Set<string>; apiIsString: boolean }
    | { kind: 'other' }
    | { kind: 'eof' }
    | { kind: 'error' };

class Eof {}
class SyntaxFault {}

/** serde_json's nesting limit: its 128th level is an error. */
const MAX_DEPTH = 127;

/**
 * `serde_json::from_str::<Value>`, as far as `isCallTraceText` looks at it: a top-level
 * object's keys and whether its (last) `api` is a string, another value, or an error
 * that is the input ending too soon (`is_eof`) or any other.
 */
export function parseJson(text: string): Parsed {
    let at = 0;
    let depth = 0;
    const eof = () => at >= text.length;
    const whitespace = () => {
        while (!eof() && ' \n\t\r'.includes(text[at])) {
            at++;
        }
    };
    const fail = (): never => {
        throw new SyntaxFault();
    };
    const end = (): never => {
        throw new Eof();
    };
    const literal = (word: string) => {
        for (const expected of word) {
            if (eof()) {
                end();
            }
            if (text[at++] !== expected) {
                fail();
            }
        }
    };
    const hex4 = (): number => {
        if (at + 4 > text.length) {
            end();
        }
        const digits = text.slice(at, at + 4);
        at += 4;
        if (!/^[0-9a-fA-F]{4}$/.test(digits)) {
            fail();
        }
        return parseInt(digits, 16);
    };
    const string = (): string => {
        // At the opening quote.
        at++;
        let out = '';
        for (;;) {
            if (eof()) {
                end();
            }
            const c = text[at++];
            if (c === '"') {
                return out;
            }
            if (c < ' ') {
                fail();
            }
            if (c !== '\\') {
                out += c;
                continue;
            }
            if (eof()) {
                end();
            }
            const escape = text[at++];
            const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
            if (escape in simple) {
                out += simple[escape];
                continue;
            }
            if (escape !== 'u') {
                fail();
            }
            const unit = hex4();
            if (unit >= 0xdc00 && unit <= 0xdfff) {
                fail();
            }
            if (unit < 0xd800 || unit > 0xdbff) {
                out += String.fromCharCode(unit);
                continue;
            }
            // A leading surrogate: a trailing one must follow.
            for (const expected of '\\u') {
                if (eof()) {
                    end();
                }
                if (text[at] !== expected) {
                    fail();
                }
                at++;
            }
            const trailing = hex4();
            if (trailing < 0xdc00 || trailing > 0xdfff) {
                fail();
            }
            out += String.fromCharCode(unit, trailing);
        }
    };
    const digits = () => {
        while (!eof() && text[at] >= '0' && text[at] <= '9') {
            at++;
        }
    };
    const number = () => {
        const start = at;
        if (text[at] === '-') {
            at++;
        }
        if (eof()) {
            end();
        }
        if (text[at] === '0') {
            at++;
            if (!eof() && text[at] >= '0' && text[at] <= '9') {
                fail();
            }
        } else if (text[at] >= '1' && text[at] <= '9') {
            digits();
        } else {
            fail();
        }
        if (!eof() && text[at] === '.') {
            at++;
            if (eof()) {
                end();
            }
            if (!(text[at] >= '0' && text[at] <= '9')) {
                fail();
            }
            digits();
        }
        if (!eof() && (text[at] === 'e' || text[at] === 'E')) {
            at++;
            if (!eof() && (text[at] === '+' || text[at] === '-')) {
                at++;
            }
            if (eof()) {
                end();
            }
            if (!(text[at] >= '0' && text[at] <= '9')) {
                fail();
            }
            digits();
        }
        // serde_json rejects what f64 cannot hold (`1e400`).
        if (!Number.isFinite(Number(text.slice(start, at)))) {
            fail();
        }
    };
    // Returns the value's type; an object's keys and `api` when `top`.
    const value = (top: boolean): Parsed | 'string' | 'value' => {
        whitespace();
        if (eof()) {
            end();
        }
        const c = text[at];
        if (c === '{' || c === '[') {
            if (++depth >= MAX_DEPTH + 1) {
                fail();
            }
            at++;
            const close = c === '{' ? '}' : ']';
            const keys = new Set<string>();
            let apiIsString = false;
            whitespace();
            if (eof()) {
                end();
            }
            if (text[at] === close) {
                at++;
            } else {
                for (;;) {
                    if (c === '{') {
                        whitespace();
                        if (eof()) {
                            end();
                        }
                        if (text[at] !== '"') {
                            fail();
                        }
                        const key = string();
                        whitespace();
                        if (eof()) {
                            end();
                        }
                        if (text[at++] !== ':') {
                            fail();
                        }
                        const kind = value(false);
                        keys.add(key);
                        if (key === 'api') {
                            apiIsString = kind === 'string';
                        }
                    } else {
                        value(false);
                    }
                    whitespace();
                    if (eof()) {
                        end();
                    }
                    const next = text[at++];
                    if (next === close) {
                        break;
                    }
                    if (next !== ',') {
                        fail();
                    }
                    whitespace();
                    if (!eof() && text[at] === close) {
                        // A trailing comma.
                        fail();
                    }
                }
            }
            depth--;
            return top && c === '{' ? { kind: 'object', keys, apiIsString } : 'value';
        }
        if (c === '"') {
            string();
            return 'string';
        }
        if (c === 't') {
            literal('true');
        } else if (c === 'f') {
            literal('false');
        } else if (c === 'n') {
            literal('null');
        } else if (c === '-' || (c >= '0' && c <= '9')) {
            number();
        } else {
            fail();
        }
        return 'value';
    };
    try {
        const parsed = value(true);
        whitespace();
        if (!eof()) {
            return { kind: 'error' };
        }
        return typeof parsed === 'object' ? parsed : { kind: 'other' };
    } catch (error) {
        if (error instanceof Eof) {
            return { kind: 'eof' };
        }
        if (error instanceof SyntaxFault) {
            return { kind: 'error' };
        }
        throw error;
    }
}
