//! Every analyzed file parsed once, and an index of what calls and names resolve to
//! across files: function definitions (free functions, methods, kernels) and integer
//! constants (`#define`, `enum`, `constexpr`/`const` globals).

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Parser, Tree};

use crate::compile_db::{BuildFlags, CompileDb};
use crate::macros::Expansion;
use crate::mask::{Masked, mask};

/// One source file, parsed.
pub struct Unit {
    pub path: String,
    /// The text as the user wrote it.
    pub text: String,
    pub tree: Tree,
    pub masked: Masked,
    /// CUDA source (`.cu`, `.cuh`): `<<<grid, block, smem, stream>>>`; otherwise Ascend C
    /// (`<<<blockDim, l2ctrl, stream>>>`).
    pub cuda: bool,
    /// Where the file starts in the extractor's byte space (see `spans`).
    pub base: usize,
    /// The `-D`/`-U` flags the compilation database compiles it with, if it lists it.
    pub build: Option<BuildFlags>,
}

/// Extensions of the files this frontend reads.
pub const EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "cu", "cuh", "asc", "aicpu",
];

impl Unit {
    pub fn parse(path: String, text: String, base: usize) -> Unit {
        let masked = mask(&text);
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .expect("the bundled C++ grammar matches the tree-sitter version");
        // The parser gives up only on cancellation, which is never requested.
        let tree = parser
            .parse(&masked.text, None)
            .expect("parsing without a timeout completes");
        let cuda = path.ends_with(".cu") || path.ends_with(".cuh");
        Unit {
            path,
            text,
            tree,
            masked,
            cuda,
            base,
            build: None,
        }
    }

    pub fn text_of(&self, node: Node) -> &str {
        &self.text[node.byte_range()]
    }
}

/// A parameter of a function definition.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub name: String,
    /// `T *p`, `T p[]` or `T &p`: the callee can change the caller's object.
    pub indirect: bool,
    /// `T &p`: another name for the caller's object.
    pub reference: bool,
    /// `const T *p`: the callee only reads through it.
    pub is_const: bool,
    /// The declared type, as written (`const gert::ExeResGenerationContext`).
    pub type_text: String,
}

/// A function with a body.
#[derive(Clone, Debug)]
pub struct FnDef<'u> {
    pub unit: usize,
    pub node: Node<'u>,
    /// As written: `Run`, `Ctx::Run`, `ns::Run`.
    pub qualified: String,
    /// The class a method belongs to.
    pub class: Option<String>,
    pub params: Vec<ParamDecl>,
    pub body: Node<'u>,
    /// `__global__` (CUDA, and Ascend C's `__global__ __aicore__`): a kernel.
    pub kernel: bool,
    /// `__aicore__` or `__device__` without `__global__`: a helper of kernels.
    pub device: bool,
}

impl FnDef<'_> {
    pub fn simple_name(&self) -> &str {
        self.qualified.rsplit("::").next().unwrap_or(&self.qualified)
    }
}

/// A constant's definition: the unit and node of its value.
#[derive(Clone, Copy, Debug)]
pub struct ConstDef<'u> {
    pub unit: usize,
    pub value: Node<'u>,
}

pub struct Index<'u> {
    pub units: &'u [Unit],
    pub functions: Vec<FnDef<'u>>,
    /// Classes with a method defined here: a local of such a type has methods to follow.
    pub classes: HashSet<String>,
    /// Each unit's folder, for preferring nearby definitions.
    pub folders: Vec<Option<std::path::PathBuf>>,
    by_name: HashMap<String, Vec<usize>>,
    pub constants: HashMap<String, ConstDef<'u>>,
    /// Object-like `#define`s whose value is not an expression (`#define EXPORT`).
    pub defined: HashSet<String>,
    /// Every name a function body mentions: a function mentioned anywhere is not an
    /// entry point.
    pub mentioned: HashSet<String>,
    /// Parameters of functions declared without a body here (`extern "C" __global__
    /// void k(__gm__ const uint8_t *x, ...);`): what a launch of them reads and writes.
    pub prototypes: HashMap<String, Vec<ParamDecl>>,
    /// `const char *const NAME = "text";` at namespace level.
    pub string_constants: HashMap<String, String>,
    /// Gen-task callbacks by function name, with the op they generate for
    /// (`IMPL_OP_CT(MatmulAllReduce).GenerateTask(MatmulAllReduceGenTask)`).
    pub gen_task_ops: HashMap<String, String>,
    /// `auto NAME = (VALUE);` per object-like `#define`, parsed: where `constants` of
    /// defines point.
    pub defines: &'u Unit,
    /// The compilation database, when one is used: names it does not define are
    /// undefined.
    pub compile_db: Option<&'u CompileDb>,
    /// Function-like macros expanded at their call sites: the synthetic file holding
    /// the expansions (unit `EXPANSIONS`), and each call site's.
    pub expansions: &'u Unit,
    pub expansion_sites: &'u HashMap<(usize, usize), Expansion>,
}

/// How deep declarations nest (namespaces, classes, templates) before the index stops.
const MAX_NESTING: usize = 64;

impl<'u> Index<'u> {
    pub fn build(
        units: &'u [Unit],
        defines: &'u Unit,
        compile_db: Option<&'u CompileDb>,
        (expansions, expansion_sites): (&'u Unit, &'u HashMap<(usize, usize), Expansion>),
    ) -> Index<'u> {
        let mut index = Index {
            units,
            functions: Vec::new(),
            classes: HashSet::new(),
            folders: units
                .iter()
                .map(|unit| std::path::Path::new(&unit.path).parent().map(|p| p.to_path_buf()))
                .collect(),
            by_name: HashMap::new(),
            constants: HashMap::new(),
            defined: HashSet::new(),
            mentioned: HashSet::new(),
            prototypes: HashMap::new(),
            string_constants: HashMap::new(),
            gen_task_ops: units
                .iter()
                .flat_map(|unit| gen_task_registrations(&unit.text))
                .collect(),
            defines,
            compile_db,
            expansions,
            expansion_sites,
        };
        for (unit_index, unit) in units.iter().enumerate() {
            index.collect(unit_index, unit.tree.root_node(), None, 0);
        }
        // A function called only inside a macro is called where the macro is.
        index.mention_names(expansions, expansions.tree.root_node());
        let root = defines.tree.root_node();
        let mut cursor = root.walk();
        for declaration in root.named_children(&mut cursor) {
            let Some(declarator) = declaration.child_by_field_name("declarator") else {
                continue;
            };
            if let (Some(name), Some(value)) = (
                declarator.child_by_field_name("declarator"),
                declarator.child_by_field_name("value"),
            ) {
                let name = defines.text_of(name).to_string();
                index.constants.entry(name).or_insert(ConstDef { unit: DEFINES, value });
            }
        }
        index.classes = index.functions.iter().filter_map(|def| def.class.clone()).collect();
        for (position, function) in index.functions.iter().enumerate() {
            index
                .by_name
                .entry(function.simple_name().to_string())
                .or_default()
                .push(position);
        }
        index
    }

    /// The file `unit` names: an analyzed file, or the macro expansions.
    pub fn unit(&self, unit: usize) -> &'u Unit {
        if unit == EXPANSIONS {
            self.expansions
        } else {
            &self.units[unit]
        }
    }

    /// Whether the analyzed files define a function named `name` (the last `::` segment).
    pub fn defines_function(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Definitions named `name` (the last `::` segment).
    pub fn lookup(&self, name: &str) -> impl Iterator<Item = &FnDef<'u>> {
        let simple = name.rsplit("::").next().unwrap_or(name);
        self.by_name
            .get(simple)
            .into_iter()
            .flatten()
            .map(|&position| &self.functions[position])
    }

    fn collect(&mut self, unit: usize, node: Node<'u>, class: Option<String>, depth: usize) {
        if depth > MAX_NESTING {
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "function_definition" => self.add_function(unit, child, class.clone()),
                "linkage_specification"
                    if child
                        .child_by_field_name("body")
                        .is_some_and(|b| b.kind() == "function_definition") =>
                {
                    if let Some(body) = child.child_by_field_name("body") {
                        self.add_function(unit, body, class.clone());
                    }
                }
                "namespace_definition" | "linkage_specification" => match child.child_by_field_name("body") {
                    Some(body) if body.kind() == "declaration" => self.add_const_declaration(unit, body),
                    Some(body) => self.collect(unit, body, class.clone(), depth + 1),
                    None => {}
                },
                "template_declaration"
                | "declaration_list"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif" => self.collect(unit, child, class.clone(), depth + 1),
                "class_specifier" | "struct_specifier" => {
                    let name = child
                        .child_by_field_name("name")
                        .map(|name| self.units[unit].text_of(name).to_string());
                    if let Some(body) = child.child_by_field_name("body") {
                        self.collect(unit, body, name, depth + 1);
                    }
                }
                "field_declaration_list" => self.collect(unit, child, class.clone(), depth + 1),
                "enum_specifier" => self.add_enum(unit, child),
                "declaration" => self.add_const_declaration(unit, child),
                "preproc_def" => {
                    if let Some(name) = child.child_by_field_name("name") {
                        self.defined.insert(self.units[unit].text_of(name).to_string());
                    }
                }
                // `struct S { ... } s;` and typedefs may hide classes with methods.
                "type_definition" | "field_declaration" => self.collect(unit, child, class.clone(), depth + 1),
                _ => {}
            }
        }
    }

    fn add_function(&mut self, unit: usize, node: Node<'u>, class: Option<String>) {
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let Some(declarator) = function_declarator(node) else {
            return;
        };
        let source = &self.units[unit];
        let Some(name) = declarator.child_by_field_name("declarator") else {
            return;
        };
        let qualified = source.text_of(name).replace(char::is_whitespace, "");
        let class = class.or_else(|| {
            let mut parts: Vec<&str> = qualified.split("::").collect();
            parts.pop();
            parts.last().map(|class| class.to_string())
        });
        let params = declarator
            .child_by_field_name("parameters")
            .map(|list| parameters(source, list))
            .unwrap_or_default();
        let kernel = qualified_by(&source.masked.kernel_markers, source, node, declarator);
        let device = !kernel && qualified_by(&source.masked.device_markers, source, node, declarator);
        self.mention_names(source, body);
        self.functions.push(FnDef {
            unit,
            node,
            qualified,
            class,
            params,
            body,
            kernel,
            device,
        });
    }

    fn mention_names(&mut self, source: &Unit, body: Node<'u>) {
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if matches!(node.kind(), "identifier" | "field_identifier") {
                self.mentioned.insert(source.text_of(node).to_string());
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    fn add_enum(&mut self, unit: usize, node: Node<'u>) {
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let source = &self.units[unit];
        let mut cursor = body.walk();
        for enumerator in body.named_children(&mut cursor) {
            let Some(name) = enumerator.child_by_field_name("name") else {
                continue;
            };
            let name = source.text_of(name).to_string();
            // Implicit values follow from their predecessor: stored as that name + 1
            // would need a node; enumerators without a value are counted instead.
            if let Some(value) = enumerator.child_by_field_name("value") {
                self.constants.insert(name, ConstDef { unit, value });
            } else {
                self.defined.insert(name);
            }
        }
    }

    /// `constexpr int N = 4;`, `static const uint32_t K = 8;` at namespace level.
    fn add_const_declaration(&mut self, unit: usize, node: Node<'u>) {
        let source = &self.units[unit];
        if let Some(declarator) = node.child_by_field_name("declarator")
            && declarator.kind() == "function_declarator"
            && let (Some(name), Some(list)) = (
                declarator.child_by_field_name("declarator"),
                declarator.child_by_field_name("parameters"),
            )
        {
            let name = source.text_of(name).rsplit("::").next().unwrap_or_default().to_string();
            self.prototypes.insert(name, parameters(source, list));
            return;
        }
        let declared_const = source.text_of(node).contains("const");
        if !declared_const {
            return;
        }
        let mut cursor = node.walk();
        for declarator in node.children_by_field_name("declarator", &mut cursor) {
            if declarator.kind() != "init_declarator" {
                continue;
            }
            if let Some(value) = declarator.child_by_field_name("value")
                && value.kind() == "string_literal"
                && let Some(name) = innermost_name(declarator)
            {
                let text = source.text_of(value).trim_matches('"').to_string();
                self.string_constants.insert(source.text_of(name).to_string(), text);
                continue;
            }
            let (Some(name), Some(value)) = (
                declarator.child_by_field_name("declarator"),
                declarator.child_by_field_name("value"),
            ) else {
                continue;
            };
            if name.kind() == "identifier" {
                self.constants
                    .insert(source.text_of(name).to_string(), ConstDef { unit, value });
            }
        }
    }
}

/// The identifier a declarator declares, through pointers and `const`.
fn innermost_name(mut node: Node) -> Option<Node> {
    for _ in 0..MAX_NESTING {
        if node.kind() == "identifier" {
            return Some(node);
        }
        node = node
            .child_by_field_name("declarator")
            .or_else(|| node.named_child(node.named_child_count().checked_sub(1)?))?;
    }
    None
}

/// The `function_declarator` of a definition, through pointer and reference
/// declarators (`int *f()`, `T &f()`).
pub fn function_declarator(node: Node) -> Option<Node> {
    let mut declarator = node.child_by_field_name("declarator")?;
    for _ in 0..MAX_NESTING {
        if declarator.kind() == "function_declarator" {
            return Some(declarator);
        }
        declarator = declarator.child_by_field_name("declarator")?;
    }
    None
}

fn parameters(source: &Unit, list: Node) -> Vec<ParamDecl> {
    let mut params = Vec::new();
    let mut cursor = list.walk();
    for param in list.named_children(&mut cursor) {
        if !matches!(param.kind(), "parameter_declaration" | "optional_parameter_declaration") {
            continue;
        }
        let mut declarator = param.child_by_field_name("declarator");
        let mut indirect = false;
        let mut reference = false;
        let mut name = None;
        for _ in 0..MAX_NESTING {
            let Some(node) = declarator else { break };
            match node.kind() {
                "identifier" => {
                    name = Some(source.text_of(node).to_string());
                    break;
                }
                "reference_declarator" => reference = true,
                "pointer_declarator" | "array_declarator" => indirect = true,
                _ => {}
            }
            declarator = node
                .child_by_field_name("declarator")
                .or_else(|| node.named_child(node.named_child_count().saturating_sub(1)));
        }
        let type_text = param
            .child_by_field_name("type")
            .map(|t| source.text_of(t))
            .unwrap_or_default();
        // `GM_ADDR x` is Ascend C's `__gm__ uint8_t *x`.
        indirect |= type_text == "GM_ADDR";
        let is_const = source.text_of(param).trim_start().starts_with("const");
        params.push(ParamDecl {
            name: name.unwrap_or_default(),
            indirect,
            reference,
            is_const,
            type_text: type_text.to_string(),
        });
    }
    params
}

/// Whether one of `markers` qualifies the function: between the end of the previous
/// declaration and the function's name.
fn qualified_by(markers: &[usize], source: &Unit, node: Node, declarator: Node) -> bool {
    let before = source.text[..node.start_byte()]
        .rfind([';', '}', '{'])
        .map_or(0, |at| at + 1);
    let end = declarator.start_byte();
    markers.iter().any(|&marker| (before..end).contains(&marker))
}

/// `IMPL_OP_CT(Op).GenerateTask(fn)` in a file: `(fn, Op)` pairs.
fn gen_task_registrations(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("IMPL_OP_CT(") {
        let rest = &text[at + "IMPL_OP_CT(".len()..];
        let Some((op, after)) = rest.split_once(')') else {
            continue;
        };
        let after = after.trim_start();
        let Some(callback) = after
            .strip_prefix(".GenerateTask(")
            .and_then(|callback| callback.split_once(')'))
            .map(|(callback, _)| callback.trim())
        else {
            continue;
        };
        let callback = callback.rsplit("::").next().unwrap_or(callback);
        found.push((callback.to_string(), op.trim().to_string()));
    }
    found
}

/// The attributes an op definition declares (`this->Attr("group")` in the constructor
/// of class `op`), in order, each with where its name is (in the extractor's byte
/// space); `None` when no analyzed file defines the op.
pub fn op_attributes(index: &Index, op: &str) -> Option<Vec<(String, std::ops::Range<usize>)>> {
    let constructor = index
        .lookup(op)
        .find(|def| def.class.as_deref() == Some(op) && def.simple_name() == op)?;
    let unit = &index.units[constructor.unit];
    let start = constructor.body.start_byte();
    let body = unit.text_of(constructor.body);
    let mut attrs = Vec::new();
    for (at, _) in body.match_indices("Attr(\"") {
        let name_at = at + "Attr(\"".len();
        if let Some((name, _)) = body[name_at..].split_once('"') {
            let from = unit.base + start + name_at;
            attrs.push((name.to_string(), from..from + name.len()));
        }
    }
    Some(attrs)
}

/// The `unit` of a constant defined by `#define`: the index's `defines`.
pub const DEFINES: usize = usize::MAX;
/// The unit of the macro expansions (`Index::unit`).
pub const EXPANSIONS: usize = usize::MAX - 1;

/// Every object-like `#define NAME VALUE` of `units`, as C++ declarations
/// (`auto NAME = (VALUE);`, one per line) for the index to parse once.
pub fn defines_text(units: &[Unit]) -> String {
    let mut text = String::new();
    for unit in units {
        let mut stack = vec![unit.tree.root_node()];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "preproc_def" => {
                    let (Some(name), Some(value)) =
                        (node.child_by_field_name("name"), node.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    let value = unit.text_of(value).trim();
                    // A value spanning lines or holding braces is no integer.
                    if !value.is_empty() && !value.contains(['{', '}', ';', '\\', '\n']) {
                        text.push_str(&format!("auto {} = ({value});\n", unit.text_of(name)));
                    }
                }
                "translation_unit"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "namespace_definition"
                | "declaration_list" => {
                    let mut cursor = node.walk();
                    stack.extend(node.named_children(&mut cursor));
                }
                _ => {}
            }
        }
    }
    text
}
