//! What the files of a run define: modules (one per file) with their imports, module
//! constants, functions and classes (with their methods), looked up by the walk.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use tree_sitter::{Node, Parser, Tree};

/// The file extensions read as Python.
pub const EXTENSIONS: &[&str] = &["py", "pyi"];

/// One parsed file, its text laid at `base` in the run's byte space. A file whose
/// text is unchanged is reused by the next run at its new `base` (see [`Unit::moved_to`]).
#[derive(Clone)]
pub struct Unit {
    pub path: String,
    pub text: String,
    pub base: usize,
    /// `None` when tree-sitter gave up (a cancelled or failed parse).
    pub tree: Option<Tree>,
    /// Its imports and the names its functions mention: scanned once, with the parse
    /// (shared by the copies a reused parse makes).
    pub names: std::sync::Arc<UnitNames>,
    /// Which parse this is: a file parsed again gets a new id, one reused keeps its id.
    pub id: u64,
}

/// What one walk over a whole file finds.
#[derive(Clone, Default)]
pub struct UnitNames {
    /// Imported names: `np` → `numpy`, `Stream` → `torch.npu.Stream`.
    pub aliases: HashMap<String, String>,
    /// Names that function bodies call or mention (`f`, `obj.method`).
    pub mentioned: HashSet<String>,
}

impl Unit {
    pub fn parse(path: String, text: String, base: usize) -> Unit {
        let mut parser = Parser::new();
        let tree = parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .ok()
            .and_then(|()| parser.parse(&text, None));
        static PARSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut unit = Unit {
            path,
            text,
            base,
            tree,
            names: Default::default(),
            id: PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        if let Some(tree) = &unit.tree {
            unit.names = std::sync::Arc::new(scan_names(&unit, tree.root_node()));
        }
        unit
    }

    /// The same parse, laid at `base`.
    pub fn moved_to(&self, base: usize) -> Unit {
        Unit { base, ..self.clone() }
    }

    /// The module name: the file stem (`runner` for `pkg/runner.py`).
    pub fn stem(&self) -> String {
        std::path::Path::new(&self.path)
            .file_stem()
            .map_or_else(|| "module".to_string(), |stem| stem.to_string_lossy().into_owned())
    }
}

/// A function or method with a body.
pub struct FnDef<'t> {
    pub unit: usize,
    /// `None` for a module-level function.
    pub class: Option<String>,
    pub name: String,
    pub node: Node<'t>,
}

impl FnDef<'_> {
    /// `Class.method` or `function`.
    pub fn qualified(&self) -> String {
        match &self.class {
            Some(class) => format!("{class}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

pub struct ClassDef {
    pub unit: usize,
    pub name: String,
    /// Base classes as written (`nn.Module`, `Base`).
    pub bases: Vec<String>,
}

/// Per module: imported names (`np` → `numpy`, `Stream` → `torch.npu.Stream`) and
/// module-level assignments (evaluated on use).
#[derive(Default)]
pub struct ModuleScope<'t> {
    /// The unit's own (scanned with its parse), borrowed.
    pub aliases: Option<&'t HashMap<String, String>>,
    pub globals: HashMap<String, Node<'t>>,
}

pub struct Index<'t> {
    pub units: &'t [Unit],
    pub functions: Vec<FnDef<'t>>,
    pub classes: Vec<ClassDef>,
    pub modules: Vec<ModuleScope<'t>>,
    /// Names that function bodies call or mention (`f`, `obj.method`): a function
    /// mentioned is not an entry point.
    pub mentioned: HashSet<&'t str>,
    /// The module names (file stems) of the run, and their packages (folders).
    pub stems: HashSet<String>,
    /// Module-level functions by name, in file order.
    by_name: HashMap<String, Vec<usize>>,
    /// Methods by class and name.
    methods: HashMap<(String, String), usize>,
    classes_by_name: HashMap<String, usize>,
}

/// What one file defines: its functions, classes and module scope.
#[derive(Default)]
struct Definitions<'t> {
    functions: Vec<FnDef<'t>>,
    classes: Vec<ClassDef>,
    scope: ModuleScope<'t>,
}

impl<'t> Definitions<'t> {
    fn scan(&mut self, unit_at: usize, unit: &Unit, body: Node<'t>, class: Option<&str>, depth: usize) {
        if depth > 8 {
            return;
        }
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            let child = match child.kind() {
                "decorated_definition" => match child.child_by_field_name("definition") {
                    Some(definition) => definition,
                    None => continue,
                },
                _ => child,
            };
            match child.kind() {
                "function_definition" => {
                    let Some(name) = child.child_by_field_name("name") else {
                        continue;
                    };
                    self.functions.push(FnDef {
                        unit: unit_at,
                        class: class.map(str::to_string),
                        name: text(unit, name).to_string(),
                        node: child,
                    });
                }
                "class_definition" if class.is_none() => {
                    let (Some(name), Some(class_body)) =
                        (child.child_by_field_name("name"), child.child_by_field_name("body"))
                    else {
                        continue;
                    };
                    let name = text(unit, name).to_string();
                    let bases = child
                        .child_by_field_name("superclasses")
                        .map(|list| {
                            let mut cursor = list.walk();
                            list.named_children(&mut cursor)
                                .map(|base| text(unit, base).to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    self.classes.push(ClassDef {
                        unit: unit_at,
                        name: name.clone(),
                        bases,
                    });
                    self.scan(unit_at, unit, class_body, Some(&name), depth + 1);
                }
                "expression_statement" if class.is_none() => {
                    if let Some(assignment) = child.named_child(0).filter(|node| node.kind() == "assignment")
                        && let (Some(left), Some(right)) = (
                            assignment.child_by_field_name("left"),
                            assignment.child_by_field_name("right"),
                        )
                        && left.kind() == "identifier"
                    {
                        self.scope.globals.insert(text(unit, left).to_string(), right);
                    }
                }
                // `if __name__ == "__main__":`, `try: import torch_npu`: definitions and
                // constants under module-level blocks count too.
                "if_statement" | "try_statement" | "block" | "else_clause" | "elif_clause" | "except_clause"
                | "finally_clause"
                    if class.is_none() =>
                {
                    let mut cursor = child.walk();
                    let nested: Vec<Node<'t>> = child.named_children(&mut cursor).collect();
                    for node in nested {
                        if matches!(
                            node.kind(),
                            "block" | "else_clause" | "elif_clause" | "except_clause" | "finally_clause"
                        ) {
                            self.scan(unit_at, unit, node, None, depth + 1);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Nodes visited by one scan of a file, at most: the scans are iterative, and this
/// bounds a pathological file's cost.
const MAX_SCAN: usize = 4_000_000;

impl<'t> Index<'t> {
    pub fn build(units: &'t [Unit]) -> Index<'t> {
        let mut index = Index {
            units,
            functions: Vec::new(),
            classes: Vec::new(),
            modules: Vec::new(),
            mentioned: HashSet::new(),
            stems: HashSet::new(),
            by_name: HashMap::new(),
            methods: HashMap::new(),
            classes_by_name: HashMap::new(),
        };
        // The files' definitions are scanned in parallel, then laid out in file order.
        let scanned: Vec<Definitions<'t>> = {
            use rayon::prelude::*;
            units
                .par_iter()
                .enumerate()
                .map(|(position, unit)| {
                    let mut found = Definitions::default();
                    if let Some(tree) = &unit.tree {
                        found.scan(position, unit, tree.root_node(), None, 0);
                        found.scope.aliases = Some(&unit.names.aliases);
                    }
                    found
                })
                .collect()
        };
        for (unit, found) in units.iter().zip(scanned) {
            index.stems.insert(unit.stem());
            let folders = std::path::Path::new(&unit.path)
                .parent()
                .into_iter()
                .flat_map(|p| p.iter());
            index
                .stems
                .extend(folders.map(|folder| folder.to_string_lossy().into_owned()));
            index.mentioned.extend(unit.names.mentioned.iter().map(String::as_str));
            index.functions.extend(found.functions);
            index.classes.extend(found.classes);
            index.modules.push(found.scope);
        }
        for (at, def) in index.functions.iter().enumerate() {
            match &def.class {
                Some(class) => {
                    index.methods.entry((class.clone(), def.name.clone())).or_insert(at);
                }
                None => index.by_name.entry(def.name.clone()).or_default().push(at),
            }
        }
        for (at, class) in index.classes.iter().enumerate() {
            index.classes_by_name.entry(class.name.clone()).or_insert(at);
        }
        index
    }

    pub fn class(&self, name: &str) -> Option<&ClassDef> {
        self.classes_by_name.get(name).map(|at| &self.classes[*at])
    }

    /// The method `name` of `class` or of a base class the files define: its position.
    pub fn method(&self, class: &str, name: &str) -> Option<usize> {
        let mut current = class.to_string();
        for _ in 0..16 {
            if let Some(at) = self.methods.get(&(current.clone(), name.to_string())) {
                return Some(*at);
            }
            let base = self.class(&current)?.bases.iter().find_map(|base| {
                let simple = base.rsplit('.').next().unwrap_or(base);
                self.class(simple).map(|class| class.name.clone())
            })?;
            current = base;
        }
        None
    }

    /// Whether a class the files define derives from `threading.Thread` (directly or
    /// through classes the files define).
    pub fn derives_from_thread(&self, class: &str) -> bool {
        let mut current = class.to_string();
        for _ in 0..16 {
            let Some(def) = self.class(&current) else {
                return false;
            };
            if def
                .bases
                .iter()
                .any(|base| matches!(base.as_str(), "threading.Thread" | "Thread"))
            {
                return true;
            }
            let Some(base) = def.bases.iter().find_map(|base| {
                let simple = base.rsplit('.').next().unwrap_or(base);
                self.class(simple).map(|class| class.name.clone())
            }) else {
                return false;
            };
            current = base;
        }
        false
    }

    /// A module-level function `name`, preferring one in `unit`: its position.
    pub fn function(&self, unit: usize, name: &str) -> Option<usize> {
        let found = self.by_name.get(name)?;
        found
            .iter()
            .find(|at| self.functions[**at].unit == unit)
            .or_else(|| found.first())
            .copied()
    }
}

/// The nodes below `root` in pre-order, iteratively (at most `MAX_SCAN`).
pub fn preorder(root: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        out.push(cursor.node());
        if out.len() >= MAX_SCAN {
            return out;
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// An `import` (at any depth): `import torch_npu`, `import acl as a`, `from
/// torch_npu import npu`, `from acl import rt`.
fn scan_import(unit: &Unit, node: Node, aliases: &mut HashMap<String, String>) {
    match node.kind() {
        "import_statement" => {
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                match name.kind() {
                    "aliased_import" => {
                        if let (Some(full), Some(alias)) =
                            (name.child_by_field_name("name"), name.child_by_field_name("alias"))
                        {
                            aliases.insert(text(unit, alias).to_string(), dotted(text(unit, full)));
                        }
                    }
                    _ => {
                        let full = dotted(text(unit, name));
                        let first = full.split('.').next().unwrap_or("").to_string();
                        aliases.entry(first.clone()).or_insert(first);
                    }
                }
            }
        }
        "import_from_statement" => {
            let Some(module) = node.child_by_field_name("module_name") else {
                return;
            };
            let module = dotted(text(unit, module));
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let (full, alias) = match name.kind() {
                    "aliased_import" => (name.child_by_field_name("name"), name.child_by_field_name("alias")),
                    _ => (Some(name), Some(name)),
                };
                if let (Some(full), Some(alias)) = (full, alias) {
                    aliases.insert(
                        text(unit, alias).to_string(),
                        format!("{module}.{}", dotted(text(unit, full))),
                    );
                }
            }
        }
        _ => {}
    }
}

/// Imports, and names called or mentioned inside function bodies: one walk with a
/// cursor that counts the functions it is inside (a node's parent is not cheap in
/// tree-sitter).
fn scan_names(unit: &Unit, root: Node) -> UnitNames {
    let mut names = UnitNames::default();
    let mut cursor = root.walk();
    // The kinds of the nodes above the cursor.
    let mut parents: Vec<&'static str> = Vec::new();
    let mut inside = 0usize;
    let mut visited = 0usize;
    loop {
        let node = cursor.node();
        visited += 1;
        if visited > MAX_SCAN {
            return names;
        }
        if node.kind() == "identifier" && inside > 0 {
            // The name of a definition is not a mention of it.
            let defines = cursor.field_name() == Some("name")
                && parents
                    .last()
                    .is_some_and(|kind| matches!(*kind, "function_definition" | "class_definition"));
            if !defines {
                names.mentioned.insert(text(unit, node).to_string());
            }
        }
        if matches!(node.kind(), "import_statement" | "import_from_statement") {
            scan_import(unit, node, &mut names.aliases);
        }
        let is_function = node.kind() == "function_definition";
        if cursor.goto_first_child() {
            parents.push(node.kind());
            inside += usize::from(is_function);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return names;
            }
            if parents.pop() == Some("function_definition") {
                inside -= 1;
            }
        }
    }
}

pub fn text<'a>(unit: &'a Unit, node: Node) -> &'a str {
    unit.text.get(node.byte_range()).unwrap_or("")
}

/// A dotted name without the spaces Python allows in it (`torch . npu`).
fn dotted(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The range of `node` in the run's byte space.
pub fn space_range(unit: &Unit, node: Node) -> Range<usize> {
    unit.base + node.start_byte()..unit.base + node.end_byte()
}
