//! Throughput of `syncguard check` on a tree of C/C++ operator sources, against
//! cppcheck on the same tree.
//!
//! ```sh
//! cargo bench --bench lint_throughput                       # 5,000+ files, seed 20261208
//! cargo bench --bench lint_throughput -- --files 500 --seed 7
//! cargo bench --bench lint_throughput -- --generate-only DIR  # write the tree and stop
//! ```
//!
//! The tree (generated from the seed, the same tree for the same seed) is laid out as an
//! operator repository: per Ascend operator a host program (`op_host/OP.cpp`: ACL
//! streams, `ACL_EVENT_SYNC` events handing tiles between pipeline stages, Ascend C
//! launches, a class holding the streams, helpers, a loop with a `#define` bound), its
//! tiling header and tiling source (plain C++); per CUDA operator a `.cu` program (streams,
//! events, `__global__` kernels, chunked async copies) and a `.cuh` header; and common
//! plain C++ utilities (logging, argument parsing, string and file helpers). Every file
//! is 100 to 600 lines. About one sync program in six carries a synchronization bug
//! (a missing reset, wait or synchronize); the bench checks that exactly those files
//! have findings and that no program has SG001 (syntax) or SG003/SG004 (not followed).
//!
//! The binary is `target/release/syncguard`, built by `cargo bench` itself (the bench
//! profile inherits the release profile, and cargo builds a package's binaries before
//! its benches); `SYNCGUARD_BENCH_BIN=PATH` runs another one instead. cppcheck (Debian
//! package `cppcheck`) is optional: without it the comparison is skipped.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{Rng, median, syncguard_json, time_command};

const DEFAULT_FILES: usize = 5_000;
const DEFAULT_SEED: u64 = 20_261_208;
const TREE_RUNS: usize = 3;
const SINGLE_RUNS: usize = 20;

// ---------------------------------------------------------------------------------
// Names.

const OP_BASES: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "gelu",
    "silu",
    "swiglu",
    "relu",
    "leaky_relu",
    "softmax",
    "log_softmax",
    "layer_norm",
    "rms_norm",
    "group_norm",
    "batch_norm",
    "matmul",
    "batch_matmul",
    "conv2d",
    "depthwise_conv",
    "transpose",
    "permute",
    "gather",
    "scatter_add",
    "index_select",
    "reduce_sum",
    "reduce_max",
    "reduce_mean",
    "cast",
    "rope",
    "flash_attention",
    "paged_attention",
    "top_k",
    "arg_max",
    "concat",
    "split",
    "pad",
    "slice",
    "where",
    "clip",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "dropout",
    "embedding",
    "cross_entropy",
    "adam",
    "sgd",
    "quantize",
    "dequantize",
    "moe_gating",
    "moe_routing",
    "bias_add",
    "scale",
    "axpy",
    "lerp",
    "cumsum",
    "sort",
    "nms",
    "roi_align",
    "upsample",
    "interp",
    "mish",
    "hard_swish",
    "prelu",
    "l2_norm",
    "instance_norm",
    "masked_fill",
    "one_hot",
    "tril",
    "repeat",
    "expand",
    "square",
    "abs",
    "neg",
    "reciprocal",
];
const OP_SUFFIXES: &[&str] = &[
    "", "", "_custom", "_v2", "_fused", "_grad", "_int8", "_bf16", "_fp16", "_quant", "_tiled", "_inplace", "_dynamic",
    "_v3",
];
const CATEGORIES: &[&str] = &[
    "math",
    "nn",
    "activation",
    "norm",
    "attention",
    "matmul",
    "conv",
    "transform",
    "reduce",
    "index",
    "optim",
    "quant",
    "moe",
    "vision",
    "elementwise",
    "loss",
];
const STAGE_VERBS: &[&str] = &[
    "cast_in",
    "compute",
    "reduce",
    "normalize",
    "activate",
    "cast_out",
    "pack",
    "transpose",
    "scale",
    "accumulate",
    "gather",
    "dequant",
    "quant",
    "combine",
    "mask",
];
const HELPER_NAMES: &[&str] = &[
    "WaitAndReset",
    "ConsumeEvent",
    "StreamWaitAndClear",
    "AwaitStage",
    "JoinOnEvent",
];
const CUDA_HELPERS: &[(&str, &str)] = &[
    ("CreateContext", "DestroyContext"),
    ("InitStreams", "ReleaseStreams"),
    ("SetupResources", "TeardownResources"),
    ("OpenContext", "CloseContext"),
];

struct Op {
    /// `layer_norm_fused`
    snake: String,
    /// `LayerNormFused`
    camel: String,
    /// `LAYER_NORM_FUSED`
    upper: String,
    category: &'static str,
}

fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn new_op(rng: &mut Rng, used: &mut HashSet<String>) -> Op {
    let base = format!("{}{}", rng.pick(OP_BASES), rng.pick(OP_SUFFIXES));
    let mut snake = base.clone();
    let mut n = 2;
    while !used.insert(snake.clone()) {
        snake = format!("{base}{n}");
        n += 1;
    }
    Op {
        camel: camel(&snake),
        upper: snake.to_ascii_uppercase(),
        category: CATEGORIES[rng.below(CATEGORIES.len())],
        snake,
    }
}

// ---------------------------------------------------------------------------------
// Non-synchronization code: what fills real operator files around the stream code.

fn license(out: &mut String, rng: &mut Rng) {
    let year = rng.range(2021, 2025);
    let holder = rng.pick(&[
        "Huawei Technologies Co., Ltd.",
        "The OpenOps Authors",
        "NVIDIA CORPORATION & AFFILIATES",
        "the kernel-zoo contributors",
    ]);
    let _ = write!(
        out,
        "/**\n * Copyright (c) {year} {holder}. All rights reserved.\n *\n * Licensed under the Apache License, Version 2.0 (the \"License\");\n * you may not use this file except in compliance with the License.\n * You may obtain a copy of the License at\n *\n *     http://www.apache.org/licenses/LICENSE-2.0\n *\n * Unless required by applicable law or agreed to in writing, software\n * distributed under the License is distributed on an \"AS IS\" BASIS,\n * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n * See the License for the specific language governing permissions and\n * limitations under the License.\n */\n\n"
    );
}

fn log_macros(out: &mut String, rng: &mut Rng) {
    match rng.below(3) {
        0 => out.push_str(
            "#define INFO_LOG(fmt, ...) fprintf(stdout, \"[INFO]  \" fmt \"\\n\", ##__VA_ARGS__)\n\
             #define WARN_LOG(fmt, ...) fprintf(stdout, \"[WARN]  \" fmt \"\\n\", ##__VA_ARGS__)\n\
             #define ERROR_LOG(fmt, ...) fprintf(stderr, \"[ERROR] \" fmt \"\\n\", ##__VA_ARGS__)\n\n",
        ),
        1 => out.push_str(
            "#define INFO_LOG(fmt, args...) fprintf(stdout, \"[INFO]  \" fmt \"\\n\", ##args)\n\
             #define WARN_LOG(fmt, args...) fprintf(stdout, \"[WARN]  \" fmt \"\\n\", ##args)\n\
             #define ERROR_LOG(fmt, args...) fprintf(stderr, \"[ERROR] \" fmt \"\\n\", ##args)\n\n",
        ),
        _ => out.push_str(
            "#ifndef INFO_LOG\n#define INFO_LOG(...) do { fprintf(stdout, \"[INFO] \"); fprintf(stdout, __VA_ARGS__); \\\n    fprintf(stdout, \"\\n\"); } while (0)\n#endif\n\
             #ifndef WARN_LOG\n#define WARN_LOG(...) do { fprintf(stdout, \"[WARN] \"); fprintf(stdout, __VA_ARGS__); \\\n    fprintf(stdout, \"\\n\"); } while (0)\n#endif\n\
             #ifndef ERROR_LOG\n#define ERROR_LOG(...) do { fprintf(stderr, \"[ERROR] \"); fprintf(stderr, __VA_ARGS__); \\\n    fprintf(stderr, \"\\n\"); } while (0)\n#endif\n\n",
        ),
    }
}

/// One function (or small class) of ordinary C++: tiling math, logging, parsing,
/// conversion. `tag` keeps names unique in a file. Returns the code.
fn filler_function(rng: &mut Rng, prefix: &str, tag: usize) -> String {
    let mut s = String::new();
    let align = [16, 32, 64, 128, 256, 512][rng.below(6)];
    let ub = [64, 96, 128, 192, 248][rng.below(5)] * 1024;
    match rng.below(12) {
        0 => {
            let _ = write!(
                s,
                "static inline uint32_t {prefix}CeilDiv{tag}(uint32_t a, uint32_t b)\n{{\n    if (b == 0) {{\n        return 0;\n    }}\n    return (a + b - 1) / b;\n}}\n\n\
                 static inline uint32_t {prefix}AlignUp{tag}(uint32_t a, uint32_t b)\n{{\n    return {prefix}CeilDiv{tag}(a, b) * b;\n}}\n\n\
                 static inline uint32_t {prefix}AlignDown{tag}(uint32_t a, uint32_t b)\n{{\n    if (b == 0) {{\n        return a;\n    }}\n    return a / b * b;\n}}\n\n"
            );
        }
        1 => {
            let _ = write!(
                s,
                "// Splits `total` elements over `cores` cores in blocks of {align} bytes; the tail\n// core takes what is left.\n\
                 static void {prefix}SplitCores{tag}(uint64_t total, uint32_t cores, uint32_t typeSize,\n                               uint64_t &perCore, uint64_t &tailCore, uint32_t &usedCores)\n{{\n\
                 \x20   const uint64_t alignElems = {align} / (typeSize == 0 ? 1 : typeSize);\n\
                 \x20   uint64_t blocks = (total + alignElems - 1) / alignElems;\n\
                 \x20   if (cores == 0) {{\n        cores = 1;\n    }}\n\
                 \x20   uint64_t blocksPerCore = blocks / cores;\n\
                 \x20   uint64_t rest = blocks % cores;\n\
                 \x20   if (blocksPerCore == 0) {{\n        usedCores = static_cast<uint32_t>(blocks);\n        perCore = alignElems;\n        tailCore = total - (blocks - 1) * alignElems;\n        return;\n    }}\n\
                 \x20   usedCores = cores;\n\
                 \x20   perCore = (blocksPerCore + (rest > 0 ? 1 : 0)) * alignElems;\n\
                 \x20   tailCore = total - perCore * (cores - 1);\n\
                 \x20   if (tailCore > perCore) {{\n        tailCore = perCore;\n    }}\n}}\n\n"
            );
        }
        2 => {
            let fields = [
                "totalLength",
                "tileNum",
                "tileLength",
                "lastTileLength",
                "blockLength",
                "formerNum",
                "tailNum",
            ];
            let n = rng.range(4, fields.len());
            let _ = writeln!(s, "struct {prefix}TilingParam{tag} {{");
            for field in &fields[..n] {
                let _ = writeln!(s, "    uint32_t {field} = 0;");
            }
            let _ = writeln!(s, "    float scale = 1.0f;\n    int32_t dtype = 0;\n}};\n");
            let _ = writeln!(
                s,
                "static void {prefix}DumpTiling{tag}(const {prefix}TilingParam{tag} &t)\n{{"
            );
            for field in &fields[..n] {
                let _ = writeln!(s, "    printf(\"  {field:<16}: %u\\n\", t.{field});");
            }
            let _ = writeln!(
                s,
                "    printf(\"  scale           : %f\\n\", t.scale);\n    printf(\"  dtype           : %d\\n\", t.dtype);\n}}\n"
            );
        }
        3 => {
            let _ = write!(
                s,
                "// Tiles a row of `cols` elements for a unified buffer of {ub} bytes with double\n// buffering; returns the tile length in elements.\n\
                 static uint32_t {prefix}TileLength{tag}(uint32_t cols, uint32_t typeSize, uint32_t bufferNum)\n{{\n\
                 \x20   const uint32_t ubSize = {ub};\n\
                 \x20   if (typeSize == 0 || bufferNum == 0) {{\n        return 0;\n    }}\n\
                 \x20   uint32_t maxElems = ubSize / typeSize / bufferNum / 3;\n\
                 \x20   maxElems = maxElems / {align} * {align};\n\
                 \x20   if (cols <= maxElems) {{\n        return (cols + {align} - 1) / {align} * {align};\n    }}\n\
                 \x20   uint32_t tiles = (cols + maxElems - 1) / maxElems;\n\
                 \x20   uint32_t len = (cols + tiles - 1) / tiles;\n\
                 \x20   return (len + {align} - 1) / {align} * {align};\n}}\n\n"
            );
        }
        4 => {
            let _ = write!(
                s,
                "static uint16_t {prefix}FloatToHalf{tag}(float value)\n{{\n\
                 \x20   uint32_t bits = 0;\n    memcpy(&bits, &value, sizeof(bits));\n\
                 \x20   uint32_t sign = (bits >> 16) & 0x8000u;\n\
                 \x20   int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xffu) - 127 + 15;\n\
                 \x20   uint32_t mantissa = bits & 0x7fffffu;\n\
                 \x20   if (exponent <= 0) {{\n        return static_cast<uint16_t>(sign);\n    }}\n\
                 \x20   if (exponent >= 31) {{\n        return static_cast<uint16_t>(sign | 0x7c00u);\n    }}\n\
                 \x20   return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13));\n}}\n\n\
                 static float {prefix}HalfToFloat{tag}(uint16_t half)\n{{\n\
                 \x20   uint32_t sign = (static_cast<uint32_t>(half) & 0x8000u) << 16;\n\
                 \x20   uint32_t exponent = (half >> 10) & 0x1fu;\n\
                 \x20   uint32_t mantissa = half & 0x3ffu;\n\
                 \x20   uint32_t bits = sign;\n\
                 \x20   if (exponent != 0) {{\n        bits |= ((exponent - 15 + 127) << 23) | (mantissa << 13);\n    }}\n\
                 \x20   float value = 0.0f;\n    memcpy(&value, &bits, sizeof(value));\n    return value;\n}}\n\n"
            );
        }
        5 => {
            let _ = write!(
                s,
                "static std::vector<std::string> {prefix}Split{tag}(const std::string &text, char sep)\n{{\n\
                 \x20   std::vector<std::string> parts;\n    std::string current;\n\
                 \x20   for (char c : text) {{\n        if (c == sep) {{\n            parts.push_back(current);\n            current.clear();\n        }} else {{\n            current.push_back(c);\n        }}\n    }}\n\
                 \x20   parts.push_back(current);\n    return parts;\n}}\n\n\
                 static std::string {prefix}Trim{tag}(const std::string &text)\n{{\n\
                 \x20   size_t begin = text.find_first_not_of(\" \\t\\r\\n\");\n\
                 \x20   if (begin == std::string::npos) {{\n        return std::string();\n    }}\n\
                 \x20   size_t end = text.find_last_not_of(\" \\t\\r\\n\");\n\
                 \x20   return text.substr(begin, end - begin + 1);\n}}\n\n"
            );
        }
        6 => {
            let _ = write!(
                s,
                "static int64_t {prefix}ShapeSize{tag}(const std::vector<int64_t> &shape)\n{{\n\
                 \x20   int64_t size = 1;\n    for (int64_t dim : shape) {{\n        if (dim < 0) {{\n            return -1;\n        }}\n        size *= dim;\n    }}\n    return size;\n}}\n\n\
                 static bool {prefix}Broadcast{tag}(const std::vector<int64_t> &a, const std::vector<int64_t> &b,\n                              std::vector<int64_t> &out)\n{{\n\
                 \x20   size_t rank = a.size() > b.size() ? a.size() : b.size();\n    out.assign(rank, 1);\n\
                 \x20   for (size_t i = 0; i < rank; ++i) {{\n\
                 \x20       int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];\n\
                 \x20       int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];\n\
                 \x20       if (da != db && da != 1 && db != 1) {{\n            return false;\n        }}\n\
                 \x20       out[i] = da > db ? da : db;\n    }}\n    return true;\n}}\n\n"
            );
        }
        7 => {
            let _ = write!(
                s,
                "static bool {prefix}ReadBinary{tag}(const std::string &path, void *buffer, size_t bufferSize, size_t &fileSize)\n{{\n\
                 \x20   FILE *fp = fopen(path.c_str(), \"rb\");\n\
                 \x20   if (fp == nullptr) {{\n        fprintf(stderr, \"cannot open %s\\n\", path.c_str());\n        return false;\n    }}\n\
                 \x20   fseek(fp, 0, SEEK_END);\n    long size = ftell(fp);\n    fseek(fp, 0, SEEK_SET);\n\
                 \x20   if (size < 0 || static_cast<size_t>(size) > bufferSize) {{\n        fclose(fp);\n        return false;\n    }}\n\
                 \x20   fileSize = fread(buffer, 1, static_cast<size_t>(size), fp);\n    fclose(fp);\n\
                 \x20   return fileSize == static_cast<size_t>(size);\n}}\n\n\
                 static bool {prefix}WriteBinary{tag}(const std::string &path, const void *buffer, size_t size)\n{{\n\
                 \x20   FILE *fp = fopen(path.c_str(), \"wb\");\n\
                 \x20   if (fp == nullptr) {{\n        return false;\n    }}\n\
                 \x20   size_t written = fwrite(buffer, 1, size, fp);\n    fclose(fp);\n    return written == size;\n}}\n\n"
            );
        }
        8 => {
            let _ = write!(
                s,
                "class {prefix}Timer{tag} {{\npublic:\n\
                 \x20   void Start()\n    {{\n        start_ = std::chrono::steady_clock::now();\n    }}\n\n\
                 \x20   double ElapsedMs() const\n    {{\n        auto now = std::chrono::steady_clock::now();\n        return std::chrono::duration<double, std::milli>(now - start_).count();\n    }}\n\n\
                 private:\n    std::chrono::steady_clock::time_point start_;\n}};\n\n"
            );
        }
        9 => {
            let _ = write!(
                s,
                "enum class {prefix}DataType{tag} {{\n    FLOAT32 = 0,\n    FLOAT16 = 1,\n    BFLOAT16 = 2,\n    INT8 = 3,\n    INT32 = 4,\n}};\n\n\
                 static uint32_t {prefix}TypeSize{tag}({prefix}DataType{tag} type)\n{{\n\
                 \x20   switch (type) {{\n        case {prefix}DataType{tag}::FLOAT32:\n        case {prefix}DataType{tag}::INT32:\n            return 4;\n\
                 \x20       case {prefix}DataType{tag}::FLOAT16:\n        case {prefix}DataType{tag}::BFLOAT16:\n            return 2;\n\
                 \x20       case {prefix}DataType{tag}::INT8:\n            return 1;\n        default:\n            return 0;\n    }}\n}}\n\n\
                 static const char *{prefix}TypeName{tag}({prefix}DataType{tag} type)\n{{\n\
                 \x20   switch (type) {{\n        case {prefix}DataType{tag}::FLOAT32:\n            return \"float32\";\n        case {prefix}DataType{tag}::FLOAT16:\n            return \"float16\";\n\
                 \x20       case {prefix}DataType{tag}::BFLOAT16:\n            return \"bfloat16\";\n        case {prefix}DataType{tag}::INT8:\n            return \"int8\";\n\
                 \x20       default:\n            return \"int32\";\n    }}\n}}\n\n"
            );
        }
        10 => {
            let _ = write!(
                s,
                "static double {prefix}MaxRelativeError{tag}(const float *out, const float *golden, size_t n)\n{{\n\
                 \x20   double worst = 0.0;\n\
                 \x20   for (size_t i = 0; i < n; ++i) {{\n\
                 \x20       double diff = std::fabs(static_cast<double>(out[i]) - static_cast<double>(golden[i]));\n\
                 \x20       double base = std::fabs(static_cast<double>(golden[i]));\n\
                 \x20       double rel = base > 1e-6 ? diff / base : diff;\n\
                 \x20       if (rel > worst) {{\n            worst = rel;\n        }}\n    }}\n    return worst;\n}}\n\n"
            );
        }
        _ => {
            let _ = write!(
                s,
                "struct {prefix}Options{tag} {{\n    int32_t deviceId = 0;\n    uint32_t repeat = 1;\n    bool verbose = false;\n    std::string inputDir = \"./input\";\n    std::string outputDir = \"./output\";\n}};\n\n\
                 static int {prefix}ParseOptions{tag}(int argc, char **argv, {prefix}Options{tag} &opts)\n{{\n\
                 \x20   for (int i = 1; i < argc; ++i) {{\n        std::string arg = argv[i];\n\
                 \x20       if (arg == \"--device\" && i + 1 < argc) {{\n            opts.deviceId = atoi(argv[++i]);\n\
                 \x20       }} else if (arg == \"--repeat\" && i + 1 < argc) {{\n            opts.repeat = static_cast<uint32_t>(atoi(argv[++i]));\n\
                 \x20       }} else if (arg == \"--input\" && i + 1 < argc) {{\n            opts.inputDir = argv[++i];\n\
                 \x20       }} else if (arg == \"--output\" && i + 1 < argc) {{\n            opts.outputDir = argv[++i];\n\
                 \x20       }} else if (arg == \"-v\" || arg == \"--verbose\") {{\n            opts.verbose = true;\n\
                 \x20       }} else {{\n            fprintf(stderr, \"unknown argument: %s\\n\", arg.c_str());\n            return -1;\n        }}\n    }}\n    return 0;\n}}\n\n"
            );
        }
    }
    s
}

/// Append filler functions until `out` has at least `lines` lines.
fn fill_to(out: &mut String, rng: &mut Rng, prefix: &str, lines: usize) {
    let mut tag = 0;
    while out.lines().count() < lines {
        out.push_str(&filler_function(rng, prefix, tag));
        tag += 1;
    }
}

// ---------------------------------------------------------------------------------
// Ascend operators: host program, tiling header, tiling source.

/// Which bug a sync program carries, if any.
#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// A stage waits on its input event but never resets it (SG102).
    MissingReset,
    /// A stage overwrites its output before the next stage is done reading it (SG601).
    MissingBackPressure,
    /// The host reads the output before the last stream is synchronized (SG602).
    MissingSync,
}

fn pick_bug(rng: &mut Rng) -> Bug {
    if !rng.chance(16) {
        return Bug::None;
    }
    match rng.below(3) {
        0 => Bug::MissingReset,
        1 => Bug::MissingBackPressure,
        _ => Bug::MissingSync,
    }
}

fn acl_check_macro(out: &mut String, rng: &mut Rng) {
    match rng.below(3) {
        0 => out.push_str(
            "#define ACL_CHECK(expr)                                                            \\\n\
             \x20   do {                                                                           \\\n\
             \x20       auto _ret = (expr);                                                        \\\n\
             \x20       if (_ret != ACL_SUCCESS) {                                                 \\\n\
             \x20           fprintf(stderr, \"[ERROR] %s failed: %d (%s:%d)\\n\", #expr,              \\\n\
             \x20                   static_cast<int>(_ret), __FILE__, __LINE__);                   \\\n\
             \x20           return -1;                                                             \\\n\
             \x20       }                                                                          \\\n\
             \x20   } while (0)\n\n",
        ),
        1 => out.push_str(
            "#define ACL_CHECK(expr)                                                   \\\n\
             \x20   do {                                                                  \\\n\
             \x20       aclError ret_ = (expr);                                           \\\n\
             \x20       if (ret_ != ACL_SUCCESS) {                                        \\\n\
             \x20           ERROR_LOG(\"%s returned %d\", #expr, static_cast<int>(ret_)); \\\n\
             \x20           return ret_;                                                  \\\n\
             \x20       }                                                                 \\\n\
             \x20   } while (false)\n\n",
        ),
        _ => out.push_str(
            "#define ACL_CHECK(x)                                                 \\\n\
             \x20   do {                                                         \\\n\
             \x20       const int e_ = static_cast<int>(x);                      \\\n\
             \x20       if (e_ != 0) {                                           \\\n\
             \x20           fprintf(stderr, \"acl error %d at line %d\\n\", e_,   \\\n\
             \x20                   __LINE__);                                   \\\n\
             \x20           return 1;                                            \\\n\
             \x20       }                                                        \\\n\
             \x20   } while (0)\n\n",
        ),
    }
}

/// `op_host/OP.cpp`: an N-stage tile pipeline over `streams` ACL streams.
fn ascend_host(rng: &mut Rng, op: &Op, bug: Bug, lines: usize) -> String {
    let (s_name, c, u) = (&op.snake, &op.camel, &op.upper);
    let streams = rng.range(2, 4);
    let tiles = rng.range(2, 16);
    let tile_kb = [8, 16, 32, 64, 128, 256][rng.below(6)];
    let block_dim = [1, 2, 4, 8, 16, 20, 24, 32, 40, 48][rng.below(10)];
    let helper = rng.pick(HELPER_NAMES);
    let mut verbs: Vec<&str> = Vec::new();
    while verbs.len() < streams - 1 {
        let verb = rng.pick(STAGE_VERBS);
        if !verbs.contains(&verb) {
            verbs.push(verb);
        }
    }
    // Which stage the bug is in (1-based kernel stage).
    let bug_stage = rng.range(1, streams - 1);
    // Which stage leaves out its wait for the next stage (0: the upload).
    let pressure_stage = rng.range(0, streams - 2);
    let mem_policy = rng.pick(&[
        "ACL_MEM_MALLOC_HUGE_FIRST",
        "ACL_MEM_MALLOC_NORMAL_ONLY",
        "ACL_MEM_MALLOC_HUGE_ONLY",
    ]);
    let stream_member = rng.pick(&["streams_", "stream_", "queues_"]);
    let (ready, free) = *[("ready_", "free_"), ("inReady_", "inFree_"), ("produced_", "consumed_")]
        .get(rng.below(3))
        .unwrap();
    let buf = rng.pick(&["devBuf_", "stageBuf_", "workBuf_"]);

    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "/*!\n * \\file {s_name}.cpp\n * \\brief Host program of the {s_name} operator: {streams} ACL streams run a tile\n * pipeline (upload, {}), handing each tile on with ACL_EVENT_SYNC events that the\n * consuming stream resets.\n */\n",
        verbs.join(", ")
    );
    out.push_str("#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cmath>\n#include <string>\n#include <vector>\n#include <chrono>\n#include \"acl/acl.h\"\n");
    let _ = writeln!(out, "#include \"{s_name}_tiling.h\"\n");
    log_macros(&mut out, rng);
    acl_check_macro(&mut out, rng);
    let _ = write!(
        out,
        "#define {u}_NUM_STREAMS {streams}\n#define {u}_NUM_TILES {tiles}\n#define {u}_TILE_BYTES ({tile_kb} * 1024)\n#define {u}_BLOCK_DIM {block_dim}\n#define {u}_DEVICE_ID 0\n\n"
    );
    for verb in &verbs {
        let _ = writeln!(
            out,
            "extern \"C\" __global__ __aicore__ void {s_name}_{verb}(__gm__ const uint8_t *x, __gm__ uint8_t *y);"
        );
    }
    out.push('\n');

    // Filler before the sync code: tiling and utilities used by main.
    let _ = write!(
        out,
        "namespace {{\n\nstruct {c}HostTiling {{\n    uint32_t totalLength = 0;\n    uint32_t tileNum = 0;\n    uint32_t tileLength = 0;\n    uint32_t lastTileLength = 0;\n    uint32_t blockDim = 0;\n}};\n\n\
         void Compute{c}HostTiling(uint32_t totalLength, uint32_t tileBytes, uint32_t blockDim, {c}HostTiling &tiling)\n{{\n\
         \x20   tiling.totalLength = totalLength;\n    tiling.blockDim = blockDim;\n\
         \x20   tiling.tileLength = tileBytes / static_cast<uint32_t>(sizeof(float));\n\
         \x20   tiling.tileNum = (totalLength + tiling.tileLength - 1) / tiling.tileLength;\n\
         \x20   tiling.lastTileLength = totalLength - (tiling.tileNum - 1) * tiling.tileLength;\n}}\n\n\
         void Print{c}HostTiling(const {c}HostTiling &tiling)\n{{\n\
         \x20   INFO_LOG(\"{s_name} tiling: total %u, tiles %u x %u (last %u), blockDim %u\", tiling.totalLength,\n\
         \x20            tiling.tileNum, tiling.tileLength, tiling.lastTileLength, tiling.blockDim);\n}}\n\n\
         void Fill{c}Input(float *data, size_t count, uint32_t seed)\n{{\n\
         \x20   for (size_t i = 0; i < count; ++i) {{\n        data[i] = (float)((i * 7 + seed) % 251) / 251.0f;\n    }}\n}}\n\n\
         int Check{c}Output(const float *out, size_t count)\n{{\n\
         \x20   int errors = 0;\n\
         \x20   for (size_t i = 0; i < count; ++i) {{\n        if (out[i] != out[i]) {{\n            ++errors;\n        }}\n    }}\n\
         \x20   return errors;\n}}\n\n}}  // namespace\n\n"
    );
    let filler_at = out.len();

    // The helper: wait on an event on a stream and reset it there.
    let _ = write!(
        out,
        "// Makes `stream` wait for `event` and resets the event on the same stream, so that\n// the producer can record it again for the next tile.\n\
         static int {helper}(aclrtStream stream, aclrtEvent event)\n{{\n\
         \x20   ACL_CHECK(aclrtStreamWaitEvent(stream, event));\n\
         \x20   ACL_CHECK(aclrtResetEvent(event, stream));\n    return 0;\n}}\n\n"
    );
    if bug == Bug::MissingReset {
        let _ = write!(
            out,
            "static int {helper}NoReset(aclrtStream stream, aclrtEvent event)\n{{\n\
             \x20   ACL_CHECK(aclrtStreamWaitEvent(stream, event));\n    return 0;\n}}\n\n"
        );
    }

    // The class holding the streams.
    let _ = write!(
        out,
        "class {c}Pipeline {{\npublic:\n    int Init()\n    {{\n\
         \x20       for (int s = 0; s < {u}_NUM_STREAMS; ++s) {{\n\
         \x20           ACL_CHECK(aclrtCreateStream(&{stream_member}[s]));\n\
         \x20           ACL_CHECK(aclrtMalloc(reinterpret_cast<void **>(&{buf}[s]), {u}_TILE_BYTES, {mem_policy}));\n\
         \x20       }}\n\
         \x20       for (int s = 1; s < {u}_NUM_STREAMS; ++s) {{\n\
         \x20           ACL_CHECK(aclrtCreateEventWithFlag(&{ready}[s], ACL_EVENT_SYNC));\n\
         \x20           ACL_CHECK(aclrtCreateEventWithFlag(&{free}[s], ACL_EVENT_SYNC));\n\
         \x20       }}\n        return 0;\n    }}\n\n\
         \x20   int Run(const uint8_t *hostIn, uint8_t *hostOut)\n    {{\n\
         \x20       for (int i = 0; i < {u}_NUM_TILES; ++i) {{\n"
    );
    // Stage 0: the upload.
    let _ = write!(
        out,
        "{}\
         \x20           ACL_CHECK(aclrtMemcpyAsync({buf}[0], {u}_TILE_BYTES, hostIn + i * {u}_TILE_BYTES, {u}_TILE_BYTES,\n\
         \x20                                      ACL_MEMCPY_HOST_TO_DEVICE, {stream_member}[0]));\n\
         \x20           ACL_CHECK(aclrtRecordEvent({ready}[1], {stream_member}[0]));\n",
        if bug == Bug::MissingBackPressure && pressure_stage == 0 {
            String::new()
        } else {
            format!(
                "            if (i > 0) {{\n                // Stage 1 must be done reading the previous tile.\n                ACL_CHECK({helper}({stream_member}[0], {free}[1]));\n            }}\n"
            )
        }
    );
    for stage in 1..streams {
        let verb = verbs[stage - 1];
        let wait_helper = if bug == Bug::MissingReset && stage == bug_stage {
            format!("{helper}NoReset")
        } else {
            helper.to_string()
        };
        let _ = writeln!(out, "\n            // Stage {stage}: {verb}.");
        let _ = writeln!(
            out,
            "            ACL_CHECK({wait_helper}({stream_member}[{stage}], {ready}[{stage}]));"
        );
        if stage + 1 < streams && !(bug == Bug::MissingBackPressure && stage == pressure_stage) {
            let _ = writeln!(
                out,
                "            if (i > 0) {{\n                ACL_CHECK({helper}({stream_member}[{stage}], {free}[{}]));\n            }}",
                stage + 1
            );
        }
        let _ = writeln!(
            out,
            "            {s_name}_{verb}<<<{u}_BLOCK_DIM, nullptr, {stream_member}[{stage}]>>>({buf}[{}], {buf}[{stage}]);",
            stage - 1
        );
        let _ = writeln!(
            out,
            "            ACL_CHECK(aclrtRecordEvent({free}[{stage}], {stream_member}[{stage}]));"
        );
        if stage + 1 < streams {
            let _ = writeln!(
                out,
                "            ACL_CHECK(aclrtRecordEvent({ready}[{}], {stream_member}[{stage}]));",
                stage + 1
            );
        }
    }
    let last = streams - 1;
    let _ = write!(
        out,
        "            ACL_CHECK(aclrtMemcpyAsync(hostOut + i * {u}_TILE_BYTES, {u}_TILE_BYTES, {buf}[{last}], {u}_TILE_BYTES,\n\
         \x20                                      ACL_MEMCPY_DEVICE_TO_HOST, {stream_member}[{last}]));\n        }}\n"
    );
    if bug == Bug::MissingSync {
        // Only the first stream is synchronized: the downloads on the last one may still run.
        let _ = writeln!(out, "        ACL_CHECK(aclrtSynchronizeStream({stream_member}[0]));");
    } else {
        let _ = writeln!(
            out,
            "        for (int s = 0; s < {u}_NUM_STREAMS; ++s) {{\n            ACL_CHECK(aclrtSynchronizeStream({stream_member}[s]));\n        }}"
        );
    }
    let _ = write!(
        out,
        "        return 0;\n    }}\n\n\
         \x20   void Release()\n    {{\n\
         \x20       for (int s = 1; s < {u}_NUM_STREAMS; ++s) {{\n\
         \x20           (void)aclrtDestroyEvent({ready}[s]);\n            (void)aclrtDestroyEvent({free}[s]);\n        }}\n\
         \x20       for (int s = 0; s < {u}_NUM_STREAMS; ++s) {{\n\
         \x20           (void)aclrtFree({buf}[s]);\n            (void)aclrtDestroyStream({stream_member}[s]);\n        }}\n    }}\n\n\
         private:\n\
         \x20   aclrtStream {stream_member}[{u}_NUM_STREAMS] = {{}};\n\
         \x20   aclrtEvent {ready}[{u}_NUM_STREAMS] = {{}};\n\
         \x20   aclrtEvent {free}[{u}_NUM_STREAMS] = {{}};\n\
         \x20   uint8_t *{buf}[{u}_NUM_STREAMS] = {{}};\n}};\n\n"
    );

    // main
    let seed = rng.range(1, 1000);
    let _ = write!(
        out,
        "int main()\n{{\n\
         \x20   const size_t totalBytes = static_cast<size_t>({u}_NUM_TILES) * {u}_TILE_BYTES;\n\
         \x20   {c}HostTiling tiling;\n\
         \x20   Compute{c}HostTiling(static_cast<uint32_t>(totalBytes / sizeof(float)), {u}_TILE_BYTES, {u}_BLOCK_DIM, tiling);\n\
         \x20   Print{c}HostTiling(tiling);\n\n\
         \x20   ACL_CHECK(aclInit(nullptr));\n    ACL_CHECK(aclrtSetDevice({u}_DEVICE_ID));\n\n\
         \x20   uint8_t *hostIn = nullptr;\n    uint8_t *hostOut = nullptr;\n\
         \x20   ACL_CHECK(aclrtMallocHost(reinterpret_cast<void **>(&hostIn), totalBytes));\n\
         \x20   ACL_CHECK(aclrtMallocHost(reinterpret_cast<void **>(&hostOut), totalBytes));\n\
         \x20   Fill{c}Input(reinterpret_cast<float *>(hostIn), totalBytes / sizeof(float), {seed});\n\n\
         \x20   {c}Pipeline pipeline;\n    if (pipeline.Init() != 0) {{\n        ERROR_LOG(\"init failed\");\n        return -1;\n    }}\n\
         \x20   int ret = pipeline.Run(hostIn, hostOut);\n    pipeline.Release();\n\n\
         \x20   int errors = Check{c}Output(reinterpret_cast<const float *>(hostOut), totalBytes / sizeof(float));\n\
         \x20   INFO_LOG(\"{s_name}: %d mismatches\", errors);\n\n\
         \x20   (void)aclrtFreeHost(hostIn);\n    (void)aclrtFreeHost(hostOut);\n\
         \x20   (void)aclrtResetDevice({u}_DEVICE_ID);\n    (void)aclFinalize();\n    return ret == 0 && errors == 0 ? 0 : 1;\n}}\n"
    );

    // Pad with ordinary code (before the sync code, as utilities usually are).
    let mut filler = String::new();
    let target = lines.saturating_sub(out.lines().count());
    fill_to(&mut filler, rng, c, target);
    out.insert_str(filler_at, &filler);
    out
}

/// `op_host/OP_tiling.h`: the tiling data and what the host and kernel share.
fn ascend_tiling_header(rng: &mut Rng, op: &Op, lines: usize) -> String {
    let (s_name, c, u) = (&op.snake, &op.camel, &op.upper);
    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "/*!\n * \\file {s_name}_tiling.h\n * \\brief Tiling data of {s_name}, shared by the host and the kernel.\n */\n\
         #ifndef {u}_TILING_H\n#define {u}_TILING_H\n\n#include <cstdint>\n#include <cstring>\n#include <cstdio>\n#include <cmath>\n#include <string>\n#include <vector>\n#include <chrono>\n\n"
    );
    let _ = write!(
        out,
        "constexpr uint32_t k{c}BufferNum = {};\nconstexpr uint32_t k{c}MaxCores = {};\nconstexpr uint32_t k{c}Align = {};\n\n",
        rng.range(1, 2),
        [8, 20, 24, 32, 40, 48][rng.below(6)],
        [32, 64, 256, 512][rng.below(4)]
    );
    let _ = write!(
        out,
        "struct {c}TilingData {{\n    uint32_t totalLength;\n    uint32_t tileNum;\n    uint32_t tileLength;\n    uint32_t lastTileLength;\n    uint32_t formerNum;\n    uint32_t formerLength;\n    uint32_t tailNum;\n    uint32_t tailLength;\n    float epsilon;\n    float scale;\n}};\n\n\
         void Compute{c}Tiling(uint32_t totalLength, uint32_t coreNum, uint32_t typeSize, {c}TilingData &tiling);\n\
         bool Check{c}Tiling(const {c}TilingData &tiling);\n\
         void Dump{c}Tiling(const {c}TilingData &tiling);\n\n"
    );
    let body_end = "\n#endif  // ".to_string() + u + "_TILING_H\n";
    let mut filler = String::new();
    let target = lines.saturating_sub(out.lines().count() + 2);
    fill_to(&mut filler, rng, &format!("{c}Hdr"), target);
    // Header helpers are `inline`, not `static`.
    out.push_str(&filler.replace("static ", "inline "));
    out.push_str(&body_end);
    out
}

/// `op_host/OP_tiling.cpp`: the tiling computation (no synchronization at all).
fn ascend_tiling_source(rng: &mut Rng, op: &Op, lines: usize) -> String {
    let (s_name, c) = (&op.snake, &op.camel);
    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "#include \"{s_name}_tiling.h\"\n\n#include <algorithm>\n#include <cstdio>\n\n"
    );
    let _ = write!(
        out,
        "void Compute{c}Tiling(uint32_t totalLength, uint32_t coreNum, uint32_t typeSize, {c}TilingData &tiling)\n{{\n\
         \x20   memset(&tiling, 0, sizeof(tiling));\n\
         \x20   if (coreNum == 0 || typeSize == 0) {{\n        return;\n    }}\n\
         \x20   const uint32_t alignElems = k{c}Align / typeSize;\n\
         \x20   uint32_t blocks = (totalLength + alignElems - 1) / alignElems;\n\
         \x20   uint32_t cores = std::min(coreNum, std::max(blocks, 1u));\n\
         \x20   tiling.totalLength = totalLength;\n\
         \x20   tiling.formerNum = blocks % cores == 0 ? cores : blocks % cores;\n\
         \x20   tiling.tailNum = cores - tiling.formerNum;\n\
         \x20   tiling.formerLength = (blocks + cores - 1) / cores * alignElems;\n\
         \x20   tiling.tailLength = blocks / cores * alignElems;\n\
         \x20   tiling.tileLength = tiling.formerLength / k{c}BufferNum;\n\
         \x20   if (tiling.tileLength == 0) {{\n        tiling.tileLength = alignElems;\n    }}\n\
         \x20   tiling.tileNum = (tiling.formerLength + tiling.tileLength - 1) / tiling.tileLength;\n\
         \x20   tiling.lastTileLength = tiling.formerLength - (tiling.tileNum - 1) * tiling.tileLength;\n\
         \x20   tiling.epsilon = 1e-5f;\n    tiling.scale = 1.0f;\n}}\n\n\
         bool Check{c}Tiling(const {c}TilingData &tiling)\n{{\n\
         \x20   if (tiling.tileLength == 0 || tiling.tileNum == 0) {{\n        return false;\n    }}\n\
         \x20   if (tiling.formerNum + tiling.tailNum > k{c}MaxCores) {{\n        return false;\n    }}\n\
         \x20   return tiling.lastTileLength <= tiling.tileLength;\n}}\n\n\
         void Dump{c}Tiling(const {c}TilingData &tiling)\n{{\n\
         \x20   printf(\"{s_name}: total %u former %u x %u tail %u x %u tile %u x %u (last %u)\\n\", tiling.totalLength,\n\
         \x20          tiling.formerNum, tiling.formerLength, tiling.tailNum, tiling.tailLength, tiling.tileNum,\n\
         \x20          tiling.tileLength, tiling.lastTileLength);\n}}\n\n"
    );
    fill_to(&mut out, rng, &format!("{c}Tiling"), lines);
    out
}

// ---------------------------------------------------------------------------------
// CUDA operators: a `.cu` program and a `.cuh` header.

fn cuda_program(rng: &mut Rng, op: &Op, bug: Bug, lines: usize) -> String {
    let (s_name, c, u) = (&op.snake, &op.camel, &op.upper);
    let nstreams = rng.range(2, 4);
    let nchunks = nstreams * rng.range(1, 4);
    let chunk_shift = rng.range(12, 18);
    let threads = [128, 256, 512][rng.below(3)];
    let (create, destroy) = CUDA_HELPERS[rng.below(CUDA_HELPERS.len())];
    let bug_stream = rng.range(0, nstreams - 1);
    let activation = rng.pick(&[
        "v > 0.0f ? v : 0.0f",
        "v / (1.0f + expf(-v))",
        "0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))",
        "v * w[i % wn]",
        "fminf(fmaxf(v, -6.0f), 6.0f)",
    ]);
    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "// {s_name}.cu: {nchunks} chunks over {nstreams} non-blocking streams. The weights are uploaded\n// once on a copy stream; every compute stream waits for that upload before its first kernel.\n\
         #include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cmath>\n#include <vector>\n#include <cuda_runtime.h>\n#include \"{s_name}_utils.cuh\"\n\n\
         #define CUDA_CHECK(call)                                                           \\\n\
         \x20   do {{                                                                           \\\n\
         \x20       cudaError_t err_ = (call);                                                 \\\n\
         \x20       if (err_ != cudaSuccess) {{                                                 \\\n\
         \x20           fprintf(stderr, \"CUDA error %s at %s:%d\\n\", cudaGetErrorString(err_),  \\\n\
         \x20                   __FILE__, __LINE__);                                           \\\n\
         \x20           exit(EXIT_FAILURE);                                                    \\\n\
         \x20       }}                                                                          \\\n\
         \x20   }} while (0)\n\n\
         #define {u}_NSTREAMS {nstreams}\n#define {u}_NCHUNKS {nchunks}\n#define {u}_CHUNK_ELEMS (1 << {chunk_shift})\n#define {u}_WEIGHTS 1024\n#define {u}_THREADS {threads}\n\n\
         __global__ void {s_name}_kernel(float *y, const float *x, const float *w, int n)\n{{\n\
         \x20   const int wn = {u}_WEIGHTS;\n\
         \x20   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{\n\
         \x20       float v = x[i] + w[i % wn];\n        y[i] = {activation};\n    }}\n}}\n\n"
    );
    let filler_at = out.len();
    let _ = write!(
        out,
        "struct {c}Context {{\n    cudaStream_t copyStream;\n    cudaStream_t streams[{u}_NSTREAMS];\n    cudaEvent_t weightsReady;\n    float *d_x[{u}_NSTREAMS];\n    float *d_y[{u}_NSTREAMS];\n}};\n\n\
         static int {create}({c}Context &ctx)\n{{\n\
         \x20   CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.copyStream, cudaStreamNonBlocking));\n\
         \x20   const size_t chunkBytes = {u}_CHUNK_ELEMS * sizeof(float);\n\
         \x20   for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.streams[s], cudaStreamNonBlocking));\n\
         \x20       CUDA_CHECK(cudaMalloc((void **)&ctx.d_x[s], chunkBytes));\n        CUDA_CHECK(cudaMalloc((void **)&ctx.d_y[s], chunkBytes));\n    }}\n\
         \x20   CUDA_CHECK(cudaEventCreateWithFlags(&ctx.weightsReady, cudaEventDisableTiming));\n    return 0;\n}}\n\n\
         static int {destroy}({c}Context &ctx)\n{{\n\
         \x20   CUDA_CHECK(cudaEventDestroy(ctx.weightsReady));\n\
         \x20   for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        CUDA_CHECK(cudaFree(ctx.d_x[s]));\n        CUDA_CHECK(cudaFree(ctx.d_y[s]));\n        CUDA_CHECK(cudaStreamDestroy(ctx.streams[s]));\n    }}\n\
         \x20   CUDA_CHECK(cudaStreamDestroy(ctx.copyStream));\n    return 0;\n}}\n\n\
         int main()\n{{\n\
         \x20   const int total = {u}_NCHUNKS * {u}_CHUNK_ELEMS;\n\
         \x20   const size_t chunkBytes = {u}_CHUNK_ELEMS * sizeof(float);\n\
         \x20   const size_t totalBytes = total * sizeof(float);\n\
         \x20   const size_t weightBytes = {u}_WEIGHTS * sizeof(float);\n\
         \x20   CUDA_CHECK(cudaSetDevice(0));\n\n\
         \x20   {c}Context ctx;\n    if ({create}(ctx) != 0) {{\n        return 1;\n    }}\n\n\
         \x20   float *h_x = nullptr;\n    float *h_y = nullptr;\n    float *h_w = nullptr;\n\
         \x20   float *d_w = nullptr;\n\
         \x20   CUDA_CHECK(cudaMallocHost((void **)&h_x, totalBytes));\n\
         \x20   CUDA_CHECK(cudaMallocHost((void **)&h_y, totalBytes));\n\
         \x20   CUDA_CHECK(cudaMallocHost((void **)&h_w, weightBytes));\n\
\
         \x20   CUDA_CHECK(cudaMalloc((void **)&d_w, weightBytes));\n\
         \x20   for (int i = 0; i < total; ++i) {{\n        h_x[i] = (float)(i % 97) * 0.01f;\n    }}\n\
         \x20   for (int i = 0; i < {u}_WEIGHTS; ++i) {{\n        h_w[i] = 1.0f / (float)(i + 1);\n    }}\n\n\
         \x20   CUDA_CHECK(cudaMemcpyAsync(d_w, h_w, weightBytes, cudaMemcpyHostToDevice, ctx.copyStream));\n\
         \x20   CUDA_CHECK(cudaEventRecord(ctx.weightsReady, ctx.copyStream));\n"
    );
    if bug == Bug::MissingBackPressure {
        // One compute stream does not wait for the weights.
        let _ = writeln!(
            out,
            "    for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        if (s != {bug_stream}) {{\n            CUDA_CHECK(cudaStreamWaitEvent(ctx.streams[s], ctx.weightsReady, 0));\n        }}\n    }}"
        );
    } else {
        let _ = writeln!(
            out,
            "    for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        CUDA_CHECK(cudaStreamWaitEvent(ctx.streams[s], ctx.weightsReady, 0));\n    }}"
        );
    }
    let _ = write!(
        out,
        "\n    const dim3 block({u}_THREADS);\n    const dim3 grid(({u}_CHUNK_ELEMS + {u}_THREADS - 1) / {u}_THREADS);\n\
         \x20   for (int chunk = 0; chunk < {u}_NCHUNKS; ++chunk) {{\n\
         \x20       const int slot = chunk % {u}_NSTREAMS;\n\
         \x20       cudaStream_t s = ctx.streams[slot];\n\
         \x20       const int offset = chunk * {u}_CHUNK_ELEMS;\n\
         \x20       CUDA_CHECK(cudaMemcpyAsync(ctx.d_x[slot], h_x + offset, chunkBytes, cudaMemcpyHostToDevice, s));\n\
         \x20       {s_name}_kernel<<<grid, block, 0, s>>>(ctx.d_y[slot], ctx.d_x[slot], d_w, {u}_CHUNK_ELEMS);\n\
         \x20       CUDA_CHECK(cudaGetLastError());\n\
         \x20       CUDA_CHECK(cudaMemcpyAsync(h_y + offset, ctx.d_y[slot], chunkBytes, cudaMemcpyDeviceToHost, s));\n    }}\n"
    );
    if bug == Bug::MissingSync || bug == Bug::MissingReset {
        let _ = writeln!(
            out,
            "    for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        if (s != {bug_stream}) {{\n            CUDA_CHECK(cudaStreamSynchronize(ctx.streams[s]));\n        }}\n    }}"
        );
    } else {
        let _ = writeln!(
            out,
            "    for (int s = 0; s < {u}_NSTREAMS; ++s) {{\n        CUDA_CHECK(cudaStreamSynchronize(ctx.streams[s]));\n    }}"
        );
    }
    let _ = write!(
        out,
        "    CUDA_CHECK(cudaStreamSynchronize(ctx.copyStream));\n\n\
         \x20   double sum = 0.0;\n    for (int i = 0; i < total; ++i) {{\n        sum += h_y[i];\n    }}\n\
         \x20   printf(\"{s_name}: checksum %f\\n\", sum);\n\n\
         \x20   CUDA_CHECK(cudaFree(d_w));\n\
         \x20   CUDA_CHECK(cudaFreeHost(h_x));\n    CUDA_CHECK(cudaFreeHost(h_y));\n    CUDA_CHECK(cudaFreeHost(h_w));\n\
         \x20   (void){destroy}(ctx);\n    return 0;\n}}\n"
    );
    let mut filler = String::new();
    let target = lines.saturating_sub(out.lines().count());
    fill_to(&mut filler, rng, c, target);
    out.insert_str(filler_at, &filler);
    out
}

fn cuda_header(rng: &mut Rng, op: &Op, lines: usize) -> String {
    let (s_name, c, u) = (&op.snake, &op.camel, &op.upper);
    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "// {s_name}_utils.cuh: device helpers and launch configuration of {s_name}.\n#pragma once\n\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n#include <cmath>\n#include <string>\n#include <vector>\n#include <chrono>\n#include <cuda_runtime.h>\n\n\
         __device__ __forceinline__ float {c}WarpSum(float v)\n{{\n\
         \x20   for (int offset = 16; offset > 0; offset /= 2) {{\n        v += __shfl_down_sync(0xffffffffu, v, offset);\n    }}\n    return v;\n}}\n\n\
         __device__ __forceinline__ float {c}Gelu(float v)\n{{\n    return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));\n}}\n\n\
         inline dim3 {c}GridFor(int n, int threads)\n{{\n    int blocks = (n + threads - 1) / threads;\n    if (blocks > 65535) {{\n        blocks = 65535;\n    }}\n    return dim3(static_cast<unsigned>(blocks));\n}}\n\n\
         #define {u}_MAX_THREADS 1024\n\n"
    );
    let mut filler = String::new();
    let target = lines.saturating_sub(out.lines().count());
    fill_to(&mut filler, rng, &format!("{c}Util"), target);
    out.push_str(&filler.replace("static ", "inline "));
    out
}

// ---------------------------------------------------------------------------------
// Common utilities (plain C++).

fn common_source(rng: &mut Rng, name: &str, lines: usize) -> String {
    let mut out = String::new();
    license(&mut out, rng);
    let _ = write!(
        out,
        "// {name}: shared host utilities (logging, options, files, conversions).\n#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cmath>\n#include <string>\n#include <vector>\n#include <chrono>\n\n"
    );
    log_macros(&mut out, rng);
    let prefix = camel(&name.replace(['.', '/'], "_"));
    fill_to(&mut out, rng, &prefix, lines);
    out
}

fn common_header(rng: &mut Rng, name: &str, lines: usize) -> String {
    let mut out = String::new();
    license(&mut out, rng);
    let guard = name.to_ascii_uppercase().replace(['.', '/'], "_");
    let _ = write!(
        out,
        "// {name}: shared declarations.\n#ifndef {guard}\n#define {guard}\n\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n#include <cmath>\n#include <string>\n#include <vector>\n#include <chrono>\n\n"
    );
    let prefix = camel(&name.replace(['.', '/'], "_"));
    let mut filler = String::new();
    let target = lines.saturating_sub(out.lines().count() + 2);
    fill_to(&mut filler, rng, &prefix, target);
    out.push_str(&filler.replace("static ", "inline "));
    let _ = writeln!(out, "\n#endif  // {guard}");
    out
}

// ---------------------------------------------------------------------------------
// The tree.

struct Tree {
    files: usize,
    bytes: u64,
    /// Files holding a sync program (checked entry points), relative paths.
    sync_files: Vec<PathBuf>,
    /// The sync files with a bug: exactly these should have findings.
    buggy: BTreeSet<PathBuf>,
    /// `.c`/`.cc`/`.cpp`/`.cxx` files: what cppcheck checks when given the folder.
    cppcheck_files: usize,
    cppcheck_bytes: u64,
}

fn write_file(root: &Path, rel: &Path, text: &str, tree: &mut Tree) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("create folder");
    std::fs::write(&path, text).expect("write file");
    tree.files += 1;
    tree.bytes += text.len() as u64;
    if matches!(
        rel.extension().and_then(|e| e.to_str()),
        Some("c" | "cc" | "cpp" | "cxx")
    ) {
        tree.cppcheck_files += 1;
        tree.cppcheck_bytes += text.len() as u64;
    }
}

fn generate(root: &Path, files: usize, seed: u64) -> Tree {
    let mut rng = Rng(seed);
    let mut used = HashSet::new();
    let mut tree = Tree {
        files: 0,
        bytes: 0,
        sync_files: Vec::new(),
        buggy: BTreeSet::new(),
        cppcheck_files: 0,
        cppcheck_bytes: 0,
    };
    let mut commons = 0;
    while tree.files < files {
        let op = new_op(&mut rng, &mut used);
        if rng.chance(60) {
            let dir = PathBuf::from("ops").join(op.category).join(&op.snake);
            let bug = pick_bug(&mut rng);
            let lines = rng.range(180, 600);
            let host = ascend_host(&mut rng, &op, bug, lines);
            let rel = dir.join("op_host").join(format!("{}.cpp", op.snake));
            write_file(root, &rel, &host, &mut tree);
            tree.sync_files.push(rel.clone());
            if bug != Bug::None {
                tree.buggy.insert(rel);
            }
            let lines = rng.range(100, 300);
            let header = ascend_tiling_header(&mut rng, &op, lines);
            write_file(
                root,
                &dir.join("op_host").join(format!("{}_tiling.h", op.snake)),
                &header,
                &mut tree,
            );
            let lines = rng.range(100, 400);
            let tiling = ascend_tiling_source(&mut rng, &op, lines);
            write_file(
                root,
                &dir.join("op_host").join(format!("{}_tiling.cpp", op.snake)),
                &tiling,
                &mut tree,
            );
        } else {
            let dir = PathBuf::from("cuda").join(op.category).join(&op.snake);
            let bug = pick_bug(&mut rng);
            let lines = rng.range(150, 600);
            let program = cuda_program(&mut rng, &op, bug, lines);
            let rel = dir.join(format!("{}.cu", op.snake));
            write_file(root, &rel, &program, &mut tree);
            tree.sync_files.push(rel.clone());
            if bug != Bug::None {
                tree.buggy.insert(rel);
            }
            let lines = rng.range(100, 300);
            let header = cuda_header(&mut rng, &op, lines);
            write_file(root, &dir.join(format!("{}_utils.cuh", op.snake)), &header, &mut tree);
        }
        if rng.chance(25) {
            commons += 1;
            let area = rng.pick(&["common", "utils", "tools", "framework"]);
            let stem = format!(
                "{}_{}",
                rng.pick(&[
                    "log", "options", "file", "string", "tensor", "shape", "dtype", "timer", "golden", "config"
                ]),
                commons
            );
            let lines = rng.range(100, 600);
            if rng.chance(70) {
                let ext = rng.pick(&["cpp", "cpp", "cc", "cxx"]);
                let name = format!("{stem}.{ext}");
                let text = common_source(&mut rng, &name, lines);
                write_file(root, &PathBuf::from(area).join(&name), &text, &mut tree);
            } else {
                let ext = rng.pick(&["h", "h", "hpp"]);
                let name = format!("{stem}.{ext}");
                let lines = lines.min(400);
                let text = common_header(&mut rng, &name, lines);
                write_file(root, &PathBuf::from(area).join(&name), &text, &mut tree);
            }
        }
    }
    tree
}

// ---------------------------------------------------------------------------------
// Running and timing (see also `common`).

fn cppcheck_available() -> bool {
    Command::new("cppcheck")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

struct Args {
    files: usize,
    seed: u64,
    generate_only: Option<PathBuf>,
    tree_runs: usize,
    single_runs: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        files: DEFAULT_FILES,
        seed: DEFAULT_SEED,
        generate_only: None,
        tree_runs: TREE_RUNS,
        single_runs: SINGLE_RUNS,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--files" => args.files = it.next().and_then(|v| v.parse().ok()).expect("--files N"),
            "--seed" => args.seed = it.next().and_then(|v| v.parse().ok()).expect("--seed S"),
            "--runs" => args.tree_runs = it.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--single-runs" => args.single_runs = it.next().and_then(|v| v.parse().ok()).expect("--single-runs N"),
            "--generate-only" => args.generate_only = Some(PathBuf::from(it.next().expect("--generate-only DIR"))),
            // `cargo bench` passes `--bench`; filters and other harness flags do not apply.
            _ => {}
        }
    }
    args
}

fn main() {
    let args = parse_args();
    if let Some(dir) = &args.generate_only {
        let tree = generate(dir, args.files, args.seed);
        println!(
            "wrote {} files ({:.1} MB) to {}: {} sync programs, {} with a bug",
            tree.files,
            tree.bytes as f64 / 1e6,
            dir.display(),
            tree.sync_files.len(),
            tree.buggy.len()
        );
        return;
    }

    // `SYNCGUARD_BENCH_BIN` runs another build (a copy that a rebuild cannot replace mid-run).
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")), PathBuf::from);
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().join("operators");
    let start = Instant::now();
    let tree = generate(&root, args.files, args.seed);
    let mb = tree.bytes as f64 / 1e6;
    println!(
        "lint_throughput: seed {}, {} files ({:.1} MB; {} sync programs, {} with a bug) generated in {:.1} s",
        args.seed,
        tree.files,
        mb,
        tree.sync_files.len(),
        tree.buggy.len(),
        start.elapsed().as_secs_f64()
    );
    println!("syncguard: {}", binary.display());

    // Checkability: nothing unparsed or unfollowed in any program (one run, untimed).
    let (_, explained) = syncguard_json(&binary, &["--explain"], &root);
    let diagnostics = explained["diagnostics"].as_array().expect("diagnostics");
    let unreadable: Vec<&serde_json::Value> = diagnostics
        .iter()
        .filter(|d| matches!(d["code"].as_str(), Some("SG001" | "SG003" | "SG004")))
        .collect();
    for d in unreadable.iter().take(10) {
        eprintln!(
            "  {} {}:{}: {}",
            d["code"].as_str().unwrap_or("?"),
            d["file"].as_str().unwrap_or("?"),
            d["line"],
            d["message"].as_str().unwrap_or("?")
        );
    }
    assert!(
        unreadable.is_empty(),
        "{} SG001/SG003/SG004 diagnostics in the generated tree: the generator writes code the frontend cannot follow",
        unreadable.len()
    );

    // The tree, end to end: syncguard and cppcheck alternately, so that both see the
    // same machine (another process's load changes over minutes).
    let has_cppcheck = cppcheck_available();
    if !has_cppcheck {
        println!("cppcheck not found (Debian package `cppcheck`): the comparison is skipped");
    }
    println!("load average before: {}", load_average());
    let mut samples = Vec::new();
    let mut cc_samples = Vec::new();
    let mut json = serde_json::Value::Null;
    let mut reported = 0;
    for _ in 0..args.tree_runs {
        let (elapsed, output) = syncguard_json(&binary, &[], &root);
        samples.push(elapsed);
        json = output;
        if has_cppcheck {
            let (elapsed, output) = time_command(Command::new("cppcheck").arg("--quiet").arg("-j2").arg(&root));
            cc_samples.push(elapsed);
            // `--quiet` prints only findings: `FILE:LINE:COL: SEVERITY: MESSAGE [ID]`.
            reported = String::from_utf8_lossy(&output.stderr)
                .lines()
                .filter(|line| line.contains(": error: ") || line.contains(": warning: "))
                .count();
        }
    }
    let sg_tree = median(samples.clone());
    let cppcheck = has_cppcheck.then(|| (median(cc_samples.clone()), reported));
    let diagnostics = json["diagnostics"].as_array().expect("diagnostics");
    let flagged: BTreeSet<PathBuf> = diagnostics
        .iter()
        .filter_map(|d| d["file"].as_str())
        .map(|file| {
            Path::new(file)
                .strip_prefix(&root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| PathBuf::from(file))
        })
        .collect();
    let missed = tree.buggy.difference(&flagged).count();
    let false_alarms = flagged.difference(&tree.buggy).count();
    let summary = &json["summary"];

    // One typical operator file: the host program closest to the median size.
    let mut sizes: Vec<(u64, &PathBuf)> = tree
        .sync_files
        .iter()
        .filter(|rel| rel.extension().is_some_and(|e| e == "cpp"))
        .map(|rel| (std::fs::metadata(root.join(rel)).map(|m| m.len()).unwrap_or(0), rel))
        .collect();
    sizes.sort();
    let (single_bytes, single_rel) = sizes[sizes.len() / 2];
    let single = root.join(single_rel);
    let single_lines = std::fs::read_to_string(&single).map(|t| t.lines().count()).unwrap_or(0);
    let mut single_samples = Vec::new();
    for _ in 0..args.single_runs {
        single_samples.push(syncguard_json(&binary, &[], &single).0);
    }
    let sg_single = median(single_samples);
    println!("load average after: {}", load_average());

    let secs = |d: Duration| d.as_secs_f64();
    let cc_mb = cppcheck_read_bytes(&root) as f64 / 1e6;
    println!();
    println!(
        "| tool      | files analyzed | MB analyzed | s, median of {} | files/s | MB/s  |",
        args.tree_runs
    );
    println!("|-----------|---------------:|------------:|----------------:|--------:|------:|");
    println!(
        "| syncguard | {:>14} | {:>11.1} | {:>15.2} | {:>7.1} | {:>5.2} |",
        tree.files,
        mb,
        secs(sg_tree),
        tree.files as f64 / secs(sg_tree),
        mb / secs(sg_tree)
    );
    if let Some((cc_tree, _)) = cppcheck {
        println!(
            "| cppcheck  | {:>14} | {:>11.1} | {:>15.2} | {:>7.1} | {:>5.2} |",
            tree.cppcheck_files,
            cc_mb,
            secs(cc_tree),
            tree.cppcheck_files as f64 / secs(cc_tree),
            cc_mb / secs(cc_tree)
        );
        println!();
        println!(
            "cppcheck, given the same folder, analyzes only its {} .c/.cc/.cpp/.cxx files (and the local headers \
             they include, counted in its MB each time; {} MB of sources alone); it skips .cu/.cuh and headers \
             no source includes",
            tree.cppcheck_files,
            (tree.cppcheck_bytes as f64 / 1e6 * 10.0).round() / 10.0
        );
        println!(
            "ratio, syncguard / cppcheck: MB/s {:.1}x, files/s {:.1}x; wall time on the same folder {:.1}x",
            (mb / secs(sg_tree)) / (cc_mb / secs(cc_tree)),
            (tree.files as f64 / secs(sg_tree)) / (tree.cppcheck_files as f64 / secs(cc_tree)),
            secs(cc_tree) / secs(sg_tree),
        );
    }
    println!(
        "single file: {} ({} lines, {:.1} KB): {:.1} ms (median of {})",
        single_rel.display(),
        single_lines,
        single_bytes as f64 / 1e3,
        secs(sg_single) * 1e3,
        args.single_runs
    );
    println!(
        "syncguard findings: {} of {} files ({} errors, {} warnings); {} of the {} seeded bugs found, {} files flagged without one",
        flagged.len(),
        tree.files,
        summary["errors"],
        summary["warnings"],
        tree.buggy.len() - missed,
        tree.buggy.len(),
        false_alarms
    );
    if let Some((_, reported)) = cppcheck {
        println!("cppcheck findings (last run): {reported}");
    }
    let runs = |samples: &[Duration]| {
        samples
            .iter()
            .map(|d| format!("{:.2}", secs(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("runs (s): syncguard {}; cppcheck {}", runs(&samples), runs(&cc_samples));
}

/// The bytes cppcheck reads: each `.c`/`.cc`/`.cpp`/`.cxx` file, plus every local header
/// it includes (`#include "x.h"` found next to it), once per including file.
fn cppcheck_read_bytes(root: &Path) -> u64 {
    let mut total = 0;
    let walk = ignore::WalkBuilder::new(root).build();
    for entry in walk.flatten() {
        let path = entry.path();
        if !matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("c" | "cc" | "cpp" | "cxx")
        ) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += text.len() as u64;
        for line in text.lines() {
            let Some(name) = line.strip_prefix("#include \"").and_then(|rest| rest.strip_suffix('"')) else {
                continue;
            };
            if let Ok(meta) = std::fs::metadata(path.with_file_name(name)) {
                total += meta.len();
            }
        }
    }
    total
}

/// `/proc/loadavg`'s three averages, or `?` elsewhere.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
