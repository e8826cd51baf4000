//! Every analyzed file parsed once, and an index of what calls and names resolve to
//! across files: function definitions (free functions, methods, kernels) and integer
//! constants (`#define`, `enum`, `constexpr`/`const` globals).

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Parser, Tree};

use crate::compile_db::{BuildFlags, CompileDb};
use crate::fields::FieldChild;
use crate::macros::Expansion;
use crate::mask::{Masked, mask};
use crate::scope::Scopes;
use crate::type_tables::TypeTables;

/// One source file, parsed.
#[derive(Clone)]
pub struct Unit {
    pub path: String,
    /// The text as the user wrote it.
    pub text: String,
    pub tree: Tree,
    /// The kernel markers and launches the masking found; its `text`, the parser's
    /// input, is emptied once the file is parsed.
    pub masked: Masked,
    /// CUDA source (`.cu`, `.cuh`): `<<<grid, block, smem, stream>>>`; otherwise Ascend C
    /// (`<<<blockDim, l2ctrl, stream>>>`).
    pub cuda: bool,
    /// Where the file starts in the extractor's byte space (see `spans`).
    pub base: usize,
    /// The `-D`/`-U` flags the compilation database compiles it with, if it lists it.
    pub build: Option<BuildFlags>,
    /// Which parse this is: a file parsed again gets a new id, one reused keeps its id.
    pub id: u64,
}

/// Extensions of the files this frontend reads.
pub const EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "cu", "cuh", "asc", "aicpu",
];

impl Unit {
    pub fn parse(path: String, text: String, base: usize) -> Unit {
        let mut masked = mask(&text);
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .expect("the bundled C++ grammar matches the tree-sitter version");
        // The parser gives up only on cancellation, which is never requested.
        let tree = parser
            .parse(&masked.text, None)
            .expect("parsing without a timeout completes");
        // Only the parser reads the masked copy (names are read from `text`): a copy of
        // every file less, for as long as the project lives.
        masked.text = String::new();
        let cuda = path.ends_with(".cu") || path.ends_with(".cuh");
        static PARSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Unit {
            path,
            text,
            tree,
            masked,
            cuda,
            base,
            build: None,
            id: PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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
    /// The namespaces around the definition (`acl::rt`), empty at global scope.
    pub namespace: String,
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
    /// The analyzed file that defines it (for a `#define`, the file it is in; `unit`
    /// is then `DEFINES`); `None` for `-D` and the compilation database's definitions,
    /// which every file sees.
    pub origin: Option<usize>,
}

pub struct Index<'u> {
    pub units: &'u [Unit],
    pub functions: Vec<FnDef<'u>>,
    /// Classes with a method defined here: a local of such a type has methods to follow.
    pub classes: HashSet<String>,
    /// Which files each file sees (itself and its includes): names resolve by it.
    pub scopes: &'u Scopes,
    /// Each unit's folder: files of one folder are built together.
    folders: Vec<Option<std::path::PathBuf>>,
    by_name: HashMap<String, Vec<usize>>,
    /// Function names declared without a body (prototypes, methods declared in a class),
    /// with the files declaring them: a call links to a definition in another file
    /// through a declaration both files see.
    declared: HashMap<String, Vec<usize>>,
    /// Constants by name, every definition (files may define the same name apart).
    constants: HashMap<String, Vec<ConstDef<'u>>>,
    /// Names `#define`d without an integer value, and enumerators without one, with the
    /// file defining them (`None`: `-D`, which every file sees).
    defined: HashMap<String, Vec<Option<usize>>>,
    /// Every name a function body mentions, with the files mentioning it: a function
    /// mentioned where it is visible is not an entry point.
    mentioned: HashMap<String, Vec<usize>>,
    /// Parameters of functions declared without a body here (`extern "C" __global__
    /// void k(__gm__ const uint8_t *x, ...);`): what a launch of them reads and writes.
    prototypes: HashMap<String, Vec<(usize, Vec<ParamDecl>)>>,
    /// `const char *const NAME = "text";` at namespace level, with the defining file.
    string_constants: HashMap<String, Vec<(usize, String)>>,
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
    /// The files' record names and field declarations, collected at first use.
    pub(crate) types: TypeTables<'u>,
}

/// How deep declarations nest (namespaces, classes, templates) before the index stops.
const MAX_NESTING: usize = 64;

impl<'u> Index<'u> {
    pub fn build(
        units: &'u [Unit],
        scopes: &'u Scopes,
        defines: (&'u Unit, &[Option<usize>]),
        compile_db: Option<&'u CompileDb>,
        (expansions, expansion_sites): (&'u Unit, &'u HashMap<(usize, usize), Expansion>),
    ) -> Index<'u> {
        let (defines, define_origins) = defines;
        let mut index = Index {
            units,
            functions: Vec::new(),
            classes: HashSet::new(),
            scopes,
            folders: units
                .iter()
                .map(|unit| std::path::Path::new(&unit.path).parent().map(|p| p.to_path_buf()))
                .collect(),
            by_name: HashMap::new(),
            declared: HashMap::new(),
            constants: HashMap::new(),
            defined: HashMap::new(),
            mentioned: HashMap::new(),
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
            types: TypeTables::new(units),
        };
        index.collect_units();
        // A function called only inside a macro is called where the macro is: each
        // expansion is one declaration of the expansions' file, holding its site's code.
        let mut starts: Vec<(usize, usize)> = expansion_sites
            .iter()
            .map(|((unit, _), expansion)| (expansion.range.start, *unit))
            .collect();
        starts.sort_unstable();
        let root = expansions.tree.root_node();
        let mut cursor = root.walk();
        for expansion in root.named_children(&mut cursor) {
            let range = expansion.byte_range();
            // Code that does not parse may hold several expansions in one node.
            let first = starts.partition_point(|(start, _)| *start < range.start);
            let mut units: Vec<usize> = starts[first..]
                .iter()
                .take_while(|(start, _)| range.contains(start))
                .map(|(_, unit)| *unit)
                .collect();
            units.sort_unstable();
            units.dedup();
            for unit in units {
                index.mention_names(unit, expansions, expansion);
            }
        }
        let root = defines.tree.root_node();
        let mut cursor = root.walk();
        for declaration in root.named_children(&mut cursor) {
            let Some(declarator) = declaration.field_child("declarator") else {
                continue;
            };
            if let (Some(name), Some(value)) = (declarator.field_child("declarator"), declarator.field_child("value")) {
                let origin = define_origins.get(declaration.start_position().row).copied().flatten();
                let name = defines.text_of(name).to_string();
                index.constants.entry(name).or_default().push(ConstDef {
                    unit: DEFINES,
                    value,
                    origin,
                });
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

    /// Whether code in unit `from` can call `def`: it is in `from` or a file `from`
    /// includes; or `from` sees a declaration of it (a prototype, a method in its
    /// class; `declarations`, the files declaring `def`'s name that `from` sees) and
    /// `def` is in a file that sees the same declaration (a shared header) or in a file
    /// of the same folder (C files that declare what a sibling defines). A name such as
    /// `Init` has thousands of definitions and hundreds of declaring headers in an
    /// operator repository: `declarations` are looked up once per call, not once per
    /// candidate.
    fn links_through(&self, from: usize, def: &FnDef, declarations: &[usize]) -> bool {
        if self.scopes.sees(from, def.unit) {
            return true;
        }
        if self.siblings(from, def.unit) {
            !declarations.is_empty()
        } else {
            declarations.iter().any(|&header| self.scopes.sees(def.unit, header))
        }
    }

    /// The files declaring `name` (prototypes, classes) that code in `unit` sees.
    fn declarations_seen(&self, unit: usize, name: &str) -> Vec<usize> {
        self.declared.get(name).map_or_else(Vec::new, |headers| {
            headers
                .iter()
                .copied()
                .filter(|&header| self.scopes.sees(unit, header))
                .collect()
        })
    }

    /// Whether two units are files of one known folder.
    fn siblings(&self, one: usize, other: usize) -> bool {
        self.folders.get(one).is_some_and(|folder| folder.is_some()) && self.folders.get(one) == self.folders.get(other)
    }

    /// Definitions named `name` that code in unit `from` can call.
    pub fn lookup_from<'a>(&'a self, from: usize, name: &str) -> impl Iterator<Item = &'a FnDef<'u>> + 'a {
        let simple = name.rsplit("::").next().unwrap_or(name);
        let declarations = self.declarations_seen(from, simple);
        self.by_name
            .get(simple)
            .into_iter()
            .flatten()
            .map(|&position| &self.functions[position])
            .filter(move |def| self.links_through(from, def, &declarations))
    }

    /// Whether a function that sees `def` mentions its name: then it is called (or
    /// handed on), not an entry point.
    pub fn is_mentioned(&self, def: &FnDef) -> bool {
        let Some(units) = self.mentioned.get(def.simple_name()) else {
            return false;
        };
        // `links(unit, def)` for each unit, turned around: a unit outside `def`'s folder
        // links through a declaration `def`'s own file sees.
        let declarations_of_def = self.declarations_seen(def.unit, def.simple_name());
        units.iter().any(|&unit| {
            self.scopes.sees(unit, def.unit)
                || if self.siblings(unit, def.unit) {
                    !self.declarations_seen(unit, def.simple_name()).is_empty()
                } else {
                    declarations_of_def.iter().any(|&header| self.scopes.sees(unit, header))
                }
        })
    }

    /// The definition of constant `name` that code in unit `from` sees: the command
    /// line's first, then its own file's, then an included file's.
    pub fn constant_from(&self, from: usize, name: &str) -> Option<ConstDef<'u>> {
        self.constants
            .get(name)?
            .iter()
            .filter(|def| def.origin.is_none_or(|origin| self.scopes.sees(from, origin)))
            .min_by_key(|def| match def.origin {
                None => 0,
                Some(origin) if origin == from => 1,
                Some(_) => 2,
            })
            .copied()
    }

    /// Whether a definition of `name` (a `#define`, an enumerator, a constant, `-D`) is
    /// visible in unit `from`.
    pub fn is_defined_from(&self, from: usize, name: &str) -> bool {
        self.constant_from(from, name).is_some()
            || self.defined.get(name).is_some_and(|origins| {
                origins
                    .iter()
                    .any(|origin| origin.is_none_or(|origin| self.scopes.sees(from, origin)))
            })
    }

    /// A name `-D` defines: every file sees it.
    pub fn define_everywhere(&mut self, name: &str) {
        self.defined.entry(name.to_string()).or_default().push(None);
    }

    /// The parameters of `name`'s declaration that unit `from` sees.
    pub fn prototype_from(&self, from: usize, name: &str) -> Option<&[ParamDecl]> {
        self.prototypes
            .get(name)?
            .iter()
            .find(|(unit, _)| self.scopes.sees(from, *unit))
            .map(|(_, params)| params.as_slice())
    }

    /// The text of string constant `name` that unit `from` sees.
    pub fn string_constant_from(&self, from: usize, name: &str) -> Option<&str> {
        self.string_constants
            .get(name)?
            .iter()
            .find(|(unit, _)| self.scopes.sees(from, *unit))
            .map(|(_, text)| text.as_str())
    }

    /// The file `unit` names: an analyzed file, or the macro expansions.
    /// A unit, by index (or [`EXPANSIONS`], [`DEFINES`]): every read of a file's code
    /// during a walk goes through here, so that [`reading`] knows which files it read.
    pub fn unit(&self, unit: usize) -> &'u Unit {
        note_read(unit);
        if unit == DEFINES {
            self.defines
        } else if unit == EXPANSIONS {
            self.expansions
        } else {
            &self.units[unit]
        }
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

    /// The files' definitions, declarations and mentions, each file collected on its
    /// own (in parallel) and merged in file order: every list of the index keeps the
    /// order a walk over the files one after the other gives.
    fn collect_units(&mut self) {
        use rayon::prelude::*;
        let units = self.units;
        let collected: Vec<Collector<'u>> = units
            .par_iter()
            .enumerate()
            .map(|(position, unit)| {
                let mut collector = Collector::new(units);
                collector.collect(position, unit.tree.root_node(), None, &mut Vec::new(), 0);
                collector
            })
            .collect();
        for found in collected {
            self.functions.extend(found.functions);
            merge(&mut self.declared, found.declared);
            merge(&mut self.constants, found.constants);
            merge(&mut self.defined, found.defined);
            merge(&mut self.mentioned, found.mentioned);
            merge(&mut self.prototypes, found.prototypes);
            merge(&mut self.string_constants, found.string_constants);
        }
    }

    fn mention_names(&mut self, unit: usize, source: &Unit, body: Node) {
        mention_names(&mut self.mentioned, unit, source, body);
    }
}

/// `from`'s lists appended to `into`'s, name by name.
fn merge<T>(into: &mut HashMap<String, Vec<T>>, from: HashMap<String, Vec<T>>) {
    for (name, items) in from {
        into.entry(name).or_default().extend(items);
    }
}

/// What one file defines, declares and mentions (see [`Index`]'s fields of the same
/// names).
struct Collector<'u> {
    units: &'u [Unit],
    functions: Vec<FnDef<'u>>,
    declared: HashMap<String, Vec<usize>>,
    constants: HashMap<String, Vec<ConstDef<'u>>>,
    defined: HashMap<String, Vec<Option<usize>>>,
    mentioned: HashMap<String, Vec<usize>>,
    prototypes: HashMap<String, Vec<(usize, Vec<ParamDecl>)>>,
    string_constants: HashMap<String, Vec<(usize, String)>>,
}

impl<'u> Collector<'u> {
    fn new(units: &'u [Unit]) -> Collector<'u> {
        Collector {
            units,
            functions: Vec::new(),
            declared: HashMap::new(),
            constants: HashMap::new(),
            defined: HashMap::new(),
            mentioned: HashMap::new(),
            prototypes: HashMap::new(),
            string_constants: HashMap::new(),
        }
    }

    fn collect(
        &mut self,
        unit: usize,
        node: Node<'u>,
        class: Option<String>,
        namespace: &mut Vec<String>,
        depth: usize,
    ) {
        if depth > MAX_NESTING {
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "function_definition" => self.add_function(unit, child, class.clone(), namespace),
                "linkage_specification"
                    if child
                        .field_child("body")
                        .is_some_and(|b| b.kind() == "function_definition") =>
                {
                    if let Some(body) = child.field_child("body") {
                        self.add_function(unit, body, class.clone(), namespace);
                    }
                }
                "namespace_definition" | "linkage_specification" => match child.field_child("body") {
                    Some(body) if body.kind() == "declaration" => self.add_declaration(unit, body),
                    Some(body) => {
                        let name = child
                            .field_child("name")
                            .map(|name| self.units[unit].text_of(name).to_string());
                        if let Some(name) = &name {
                            namespace.push(name.clone());
                        }
                        self.collect(unit, body, class.clone(), namespace, depth + 1);
                        if name.is_some() {
                            namespace.pop();
                        }
                    }
                    None => {}
                },
                "template_declaration"
                | "declaration_list"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif" => self.collect(unit, child, class.clone(), namespace, depth + 1),
                "class_specifier" | "struct_specifier" => {
                    let name = child
                        .field_child("name")
                        .map(|name| self.units[unit].text_of(name).to_string());
                    if let Some(body) = child.field_child("body") {
                        self.collect(unit, body, name, namespace, depth + 1);
                    }
                }
                "field_declaration_list" => self.collect(unit, child, class.clone(), namespace, depth + 1),
                "enum_specifier" => self.add_enum(unit, child),
                "declaration" => self.add_declaration(unit, child),
                // `void Run();` inside a class: declared here, defined elsewhere.
                "field_declaration" if class.is_some() && self.add_prototype(unit, child) => {}
                "preproc_def" => {
                    if let Some(name) = child.field_child("name") {
                        self.defined
                            .entry(self.units[unit].text_of(name).to_string())
                            .or_default()
                            .push(Some(unit));
                    }
                }
                // `struct S { ... } s;` and typedefs may hide classes with methods.
                "type_definition" | "field_declaration" => {
                    self.collect(unit, child, class.clone(), namespace, depth + 1)
                }
                _ => {}
            }
        }
    }

    fn add_function(&mut self, unit: usize, node: Node<'u>, class: Option<String>, namespace: &[String]) {
        let Some(body) = node.field_child("body") else {
            return;
        };
        let Some(declarator) = function_declarator(node) else {
            return;
        };
        let source = &self.units[unit];
        let Some(name) = declarator.field_child("declarator") else {
            return;
        };
        let qualified = source.text_of(name).replace(char::is_whitespace, "");
        let class = class.or_else(|| {
            let mut parts: Vec<&str> = qualified.split("::").collect();
            parts.pop();
            // `Sorter<T>::Process`: the class is `Sorter`, as its objects name it.
            parts
                .last()
                .map(|class| class.split('<').next().unwrap_or(class).to_string())
        });
        let params = declarator
            .field_child("parameters")
            .map(|list| parameters(source, list))
            .unwrap_or_default();
        let kernel = qualified_by(&source.masked.kernel_markers, source, node, declarator);
        let device = !kernel && qualified_by(&source.masked.device_markers, source, node, declarator);
        self.mention_names(unit, source, body);
        self.functions.push(FnDef {
            unit,
            node,
            qualified,
            class,
            params,
            body,
            kernel,
            device,
            namespace: namespace.join("::"),
        });
    }

    fn mention_names(&mut self, unit: usize, source: &Unit, body: Node) {
        mention_names(&mut self.mentioned, unit, source, body);
    }

    fn add_enum(&mut self, unit: usize, node: Node<'u>) {
        let Some(body) = node.field_child("body") else {
            return;
        };
        let source = &self.units[unit];
        let mut cursor = body.walk();
        for enumerator in body.named_children(&mut cursor) {
            let Some(name) = enumerator.field_child("name") else {
                continue;
            };
            let name = source.text_of(name).to_string();
            // Implicit values follow from their predecessor: stored as that name + 1
            // would need a node; enumerators without a value are counted instead.
            if let Some(value) = enumerator.field_child("value") {
                self.constants.entry(name).or_default().push(ConstDef {
                    unit,
                    value,
                    origin: Some(unit),
                });
            } else {
                self.defined.entry(name).or_default().push(Some(unit));
            }
        }
    }

    /// A function's declaration without a body (`void Run(int x);` at namespace level
    /// or in a class): where it is declared, and its parameters. False for any other.
    fn add_prototype(&mut self, unit: usize, node: Node<'u>) -> bool {
        let source = &self.units[unit];
        let Some(declarator) = node.field_child("declarator").and_then(declared_function) else {
            return false;
        };
        let (Some(name), Some(list)) = (
            declarator.field_child("declarator"),
            declarator.field_child("parameters"),
        ) else {
            return false;
        };
        let name = source.text_of(name).rsplit("::").next().unwrap_or_default().to_string();
        let declaring = self.declared.entry(name.clone()).or_default();
        if declaring.last() != Some(&unit) {
            declaring.push(unit);
        }
        self.prototypes
            .entry(name)
            .or_default()
            .push((unit, parameters(source, list)));
        true
    }

    /// A declaration at namespace level: a function's prototype, or a constant's
    /// (`constexpr int N = 4;`, `static const uint32_t K = 8;`).
    fn add_declaration(&mut self, unit: usize, node: Node<'u>) {
        if self.add_prototype(unit, node) {
            return;
        }
        let source = &self.units[unit];
        let declared_const = source.text_of(node).contains("const");
        if !declared_const {
            return;
        }
        let mut cursor = node.walk();
        for declarator in node.children_by_field_name("declarator", &mut cursor) {
            if declarator.kind() != "init_declarator" {
                continue;
            }
            if let Some(value) = declarator.field_child("value")
                && value.kind() == "string_literal"
                && let Some(name) = innermost_name(declarator)
            {
                let text = source.text_of(value).trim_matches('"').to_string();
                self.string_constants
                    .entry(source.text_of(name).to_string())
                    .or_default()
                    .push((unit, text));
                continue;
            }
            let (Some(name), Some(value)) = (declarator.field_child("declarator"), declarator.field_child("value"))
            else {
                continue;
            };
            if name.kind() == "identifier" {
                self.constants
                    .entry(source.text_of(name).to_string())
                    .or_default()
                    .push(ConstDef {
                        unit,
                        value,
                        origin: Some(unit),
                    });
            }
        }
    }
}

/// Every name `body` mentions, as mentions by `unit`.
fn mention_names(mentioned: &mut HashMap<String, Vec<usize>>, unit: usize, source: &Unit, body: Node) {
    // Each node with whether its parent is a `parameter_declaration`: tree-sitter's
    // `Node::parent` searches down from the root, which made this walk quadratic in a
    // file's size (minutes for one large generated source).
    let mut stack = vec![(body, false)];
    while let Some((node, in_parameter)) = stack.pop() {
        // In a body, a parameter's type may be a name parsed as one: the function a
        // `std::thread t(Worker, x);` starts (C++'s most vexing parse).
        let vexing = in_parameter && node.kind() == "type_identifier";
        if matches!(node.kind(), "identifier" | "field_identifier") || vexing {
            let units = mentioned.entry(source.text_of(node).to_string()).or_default();
            if units.last() != Some(&unit) {
                units.push(unit);
            }
        }
        let parameter = node.kind() == "parameter_declaration";
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor).map(|child| (child, parameter)));
    }
}

/// The identifier a declarator declares, through pointers and `const`.
fn innermost_name(mut node: Node) -> Option<Node> {
    for _ in 0..MAX_NESTING {
        if node.kind() == "identifier" {
            return Some(node);
        }
        node = node
            .field_child("declarator")
            .or_else(|| node.named_child(node.named_child_count().checked_sub(1)?))?;
    }
    None
}

/// The `function_declarator` a declaration declares (`void f();`, `int *f();`,
/// `virtual T &f() const;`), if it declares a function.
fn declared_function(mut declarator: Node) -> Option<Node> {
    for _ in 0..MAX_NESTING {
        match declarator.kind() {
            "function_declarator" => return Some(declarator),
            "pointer_declarator" | "reference_declarator" => declarator = declarator.field_child("declarator")?,
            _ => return None,
        }
    }
    None
}

/// The `function_declarator` of a definition, through pointer and reference
/// declarators (`int *f()`, `T &f()`).
pub fn function_declarator(node: Node) -> Option<Node> {
    let mut declarator = node.field_child("declarator")?;
    for _ in 0..MAX_NESTING {
        if declarator.kind() == "function_declarator" {
            return Some(declarator);
        }
        declarator = declarator.field_child("declarator")?;
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
        let mut declarator = param.field_child("declarator");
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
                .field_child("declarator")
                .or_else(|| node.named_child(node.named_child_count().saturating_sub(1)));
        }
        let type_text = param.field_child("type").map(|t| source.text_of(t)).unwrap_or_default();
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
    let unit = index.unit(constructor.unit);
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

/// A function of the vendors' libraries: catalogued, or named as their APIs are
/// (`aclrt*`, `acltdt*`, `aclnn*`, `cuda*`, `cu*`, `Hccl*`, `Hcomm*`, `nccl*`, each
/// followed by a capital). A repository that implements them (a runtime, an operator
/// library) is the library: its implementation is never inlined into code that calls
/// the API, nor an entry point.
pub fn is_library_api(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "aclrt", "aclmdl", "acltdt", "aclop", "aclnn", "acldvpp", "aclprof", "acl", "cuda", "cu", "Hccl", "Hcomm",
        "nccl",
    ];
    syncguard_model::api::lookup(name).is_some()
        || PREFIXES.iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
        })
}

/// The `unit` of a constant defined by `#define`: the index's `defines`.
pub const DEFINES: usize = usize::MAX;

thread_local! {
    /// The units read by the walk running on this thread, while [`reading`] records.
    static READ: std::cell::RefCell<Option<std::collections::BTreeSet<usize>>> =
        const { std::cell::RefCell::new(None) };
}

fn note_read(unit: usize) {
    READ.with(|read| {
        if let Some(read) = read.borrow_mut().as_mut() {
            read.insert(unit);
        }
    });
}

/// Run `walk` (which runs on this thread alone), and say which units it read.
pub fn reading<T>(walk: impl FnOnce() -> T) -> (T, std::collections::BTreeSet<usize>) {
    let outer = READ.with(|read| read.borrow_mut().replace(Default::default()));
    let result = walk();
    let read = READ
        .with(|read| std::mem::replace(&mut *read.borrow_mut(), outer))
        .unwrap_or_default();
    (result, read)
}
/// The unit of the macro expansions (`Index::unit`).
pub const EXPANSIONS: usize = usize::MAX - 1;

/// Every object-like `#define NAME VALUE` of `units`, as C++ declarations
/// (`auto NAME = (VALUE);`, one per line) for the index to parse once, with the unit
/// each line comes from.
pub fn defines_text(units: &[Unit]) -> (String, Vec<Option<usize>>) {
    let mut text = String::new();
    let mut origins = Vec::new();
    for (position, unit) in units.iter().enumerate() {
        let mut stack = vec![unit.tree.root_node()];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "preproc_def" => {
                    let (Some(name), Some(value)) = (node.field_child("name"), node.field_child("value")) else {
                        continue;
                    };
                    let value = unit.text_of(value).trim();
                    // A value spanning lines or holding braces is no integer.
                    if !value.is_empty() && !value.contains(['{', '}', ';', '\\', '\n']) {
                        text.push_str(&format!("auto {} = ({value});\n", unit.text_of(name)));
                        origins.push(Some(position));
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
    (text, origins)
}
