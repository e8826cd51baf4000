//! What the extractor knows about a C++ value while it walks an entry point.

use syncguard_grammar::ast;

/// A storage location, as a path from a root variable: `ev#3`, `ctx#1.streams[1]`,
/// `::g_stream`, `this#2.stream_`. The `#n` tells apart locals of the same name in
/// different frames.
pub type Place = String;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    /// `nullptr`, `NULL`: the default stream where a stream is expected.
    Null,
    /// An object of the extracted program (stream, event, notify, ...), by its `.sync` name.
    Handle(String),
    /// An address `offset` bytes into a buffer of the extracted program; pointer
    /// arithmetic moves by `scale` bytes per step (the pointee's size).
    Buffer {
        name: String,
        offset: i64,
        scale: Scale,
    },
    /// An address at a rank-dependent offset into a buffer (`ccl + rank * SLICE`).
    SymBuffer {
        name: String,
        offset: ast::Expr,
        scale: Scale,
    },
    /// The address of a place (`&x`, an array, a reference parameter).
    Ref(Place),
    /// What stays symbolic in the extracted program, kept as `.sync` syntax: a constant
    /// the catalogue names (`ACL_EVENT_SYNC`), an expression over `rank`
    /// (`(rank + 1) % 4`), an element of a handle array (`workers[2]`).
    Sym(ast::Expr),
    Str(String),
    /// A GE gen-task (`KernelLaunchInfo::CreateHcomWaitTask(context, "group")`), with
    /// the stream its last `SetStreamId` chose.
    Task(Box<GenTask>),
    /// Anything the extractor cannot follow.
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GenTask {
    pub call: ast::Call,
    pub stream: Option<ast::Expr>,
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(value) => Some(*value),
            Value::Null => Some(0),
            _ => None,
        }
    }

    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Handle(_) | Value::Buffer { .. } | Value::SymBuffer { .. } | Value::Ref(_) | Value::Str(_) => {
                Some(true)
            }
            other => other.int().map(|value| value != 0),
        }
    }

    /// Whether the value names an object of the program (what an unknown callee that
    /// receives it might use).
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Handle(_) | Value::Buffer { .. } | Value::SymBuffer { .. })
    }

    /// The `.sync` names of the objects the value refers to (`workers` for `workers[2]`).
    pub fn object_names(&self) -> Vec<String> {
        match self {
            Value::Handle(name) | Value::Buffer { name, .. } | Value::SymBuffer { name, .. } => vec![name.clone()],
            Value::Sym(expr) => expr.names().into_iter().map(str::to_string).collect(),
            _ => Vec::new(),
        }
    }
}

/// How many bytes one step of a pointer or a tensor index moves.
#[derive(Clone, Debug, PartialEq)]
pub enum Scale {
    /// A known size; 0 where it is not known (whole tensors), -1 where an index by a
    /// size not known lost the start too.
    Bytes(i64),
    /// A size the build picks (`sizeof_T` of a type from `DTYPE_X`), as `.sync` syntax:
    /// offsets and lengths in it stay symbolic, for z3 to decide.
    Sym(ast::Expr),
}

impl Scale {
    pub const UNKNOWN: Scale = Scale::Bytes(0);
    pub const LOST: Scale = Scale::Bytes(-1);

    /// The size as `.sync` syntax, where it is known or symbolic.
    pub fn expr(&self, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        match self {
            Scale::Bytes(bytes) if *bytes > 0 => Some(ast::Expr::int(*bytes, span)),
            Scale::Bytes(_) => None,
            Scale::Sym(size) => Some(size.clone()),
        }
    }

    /// Whether the size is known or symbolic.
    pub fn is_known(&self) -> bool {
        !matches!(self, Scale::Bytes(bytes) if *bytes <= 0)
    }

    /// Whether an index into it lost the start as well as the length.
    pub fn is_lost(&self) -> bool {
        *self == Scale::LOST
    }
}

/// The `.sync` name for an object created into `place`: `ctx#1.streams[1]` becomes
/// `ctx_streams_1`, `this#2.stream_` becomes `stream`.
pub fn name_for(place: &str) -> String {
    let mut name = String::new();
    let mut chars = place.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            c if c.is_ascii_alphanumeric() || c == '_' => name.push(c),
            _ => {
                if !name.ends_with('_') && !name.is_empty() {
                    name.push('_');
                }
            }
        }
    }
    let name = name.trim_matches('_');
    let name = name.strip_prefix("this_").unwrap_or(name);
    let name = name.trim_start_matches(|c: char| c.is_ascii_digit());
    if name.is_empty() {
        "handle".into()
    } else {
        name.to_string()
    }
}

/// `text` as a `.sync` identifier: letters, digits and `_`, not starting with a digit,
/// not a keyword; other characters become `_`.
pub fn identifier(text: &str) -> String {
    let mut name: String = text
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    if syncguard_grammar::lexer::Keyword::is_keyword(&name) {
        name.push('_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_place() {
        assert_eq!(name_for("ctx#1.streams[1]"), "ctx_streams_1");
        assert_eq!(name_for("this#2.stream_"), "stream");
        assert_eq!(name_for("::g_event"), "g_event");
        assert_eq!(name_for("ev#12"), "ev");
    }
}
