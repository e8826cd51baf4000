//! The list of intercepted functions (capture/apis.list) and the C wrappers generated
//! from it. Shared by the build script, which compiles the wrappers into the
//! interposer, and by the tests, which check the list against the API catalogue.

/// How one C parameter is passed and written into the trace line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    /// `void *` handles and pointers, and `CUdeviceptr`: written as `"0x..."`.
    Handle,
    Ptr,
    DevPtr,
    /// `uint64_t` handles (`ThreadHandle`, `ChannelHandle`).
    U64Handle,
    I32,
    U32,
    I64,
    U64,
    Size,
    Float,
    /// `const char *`.
    Str,
    /// CUDA's `dim3`, by value.
    Dim3,
    /// `void **`: the handle the call returned.
    HandleOut,
    /// `uint64_t *`: one handle returned.
    U64HandleOut,
    /// `uint64_t *` with as many handles as the named parameter says, returned or given.
    U64HandlesOut(String),
    U64Handles(String),
    I32Out,
    U32Out,
    FloatOut,
    /// `char *` of the named length, filled by the call.
    StrOut(String),
    /// `const HcclChannelDesc *` with as many descriptors as the named parameter says:
    /// each written as its remote rank, protocol and notify count.
    ChannelDescs(String),
    /// Enums written by their constant's name.
    AclMemcpyKind,
    AclMallocPolicy,
    CudaMemcpyKind,
}

/// One parameter of an intercepted function.
#[derive(Clone, Debug)]
pub struct CParam {
    pub ty: CType,
    pub name: String,
    /// Written into the trace line (`-TYPE` in the list: passed on only).
    pub recorded: bool,
}

/// One intercepted function.
#[derive(Clone, Debug)]
pub struct Wrapper {
    pub library: String,
    /// The exported symbol (`cuStreamWaitValue32_v2`).
    pub symbol: String,
    /// The API name written in the trace (`cuStreamWaitValue32`).
    pub api: String,
    pub params: Vec<CParam>,
    /// The parameter that tells this process's rank, and the world size.
    pub rank: Option<String>,
    pub world: Option<String>,
    /// Only tells the rank: no trace line.
    pub untraced: bool,
    /// The line of apis.list, for messages.
    pub line: usize,
}

impl CType {
    fn parse(text: &str) -> Result<CType, String> {
        let (base, count) = match text.split_once('[') {
            Some((base, rest)) => (base, Some(rest.trim_end_matches(']').to_string())),
            None => (text, None),
        };
        Ok(match (base, count) {
            ("handle", None) => CType::Handle,
            ("ptr", None) => CType::Ptr,
            ("devptr", None) => CType::DevPtr,
            ("u64handle", None) => CType::U64Handle,
            ("i32", None) => CType::I32,
            ("u32", None) => CType::U32,
            ("i64", None) => CType::I64,
            ("u64", None) => CType::U64,
            ("size", None) => CType::Size,
            ("float", None) => CType::Float,
            ("str", None) => CType::Str,
            ("dim3", None) => CType::Dim3,
            ("handle_out", None) => CType::HandleOut,
            ("u64handle_out", None) => CType::U64HandleOut,
            ("u64handles_out", Some(count)) => CType::U64HandlesOut(count),
            ("u64handles", Some(count)) => CType::U64Handles(count),
            ("i32_out", None) => CType::I32Out,
            ("u32_out", None) => CType::U32Out,
            ("float_out", None) => CType::FloatOut,
            ("str_out", Some(len)) => CType::StrOut(len),
            ("hccl_channel_descs", Some(count)) => CType::ChannelDescs(count),
            ("acl_memcpy_kind", None) => CType::AclMemcpyKind,
            ("acl_malloc_policy", None) => CType::AclMallocPolicy,
            ("cuda_memcpy_kind", None) => CType::CudaMemcpyKind,
            _ => return Err(format!("unknown parameter type `{text}`")),
        })
    }

    /// The C declaration of a parameter of this type.
    fn declare(&self, name: &str) -> String {
        let ty = match self {
            CType::Handle | CType::Ptr => "void *",
            CType::DevPtr => "unsigned long long ",
            CType::U64Handle | CType::U64 => "uint64_t ",
            CType::I32 | CType::AclMemcpyKind | CType::AclMallocPolicy | CType::CudaMemcpyKind => "int ",
            CType::U32 => "uint32_t ",
            CType::I64 => "int64_t ",
            CType::Size => "size_t ",
            CType::Float => "float ",
            CType::Str => "const char *",
            CType::ChannelDescs(_) => "const void *",
            CType::Dim3 => "sg_dim3 ",
            CType::HandleOut => "void **",
            CType::U64HandleOut | CType::U64HandlesOut(_) | CType::U64Handles(_) => "uint64_t *",
            CType::I32Out => "int32_t *",
            CType::U32Out => "uint32_t *",
            CType::FloatOut => "float *",
            CType::StrOut(_) => "char *",
        };
        format!("{ty}{name}")
    }

    /// Whether the value is the call's result, written only when it succeeded.
    pub fn is_output(&self) -> bool {
        matches!(
            self,
            CType::HandleOut
                | CType::U64HandleOut
                | CType::U64HandlesOut(_)
                | CType::I32Out
                | CType::U32Out
                | CType::FloatOut
                | CType::StrOut(_)
        )
    }

    /// The C statement that writes `name` into `line`.
    fn record(&self, name: &str) -> String {
        let key = format!("SG_KEY(\"{name}\")");
        match self {
            CType::Handle | CType::Ptr => format!("sg_arg_handle(&line, {key}, (uintptr_t){name});"),
            CType::DevPtr | CType::U64Handle => format!("sg_arg_handle(&line, {key}, {name});"),
            CType::I32 | CType::I64 => format!("sg_arg_int(&line, {key}, {name});"),
            CType::U32 | CType::U64 | CType::Size => format!("sg_arg_uint(&line, {key}, {name});"),
            CType::Float => format!("sg_arg_float(&line, {key}, {name});"),
            CType::Str => format!("sg_arg_string(&line, {key}, {name});"),
            CType::Dim3 => format!("sg_arg_dim3(&line, {key}, {name});"),
            CType::HandleOut => format!("if ({name}) sg_arg_handle(&line, {key}, (uintptr_t)*{name});"),
            CType::U64HandleOut => format!("if ({name}) sg_arg_handle(&line, {key}, *{name});"),
            CType::U64HandlesOut(count) | CType::U64Handles(count) => {
                format!("sg_arg_handles(&line, {key}, (const unsigned long long *){name}, {count});")
            }
            CType::I32Out => format!("if ({name}) sg_arg_int(&line, {key}, *{name});"),
            CType::U32Out => format!("if ({name}) sg_arg_uint(&line, {key}, *{name});"),
            CType::FloatOut => format!("if ({name}) sg_arg_float(&line, {key}, *{name});"),
            CType::StrOut(len) => {
                format!("if ({name}) sg_arg_string_n(&line, {key}, {name}, {len});")
            }
            CType::ChannelDescs(count) => format!("sg_arg_channel_descs(&line, {key}, {name}, {count});"),
            CType::AclMemcpyKind => format!("sg_arg_name(&line, {key}, {name}, sg_acl_memcpy_kinds, 5);"),
            CType::AclMallocPolicy => format!("sg_arg_name(&line, {key}, {name}, sg_acl_malloc_policies, 3);"),
            CType::CudaMemcpyKind => format!("sg_arg_name(&line, {key}, {name}, sg_cuda_memcpy_kinds, 5);"),
        }
    }

    /// The value of a rank or world-size parameter as a C expression.
    fn value(&self, name: &str) -> String {
        if self.is_output() {
            format!("({name} ? (long)*{name} : -1L)")
        } else {
            format!("(long){name}")
        }
    }
}

/// Read apis.list.
pub fn parse(text: &str) -> Result<Vec<Wrapper>, String> {
    let mut wrappers = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        wrappers.push(parse_line(line, index + 1).map_err(|err| format!("apis.list:{}: {err}", index + 1))?);
    }
    Ok(wrappers)
}

fn parse_line(line: &str, number: usize) -> Result<Wrapper, String> {
    let (library, rest) = line.split_once(' ').ok_or("expected `LIBRARY NAME(...)`")?;
    let open = rest.find('(').ok_or("expected `(`")?;
    let close = rest.rfind(')').ok_or("expected `)`")?;
    let name = rest[..open].trim();
    let (symbol, api) = match name.split_once('=') {
        Some((symbol, api)) => (symbol, api),
        None => (name, name),
    };
    let mut params = Vec::new();
    for param in rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (ty, name) = param
            .rsplit_once(' ')
            .ok_or_else(|| format!("parameter `{param}` needs a type"))?;
        let (ty, recorded) = match ty.strip_prefix('-') {
            Some(ty) => (ty, false),
            None => (ty, true),
        };
        params.push(CParam {
            ty: CType::parse(ty)?,
            name: name.to_string(),
            recorded,
        });
    }
    let mut wrapper = Wrapper {
        library: library.to_string(),
        symbol: symbol.to_string(),
        api: api.to_string(),
        params,
        rank: None,
        world: None,
        untraced: false,
        line: number,
    };
    for option in rest[close + 1..].split_whitespace() {
        match option.split_once('=') {
            Some(("rank", param)) => wrapper.rank = Some(param.to_string()),
            Some(("world", param)) => wrapper.world = Some(param.to_string()),
            None if option == "untraced" => wrapper.untraced = true,
            _ => return Err(format!("unknown option `{option}`")),
        }
    }
    for name in wrapper.rank.iter().chain(&wrapper.world) {
        if !wrapper.params.iter().any(|p| &p.name == name) {
            return Err(format!("`{name}` is not a parameter"));
        }
    }
    Ok(wrapper)
}

/// The C source of every wrapper and of the table `dlsym` answers from.
pub fn generate(wrappers: &[Wrapper]) -> String {
    let mut c = String::from(
        "/* Generated by build.rs from capture/apis.list: do not edit. */\n\
         #include \"runtime.h\"\n#include <errno.h>\n#include <stdatomic.h>\n#include <string.h>\n\n\
         #define SG_EXPORT __attribute__((visibility(\"default\")))\n\
         /* What a wrapper returns when no real definition exists (never reached: the wrapper\n\
          * is only bound where the real library is loaded). */\n\
         #define SG_NO_LIBRARY (-1)\n\n\
         static const char *const sg_acl_memcpy_kinds[] = {\"ACL_MEMCPY_HOST_TO_HOST\", \"ACL_MEMCPY_HOST_TO_DEVICE\",\n\
             \"ACL_MEMCPY_DEVICE_TO_HOST\", \"ACL_MEMCPY_DEVICE_TO_DEVICE\", \"ACL_MEMCPY_DEFAULT\"};\n\
         static const char *const sg_acl_malloc_policies[] = {\"ACL_MEM_MALLOC_HUGE_FIRST\", \"ACL_MEM_MALLOC_HUGE_ONLY\",\n\
             \"ACL_MEM_MALLOC_NORMAL_ONLY\"};\n\
         static const char *const sg_cuda_memcpy_kinds[] = {\"cudaMemcpyHostToHost\", \"cudaMemcpyHostToDevice\",\n\
             \"cudaMemcpyDeviceToHost\", \"cudaMemcpyDeviceToDevice\", \"cudaMemcpyDefault\"};\n\n",
    );
    for wrapper in wrappers {
        generate_wrapper(&mut c, wrapper);
    }
    let mut sorted: Vec<&Wrapper> = wrappers.iter().collect();
    sorted.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    c.push_str(
        "typedef struct sg_entry { const char *name; void *wrapper; void *_Atomic *real; } sg_entry;\n\
         static const sg_entry sg_table[] = {\n",
    );
    for wrapper in &sorted {
        let s = &wrapper.symbol;
        c.push_str(&format!(
            "    {{\"{s}\", (void *){s}, (void *_Atomic *)&sg_real_{s}}},\n"
        ));
    }
    c.push_str(
        "};\n\n\
         void *sg_wrapper_for(const char *name, void *real) {\n\
         \x20   if (!name) return 0;\n\
         \x20   size_t lo = 0, hi = sizeof sg_table / sizeof sg_table[0];\n\
         \x20   while (lo < hi) {\n\
         \x20       size_t mid = (lo + hi) / 2;\n\
         \x20       int order = strcmp(sg_table[mid].name, name);\n\
         \x20       if (order == 0) {\n\
         \x20           if (real == sg_table[mid].wrapper) return real;\n\
         \x20           void *none = 0;\n\
         \x20           atomic_compare_exchange_strong(sg_table[mid].real, &none, real);\n\
         \x20           return sg_table[mid].wrapper;\n\
         \x20       }\n\
         \x20       if (order < 0) lo = mid + 1; else hi = mid;\n\
         \x20   }\n\
         \x20   return 0;\n\
         }\n",
    );
    c
}

fn generate_wrapper(c: &mut String, w: &Wrapper) {
    let s = &w.symbol;
    let declared: Vec<String> = w.params.iter().map(|p| p.ty.declare(&p.name)).collect();
    let declared = if declared.is_empty() {
        "void".to_string()
    } else {
        declared.join(", ")
    };
    let types: Vec<String> = w.params.iter().map(|p| p.ty.declare("")).collect();
    let types = if types.is_empty() {
        "void".to_string()
    } else {
        types.join(", ")
    };
    let args: Vec<&str> = w.params.iter().map(|p| p.name.as_str()).collect();
    let args = args.join(", ");
    let now = if w.untraced {
        ""
    } else {
        "unsigned long long ts = sg_now();"
    };
    c.push_str(&format!(
        "typedef int (*sg_type_{s})({types});\n\
         static void *_Atomic sg_real_{s};\n\
         SG_EXPORT int {s}({declared}) {{\n\
         \x20   sg_type_{s} real = (sg_type_{s})atomic_load_explicit(&sg_real_{s}, memory_order_acquire);\n\
         \x20   if (!real) {{\n\
         \x20       real = (sg_type_{s})sg_resolve(\"{s}\");\n\
         \x20       if (!real) return SG_NO_LIBRARY;\n\
         \x20       atomic_store_explicit(&sg_real_{s}, (void *)real, memory_order_release);\n\
         \x20   }}\n\
         \x20   if (!sg_enter()) return real({args});\n\
         \x20   {now}\n\
         \x20   int ret = real({args});\n\
         \x20   int saved = errno;\n"
    ));
    let param = |name: &str| w.params.iter().find(|p| p.name == name).expect("checked by parse");
    if w.rank.is_some() || w.world.is_some() {
        let rank = w.rank.as_deref().map_or("-1L".to_string(), |r| param(r).ty.value(r));
        let world = w.world.as_deref().map_or("-1L".to_string(), |r| param(r).ty.value(r));
        c.push_str(&format!("    if (ret == 0) sg_set_rank({rank}, {world});\n"));
    }
    if !w.untraced {
        c.push_str(&format!("    sg_line line = sg_begin(SG_API(\"{}\"), ts);\n", w.api));
        for p in w.params.iter().filter(|p| p.recorded) {
            let record = p.ty.record(&p.name);
            if p.ty.is_output() {
                c.push_str(&format!("    if (ret == 0) {{ {record} }}\n"));
            } else {
                c.push_str(&format!("    {record}\n"));
            }
        }
        c.push_str("    sg_end(&line, ret, __builtin_return_address(0));\n");
    }
    c.push_str("    sg_leave();\n    errno = saved;\n    return ret;\n}\n\n");
}
