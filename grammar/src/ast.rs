//! The syntax tree of a `.sync` file: a plain value type with byte spans.
//!
//! The tree is deliberately generic: a statement is a call (`aclrtRecordEvent(ev, s1);`),
//! a binding (`let ev = aclrtCreateEvent();`) or one of a few structural forms. Which
//! calls exist and what their arguments mean is the analyzer's API catalogue, not syntax.

use std::ops::Range;

/// A byte range into the source text.
pub type Span = Range<usize>;

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A possibly qualified name: `s1`, `acl.rt.record_event`, `AscendC::SetNextTaskStart`.
/// `text` keeps the separators exactly as written (`.` or `::`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub text: String,
    pub span: Span,
}

/// A whole file: its statements in order (settings, host code, GE ops).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct File {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `target A3;`, `cann legacy;`, `hccl_buffer_size 400 MiB;`, `default_stream per_thread;`
    Setting { key: Ident, value: Expr },
    /// `ranks 2;` or `ranks N in 2..=1024;`
    Ranks(RankCount),
    /// `param K in 1..=4;`
    Param { name: Ident, range: RangeExpr },
    /// `let s = aclrtCreateStream();`, `let [t0, t1] = HcclThreadAcquire(...);` (an API
    /// call creates objects) or `let base = GetBlockIdx() * 1 KiB;` (a named integer).
    Let { pattern: Pattern, value: Expr },
    /// `let mut remaining = N * CHUNK;`: a variable the code assigns again.
    LetMut { name: Ident, value: Expr },
    /// `remaining = remaining - CHUNK;`
    Assign { name: Ident, value: Expr },
    /// `aclrtRecordEvent(ev, s1);`
    Call(Call),
    /// `if cond { ... } else if cond { ... } else { ... }`
    If {
        cond: Expr,
        then: Block,
        otherwise: Option<Else>,
    },
    /// `for i in 0..N { ... }`
    For { var: Ident, range: RangeExpr, body: Block },
    /// `while cond { ... }`
    While { cond: Expr, body: Block },
    /// `thread worker { ... }`: a second host thread of the same process.
    Thread { name: Ident, body: Block },
    /// `op MatmulAllReduce attrs(group, group_tp) { ... }`: a GE op's gen-task list.
    GeOp {
        name: Ident,
        attrs: Vec<Ident>,
        body: Block,
    },
    /// `superkernel sk(s1, aic: 24, aiv: 48) { subkernel ... }`
    SuperKernel { name: Ident, args: Vec<Arg>, body: Block },
    /// `subkernel add(tiling_keys: [1, 2]) { per-core code }`
    SubKernel { name: Ident, args: Vec<Arg>, body: Block },
    /// `aicore add(x, y, blocks: 8, type: AIV_ONLY) { pipe program }`: what every AI
    /// core of a kernel runs, instruction by instruction on its pipes.
    AiCore { name: Ident, args: Vec<Arg>, body: Block },
    /// `return;` (an early return of a kernel or host thread)
    Return,
    /// A statement that did not parse; the error is reported separately.
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Else {
    If(Box<Stmt>),
    Block(Block),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankCount {
    Fixed(Expr),
    Param { name: Ident, range: RangeExpr },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    Name(Ident),
    List(Vec<Ident>, Span),
}

impl Expr {
    /// The names the expression refers to (`ev`, `workers` in `workers[i]`), outermost
    /// first; nested no deeper than a frontend builds expressions.
    pub fn names(&self) -> Vec<&str> {
        let mut names = Vec::new();
        self.collect_names(&mut names, 0);
        names
    }

    fn collect_names<'e>(&'e self, names: &mut Vec<&'e str>, depth: usize) {
        const MAX_DEPTH: usize = 64;
        if depth > MAX_DEPTH {
            return;
        }
        let mut visit = |expr: &'e Expr| expr.collect_names(names, depth + 1);
        match &self.kind {
            ExprKind::Name(path) => names.push(&path.text),
            ExprKind::Unary(_, operand) => visit(operand),
            ExprKind::Binary(_, left, right) => {
                visit(left);
                visit(right);
            }
            ExprKind::Cond { cond, then, otherwise } => {
                visit(cond);
                visit(then);
                visit(otherwise);
            }
            ExprKind::Call(call) => call.args.iter().for_each(|arg| visit(&arg.value)),
            ExprKind::Slice { base, .. } => visit(base),
            ExprKind::Index { base, index } => {
                visit(base);
                visit(index);
            }
            ExprKind::List(items) => items.iter().for_each(visit),
            ExprKind::ListFor(list) => visit(&list.item),
            ExprKind::Struct(fields) => fields.iter().for_each(|field| visit(&field.value)),
            ExprKind::Int(_) | ExprKind::Str(_) | ExprKind::Bool(_) | ExprKind::Null | ExprKind::Error => {}
        }
    }

    /// An integer literal (a negation for a negative value).
    pub fn int(value: i64, span: Span) -> Expr {
        let literal = Expr {
            kind: ExprKind::Int(IntLit {
                value: value.unsigned_abs(),
                hex: false,
                unit: None,
            }),
            span: span.clone(),
        };
        if value < 0 {
            return Expr {
                kind: ExprKind::Unary(UnaryOp::Neg, Box::new(literal)),
                span,
            };
        }
        literal
    }

    /// A name (`ev`, `ACL_EVENT_SYNC`).
    pub fn name(name: &str, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Name(Path {
                text: name.to_string(),
                span: span.clone(),
            }),
            span,
        }
    }
}

impl Stmt {
    /// The blocks nested in this statement (each arm of an `if` chain, a loop's body).
    pub fn blocks(&self) -> Vec<&Block> {
        match &self.kind {
            StmtKind::If { then, otherwise, .. } => {
                let mut blocks = vec![then];
                let mut next = otherwise.as_ref();
                while let Some(branch) = next {
                    match branch {
                        Else::Block(block) => {
                            blocks.push(block);
                            next = None;
                        }
                        Else::If(nested) => {
                            let StmtKind::If { then, otherwise, .. } = &nested.kind else {
                                break;
                            };
                            blocks.push(then);
                            next = otherwise.as_ref();
                        }
                    }
                }
                blocks
            }
            StmtKind::For { body, .. }
            | StmtKind::While { body, .. }
            | StmtKind::Thread { body, .. }
            | StmtKind::GeOp { body, .. }
            | StmtKind::SuperKernel { body, .. }
            | StmtKind::SubKernel { body, .. }
            | StmtKind::AiCore { body, .. } => vec![body],
            _ => Vec::new(),
        }
    }

    /// [`Stmt::blocks`], to change them.
    pub fn blocks_mut(&mut self) -> Vec<&mut Block> {
        match &mut self.kind {
            StmtKind::If { then, otherwise, .. } => {
                let mut blocks = vec![then];
                let mut next = otherwise.as_mut();
                while let Some(branch) = next {
                    match branch {
                        Else::Block(block) => {
                            blocks.push(block);
                            next = None;
                        }
                        Else::If(nested) => {
                            let StmtKind::If { then, otherwise, .. } = &mut nested.kind else {
                                break;
                            };
                            blocks.push(then);
                            next = otherwise.as_mut();
                        }
                    }
                }
                blocks
            }
            StmtKind::For { body, .. }
            | StmtKind::While { body, .. }
            | StmtKind::Thread { body, .. }
            | StmtKind::GeOp { body, .. }
            | StmtKind::SuperKernel { body, .. }
            | StmtKind::SubKernel { body, .. }
            | StmtKind::AiCore { body, .. } => vec![body],
            _ => Vec::new(),
        }
    }
}

impl Pattern {
    pub fn names(&self) -> &[Ident] {
        match self {
            Pattern::Name(name) => std::slice::from_ref(name),
            Pattern::List(names, _) => names,
        }
    }
}

/// `lo..hi`, `lo..=hi` or `lo..` (unbounded above).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeExpr {
    pub start: Box<Expr>,
    pub end: Option<Box<Expr>>,
    pub inclusive: bool,
    pub span: Span,
}

/// A call: `callee<generics>(args)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub callee: Path,
    /// Template arguments, `None` when there are no angle brackets at all.
    pub generics: Option<Vec<Expr>>,
    pub args: Vec<Arg>,
    pub span: Span,
}

/// A positional (`s1`) or named (`stream_id: 1`) argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Int(IntLit),
    Str(String),
    Bool(bool),
    /// `NULL` or `nullptr`: the default stream where a stream is expected.
    Null,
    Name(Path),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : otherwise`
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Call(Box<Call>),
    /// `buf[start..end]`: a byte range of a buffer.
    Slice {
        base: Box<Expr>,
        range: RangeExpr,
    },
    /// `handles[i]`: one handle of a handle array.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `[a, b]`
    List(Vec<Expr>),
    /// `[item for var in range]`: a list built by a loop, as C code fills an array of
    /// descriptors (`HcclChannelAcquire`'s `channelDescs`). Boxed: every `Expr` would
    /// grow by its size, and the parser's stack with it.
    ListFor(Box<ListFor>),
    /// `{ remoteRank: 1, notifyNum: 3 }`: a C struct such as `HcclChannelDesc`.
    Struct(Vec<Field>),
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListFor {
    pub item: Expr,
    pub var: Ident,
    pub range: RangeExpr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: Ident,
    pub value: Expr,
}

/// An integer literal as written: its value, radix and optional byte-size unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntLit {
    pub value: u64,
    pub hex: bool,
    pub unit: Option<SizeUnit>,
}

impl IntLit {
    /// The value in bytes (or the plain value when there is no unit), `None` on overflow.
    pub fn scaled(&self) -> Option<u64> {
        self.value.checked_mul(self.unit.map_or(1, SizeUnit::factor))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeUnit {
    B,
    KiB,
    MiB,
    GiB,
    KB,
    MB,
    GB,
}

impl SizeUnit {
    pub const ALL: [SizeUnit; 7] = [
        SizeUnit::B,
        SizeUnit::KiB,
        SizeUnit::MiB,
        SizeUnit::GiB,
        SizeUnit::KB,
        SizeUnit::MB,
        SizeUnit::GB,
    ];

    pub fn factor(self) -> u64 {
        match self {
            SizeUnit::B => 1,
            SizeUnit::KiB => 1 << 10,
            SizeUnit::MiB => 1 << 20,
            SizeUnit::GiB => 1 << 30,
            SizeUnit::KB => 1_000,
            SizeUnit::MB => 1_000_000,
            SizeUnit::GB => 1_000_000_000,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SizeUnit::B => "B",
            SizeUnit::KiB => "KiB",
            SizeUnit::MiB => "MiB",
            SizeUnit::GiB => "GiB",
            SizeUnit::KB => "KB",
            SizeUnit::MB => "MB",
            SizeUnit::GB => "GB",
        }
    }

    pub fn from_name(text: &str) -> Option<SizeUnit> {
        SizeUnit::ALL.into_iter().find(|unit| unit.as_str() == text)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    BitAnd,
    BitXor,
    BitOr,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitXor => "^",
            BinaryOp::BitOr => "|",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// Binding strength; higher binds tighter. Operators of equal precedence associate left.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 10,
            BinaryOp::Add | BinaryOp::Sub => 9,
            BinaryOp::Shl | BinaryOp::Shr => 8,
            BinaryOp::BitAnd => 7,
            BinaryOp::BitXor => 6,
            BinaryOp::BitOr => 5,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 4,
            BinaryOp::And => 3,
            BinaryOp::Or => 2,
        }
    }
}

/// A comment kept by the lexer so that the pretty-printer can put it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub text: String,
    pub span: Span,
}
