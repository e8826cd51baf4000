//! What the kernel walks ask of every file's types again and again, collected once per
//! run: the names the files define as records (structs, classes, unions, aliases), each
//! file's field declarations by the name they declare, and the template parameters of
//! each class template.
//!
//! A kernel walk asked these questions by walking whole parse trees: whether some file
//! defines `T` as a record walked every file whose text holds `T` (nearly all), once
//! per kernel walk and name; a field's declaration walked the files the kernel sees,
//! once per kernel walk and field; a kernel class's template parameters walked the
//! declarations of every file, at each declaration of an object of it. Per-core walks of
//! a thousand-file tree spent a quarter of their time on the first; on the whole
//! asc-devkit tree (5,888 files) the last was two thirds of all CPU time. The tables are
//! built at first use, by the same traversals, and answer exactly what those walks
//! answered (see each method).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use tree_sitter::Node;

use crate::fields::FieldChild;
use crate::index::Unit;

pub(crate) struct TypeTables<'u> {
    units: &'u [Unit],
    /// Every name some file defines as a record, trimmed.
    records: OnceLock<HashSet<&'u str>>,
    /// Per file: each declared field name, with the first field declaration declaring
    /// it in [`first_fields`]' order.
    fields: Vec<OnceLock<HashMap<&'u str, Node<'u>>>>,
    /// Each class or struct template's name, trimmed, with the template parameters of
    /// its first declaration in [`template_declarations`]' order (`None`: one without a
    /// parameter list).
    templates: OnceLock<HashMap<&'u str, Option<Vec<String>>>>,
}

impl<'u> TypeTables<'u> {
    pub(crate) fn new(units: &'u [Unit]) -> Self {
        TypeTables {
            units,
            records: OnceLock::new(),
            fields: units.iter().map(|_| OnceLock::new()).collect(),
            templates: OnceLock::new(),
        }
    }

    /// Whether some file defines `name` as a struct, class, union or alias: whether a
    /// record's (or alias's) name node, its text trimmed, is `name` in any file. The set
    /// holds every such trimmed text of every file, so it answers the same.
    pub(crate) fn defines_record(&self, name: &str) -> bool {
        self.records
            .get_or_init(|| {
                let mut names = HashSet::new();
                for unit in self.units {
                    record_names(unit, &mut names);
                }
                names
            })
            .contains(name)
    }

    /// The first field declaration of `unit` that declares `name` (a declarator whose
    /// identifier is `name`), in the order of a walk from the root that takes a node's
    /// children last first and does not enter field declarations.
    pub(crate) fn field(&self, unit: usize, name: &str) -> Option<Node<'u>> {
        self.fields
            .get(unit)?
            .get_or_init(|| first_fields(&self.units[unit]))
            .get(name)
            .copied()
    }
}

impl TypeTables<'_> {
    /// `template <typename T, typename U> class NAME`: `["T", "U"]`, from the first
    /// template declaring a class or struct `class` (its name node's text trimmed), the
    /// files taken in order, each by [`template_declarations`]; `None` where there is
    /// none, or the first has no parameter list. The table keeps, per name, the answer
    /// of the first declaration that names it in that same order.
    pub(crate) fn template_params(&self, class: &str) -> Option<Vec<String>> {
        self.templates
            .get_or_init(|| {
                let mut templates = HashMap::new();
                for unit in self.units {
                    for (name, params) in template_declarations(unit) {
                        templates.entry(name).or_insert(params);
                    }
                }
                templates
            })
            .get(class)
            .cloned()
            .flatten()
    }
}

/// Each class or struct a template declaration of `unit` declares (its name trimmed),
/// with the declaration's parameters: a walk from the root that takes a node's children
/// last first and enters only what holds declarations (namespaces, templates, linkage
/// blocks, preprocessor branches), never a class body or a function.
fn template_declarations(unit: &Unit) -> Vec<(&str, Option<Vec<String>>)> {
    let mut found = Vec::new();
    let mut stack = vec![unit.tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        if node.kind() == "template_declaration" {
            let params = node.field_child("parameters").map(|list| parameter_names(unit, list));
            for child in node.named_children(&mut cursor) {
                if matches!(child.kind(), "class_specifier" | "struct_specifier")
                    && let Some(name) = child.field_child("name")
                {
                    found.push((unit.text_of(name).trim(), params.clone()));
                }
            }
        }
        if matches!(
            node.kind(),
            "translation_unit"
                | "namespace_definition"
                | "declaration_list"
                | "template_declaration"
                | "linkage_specification"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
        ) {
            stack.extend(node.named_children(&mut cursor));
        }
    }
    found
}

/// `<typename T, int N = 2>`: `["T", "N"]`.
fn parameter_names(unit: &Unit, list: Node) -> Vec<String> {
    let mut cursor = list.walk();
    list.named_children(&mut cursor)
        .filter_map(|p| {
            let text = unit.text_of(p);
            let head = text.split('=').next()?.trim();
            head.rsplit(|c: char| c.is_whitespace()).next().map(str::to_string)
        })
        .collect()
}

/// The trimmed names of the records and aliases `unit` defines, anywhere in it.
fn record_names<'u>(unit: &'u Unit, names: &mut HashSet<&'u str>) {
    let mut stack = vec![unit.tree.root_node()];
    while let Some(node) = stack.pop() {
        let declared = match node.kind() {
            "struct_specifier" | "class_specifier" | "union_specifier" => node.field_child("name"),
            "type_definition" | "alias_declaration" => {
                node.field_child("declarator").or_else(|| node.field_child("name"))
            }
            _ => None,
        };
        if let Some(declared) = declared {
            names.insert(unit.text_of(declared).trim());
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
}

/// Each field name `unit` declares, with the first field declaration declaring it: the
/// walk pops its last pushed node first (children pushed in order), as the search for
/// one name did, so the first declaration a name is entered with is the one that search
/// returned.
fn first_fields(unit: &Unit) -> HashMap<&str, Node<'_>> {
    let mut fields = HashMap::new();
    let mut stack = vec![unit.tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        if node.kind() == "field_declaration" {
            for declarator in node.children_by_field_name("declarator", &mut cursor) {
                let name = declared_identifier(unit.text_of(declarator));
                fields.entry(name).or_insert(node);
            }
            continue;
        }
        stack.extend(node.named_children(&mut cursor));
    }
    fields
}

/// `ALPHA = -1.0f` / `buf[4]` / `x{0}` → the declared name.
pub(crate) fn declared_identifier(text: &str) -> &str {
    text.split(['=', '{', '['])
        .next()
        .unwrap_or(text)
        .trim()
        .trim_start_matches(['*', '&'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str) -> Unit {
        Unit::parse("a.cpp".into(), text.into(), 0)
    }

    #[test]
    fn records_and_aliases_anywhere_are_named() {
        let units = [unit(
            "namespace n { struct Tiling { int a; }; }\nusing Alias = int;\ntypedef struct { int b; } Plain;\nvoid f() { class Local {}; }",
        )];
        let tables = TypeTables::new(&units);
        for name in ["Tiling", "Alias", "Plain", "Local"] {
            assert!(tables.defines_record(name), "{name}");
        }
        assert!(!tables.defines_record("a"));
        assert!(!tables.defines_record("f"));
    }

    #[test]
    fn a_template_has_the_parameters_of_its_first_declaration() {
        let units = [
            unit("namespace a { template <typename T, int N = 2> class K {}; }\ntemplate <typename U> struct S;"),
            unit("template <typename V> class K {};\nclass Plain {};"),
        ];
        let tables = TypeTables::new(&units);
        let names = |list: &[&str]| Some(list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(tables.template_params("K"), names(&["T", "N"]));
        assert_eq!(tables.template_params("S"), names(&["U"]));
        assert_eq!(tables.template_params("Plain"), None);
        assert_eq!(tables.template_params("V"), None);
    }

    #[test]
    fn a_field_is_its_first_declaration_in_the_search_order() {
        // The search takes the last top-level declaration first.
        let units = [unit("struct A { int m = 1; int k, n; };\nstruct B { int m = 2; };")];
        let tables = TypeTables::new(&units);
        let text = |node: Node| units[0].text_of(node).to_string();
        assert_eq!(tables.field(0, "m").map(text).as_deref(), Some("int m = 2;"));
        assert_eq!(tables.field(0, "n").map(text).as_deref(), Some("int k, n;"));
        assert!(tables.field(0, "x").is_none());
        assert!(tables.field(1, "m").is_none());
    }
}
