//! Inside kernels, for every tiling value, core index and TilingKey: the cores that
//! share a cross-core flag set and wait for it equally often, and every core of a type
//! reaches `SyncAll` equally often. Each count is a term: a call counts one, an `if`
//! its taken branch, a loop its trip count times its body (a body whose count depends
//! on the loop's own variable is not encoded), an early `return` cuts what follows.
//! A violation is handed back as a launch (parameter values and the cores involved)
//! for the kernel's concrete walk, which reports it with every involved call.

use z3::ast::{Bool, Int};

use crate::model::{Expr, Program};
use crate::smt::encode::{Encoder, Scope, Unbound};
use crate::smt::{Answer, Query, SmtOptions, values_of};
use syncguard_model::kernel::{CoreType, KOp, KOpKind, KStmt, Kernel, KernelKind};

/// Parameter values and core indices (by type) the concrete walk should add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnbalancedLaunch {
    pub params: Vec<i64>,
    pub cores: Vec<(CoreType, i64)>,
}

/// What to count.
#[derive(Clone, Copy)]
enum Counted {
    Set(i64),
    Wait(i64),
    SyncAll,
}

impl Counted {
    fn matches(self, op: &KOp) -> Option<&Expr> {
        match (self, &op.kind) {
            (Counted::Set(_), KOpKind::CrossCoreSetFlag { flag, .. }) => Some(flag),
            (Counted::Wait(_), KOpKind::CrossCoreWaitFlag { flag, .. }) => Some(flag),
            _ => None,
        }
    }

    fn flag(self) -> i64 {
        match self {
            Counted::Set(f) | Counted::Wait(f) => f,
            Counted::SyncAll => 0,
        }
    }
}

/// One core: its scope, and the counts of what it does.
struct Core {
    scope: Scope,
    index: Int,
}

fn core(params: &[Int], core: CoreType, key: &Int, name: &str) -> Core {
    let index = Int::new_const(name);
    Core {
        scope: Scope {
            params: params.to_vec(),
            block_idx: Some(index.clone()),
            tiling_key: Some(key.clone()),
            is_aiv: Some(Bool::from_bool(core == CoreType::Aiv)),
            ..Scope::default()
        },
        index,
    }
}

/// Launches where the kernel's cross-core flags or `SyncAll` calls do not balance. Asked
/// in a z3 context of their own: the launch z3 gives (which the walk then checks, and
/// the finding names) must not depend on what the thread asked before.
pub(crate) fn unbalanced_launches(program: &Program, kernel: &Kernel, keys: &[i64]) -> Vec<UnbalancedLaunch> {
    let calls = crate::kernel::calls(kernel);
    let counted = |op: &&KOp| matches!(op.kind, KOpKind::CrossCoreSetFlag { .. } | KOpKind::SyncAll { .. });
    if !calls.iter().any(counted) {
        return Vec::new();
    }
    crate::smt::with_own_context(|| ask_balances(program, kernel, keys, &calls))
}

fn ask_balances(program: &Program, kernel: &Kernel, keys: &[i64], calls: &[&KOp]) -> Vec<UnbalancedLaunch> {
    let mut found = Vec::new();
    let options = SmtOptions::default();
    let mut flags: Vec<(i64, u8)> = calls
        .iter()
        .filter_map(|op| match &op.kind {
            KOpKind::CrossCoreSetFlag { mode, flag, .. } => flag.as_const().map(|f| (f, *mode)),
            _ => None,
        })
        .collect();
    flags.sort_unstable();
    flags.dedup_by_key(|(f, _)| *f);
    for (flag, mode) in flags {
        found.extend(flag_unbalanced(program, kernel, keys, flag, mode, &options));
    }
    if calls.iter().any(|op| matches!(op.kind, KOpKind::SyncAll { .. })) {
        for core in kernel.kind.cores() {
            found.extend(differs_between_cores(
                program,
                kernel,
                keys,
                core,
                Counted::SyncAll,
                &options,
            ));
        }
    }
    found.dedup();
    found
}

pub(super) struct Launch {
    pub params: Vec<Int>,
    /// Each parameter's least value, where the search for the smallest starts.
    pub lows: Vec<i64>,
    pub domain: Vec<Bool>,
    pub blocks: Int,
    pub key: Int,
}

pub(super) fn launch(program: &Program, kernel: &Kernel, keys: &[i64]) -> Option<Launch> {
    let mut domain = Vec::new();
    let params: Vec<Int> = program
        .params
        .iter()
        .map(|param| {
            let value = Int::new_const(param.name.as_str());
            domain.push(value.ge(param.min));
            domain.push(value.le(param.max.unwrap_or(i64::MAX)));
            value
        })
        .collect();
    let scope = Scope {
        params: params.clone(),
        ..Scope::default()
    };
    let mut encoder = Encoder::new(&scope);
    let blocks = encoder.int(&kernel.blocks).ok()?;
    domain.push(encoder.definedness());
    domain.push(blocks.ge(1));
    let key = Int::new_const("TilingKey");
    domain.push(Bool::or(&keys.iter().map(|k| key.eq(*k)).collect::<Vec<_>>()));
    Some(Launch {
        params,
        lows: program.params.iter().map(|param| param.min).collect(),
        domain,
        blocks,
        key,
    })
}

fn flag_unbalanced(
    program: &Program,
    kernel: &Kernel,
    keys: &[i64],
    flag: i64,
    mode: u8,
    options: &SmtOptions,
) -> Vec<UnbalancedLaunch> {
    let KernelKind::Mix { aic, aiv } = kernel.kind else {
        return Vec::new();
    };
    if mode != 2 {
        let mut found = Vec::new();
        for core in kernel.kind.cores() {
            found.extend(differs_on_one_core(program, kernel, keys, core, flag, options));
        }
        return found;
    }
    if aic == 0 || aiv == 0 {
        return Vec::new();
    }
    let Some(launch) = launch(program, kernel, keys) else {
        return Vec::new();
    };
    let cube = core(&launch.params, CoreType::Aic, &launch.key, "AIC core");
    let vector = core(&launch.params, CoreType::Aiv, &launch.key, "AIV core");
    let per_block = i64::from(aiv);
    let mut facts = launch.domain.clone();
    facts.push(cube.index.ge(0));
    facts.push(cube.index.lt(&launch.blocks));
    facts.push(
        vector
            .index
            .ge(Int::mul(&[cube.index.clone(), Int::from_i64(per_block)])),
    );
    facts.push(vector.index.lt(Int::add(&[
        Int::mul(&[cube.index.clone(), Int::from_i64(per_block)]),
        Int::from_i64(per_block),
    ])));
    let counts = (|| {
        Some((
            count(&kernel.body, &cube.scope, Counted::Set(flag))?,
            count(&kernel.body, &cube.scope, Counted::Wait(flag))?,
            count(&kernel.body, &vector.scope, Counted::Set(flag))?,
            count(&kernel.body, &vector.scope, Counted::Wait(flag))?,
        ))
    })();
    let Some(((cube_sets, d1), (cube_waits, d2), (vector_sets, d3), (vector_waits, d4))) = counts else {
        return Vec::new();
    };
    facts.extend([d1, d2, d3, d4]);
    facts.push(Bool::or(&[cube_sets.ne(&vector_waits), vector_sets.ne(&cube_waits)]));
    solve(
        &launch,
        &facts,
        &[(CoreType::Aic, cube.index), (CoreType::Aiv, vector.index)],
        options,
    )
}

/// One core whose sets and waits of a flag differ (modes 0 and 1).
fn differs_on_one_core(
    program: &Program,
    kernel: &Kernel,
    keys: &[i64],
    core_type: CoreType,
    flag: i64,
    options: &SmtOptions,
) -> Vec<UnbalancedLaunch> {
    let Some(launch) = launch(program, kernel, keys) else {
        return Vec::new();
    };
    let one = core(&launch.params, core_type, &launch.key, "core");
    let cores = cores_of(kernel, &launch.blocks, core_type);
    let (Some((sets, d1)), Some((waits, d2))) = (
        count(&kernel.body, &one.scope, Counted::Set(flag)),
        count(&kernel.body, &one.scope, Counted::Wait(flag)),
    ) else {
        return Vec::new();
    };
    let mut facts = launch.domain.clone();
    facts.extend([one.index.ge(0), one.index.lt(&cores), d1, d2, sets.ne(&waits)]);
    solve(&launch, &facts, &[(core_type, one.index)], options)
}

/// Two cores of one type that reach `counted` a different number of times.
fn differs_between_cores(
    program: &Program,
    kernel: &Kernel,
    keys: &[i64],
    core_type: CoreType,
    counted: Counted,
    options: &SmtOptions,
) -> Vec<UnbalancedLaunch> {
    let Some(launch) = launch(program, kernel, keys) else {
        return Vec::new();
    };
    let first = core(&launch.params, core_type, &launch.key, "first core");
    let second = core(&launch.params, core_type, &launch.key, "second core");
    let cores = cores_of(kernel, &launch.blocks, core_type);
    let (Some((a, d1)), Some((b, d2))) = (
        count(&kernel.body, &first.scope, counted),
        count(&kernel.body, &second.scope, counted),
    ) else {
        return Vec::new();
    };
    let mut facts = launch.domain.clone();
    facts.extend([
        first.index.ge(0),
        first.index.lt(&cores),
        second.index.ge(0),
        second.index.lt(&cores),
        d1,
        d2,
        a.ne(&b),
    ]);
    solve(
        &launch,
        &facts,
        &[(core_type, first.index), (core_type, second.index)],
        options,
    )
}

pub(super) fn cores_of(kernel: &Kernel, blocks: &Int, core: CoreType) -> Int {
    Int::mul(&[blocks.clone(), Int::from_i64(kernel.kind.per_block(core))])
}

pub(super) fn solve(
    launch: &Launch,
    facts: &[Bool],
    cores: &[(CoreType, Int)],
    options: &SmtOptions,
) -> Vec<UnbalancedLaunch> {
    let query = Query::new(options);
    for fact in facts {
        query.assert(fact);
    }
    // Smallest parameters first, then the smallest core indices.
    let mut objectives: Vec<(Int, i64)> = launch.params.iter().cloned().zip(launch.lows.iter().copied()).collect();
    objectives.extend(cores.iter().map(|(_, index)| (index.clone(), 0)));
    match query.solve(&objectives) {
        Answer::Fails(model) => {
            let params = values_of(&model, &launch.params);
            let indices = values_of(&model, cores.iter().map(|(_, index)| index));
            match (params, indices) {
                (Some(params), Some(indices)) => vec![UnbalancedLaunch {
                    params,
                    cores: cores.iter().map(|(core, _)| *core).zip(indices).collect(),
                }],
                _ => Vec::new(),
            }
        }
        Answer::Holds(_) | Answer::Unknown(_) => Vec::new(),
    }
}

/// The number of times a core reaches `counted`, with its definedness; `None` when the
/// code is beyond the encoding (a count that depends on its own loop's variable, a
/// `return` inside a loop).
fn count(stmts: &[KStmt], scope: &Scope, counted: Counted) -> Option<(Int, Bool)> {
    let mut encoder = Encoder::new(scope);
    let (total, _) = block(stmts, &mut encoder, counted, 0).ok()?;
    Some((total, encoder.definedness()))
}

/// Deepest nesting encoded.
const MAX_DEPTH: usize = 64;

/// The count of a block, and whether it returns (a term: it may return on some paths).
fn block(stmts: &[KStmt], encoder: &mut Encoder, counted: Counted, depth: usize) -> Result<(Int, Bool), Unbound> {
    if depth > MAX_DEPTH {
        return Err(Unbound::Builtin("nesting"));
    }
    let zero = Int::from_i64(0);
    let mut total = zero.clone();
    let mut returned = Bool::from_bool(false);
    for stmt in stmts {
        let (here, returns) = match stmt {
            KStmt::Op(op) => (one_call(op, encoder, counted)?, Bool::from_bool(false)),
            KStmt::Return(_) => (zero.clone(), Bool::from_bool(true)),
            KStmt::If {
                cond, then, otherwise, ..
            } => {
                let cond = encoder.bool(cond)?;
                let (a, ra) = block(then, encoder, counted, depth + 1)?;
                let (b, rb) = block(otherwise, encoder, counted, depth + 1)?;
                (cond.ite(&a, &b), cond.ite(&ra, &rb))
            }
            KStmt::For { start, end, body, .. } => {
                // The body is encoded without its variable: a count that needs it is not encoded.
                // Told from the statements, not by z3's `simplify`, which an interrupted
                // context answers with no term at all.
                if returns_anywhere(body, depth + 1) {
                    return Err(Unbound::Builtin("return in a loop"));
                }
                let (per_iteration, _) = block(body, encoder, counted, depth + 1)?;
                let (start, end) = (encoder.int(start)?, encoder.int(end)?);
                let trips = end.gt(&start).ite(&Int::sub(&[end, start]), &zero);
                (Int::mul(&[trips, per_iteration]), Bool::from_bool(false))
            }
        };
        total = Int::add(&[total, returned.not().ite(&here, &zero)]);
        returned = Bool::or(&[returned, returns]);
    }
    Ok((total, returned))
}

/// Whether a `return` is among `stmts`, at any depth (past [`MAX_DEPTH`], taken as yes).
fn returns_anywhere(stmts: &[KStmt], depth: usize) -> bool {
    depth > MAX_DEPTH
        || stmts.iter().any(|stmt| match stmt {
            KStmt::Op(_) => false,
            KStmt::Return(_) => true,
            KStmt::If { then, otherwise, .. } => {
                returns_anywhere(then, depth + 1) || returns_anywhere(otherwise, depth + 1)
            }
            KStmt::For { body, .. } => returns_anywhere(body, depth + 1),
        })
}

fn one_call(op: &KOp, encoder: &mut Encoder, counted: Counted) -> Result<Int, Unbound> {
    let (one, zero) = (Int::from_i64(1), Int::from_i64(0));
    if let Counted::SyncAll = counted {
        return Ok(if matches!(op.kind, KOpKind::SyncAll { .. }) {
            one
        } else {
            zero
        });
    }
    let Some(flag) = counted.matches(op) else {
        return Ok(zero);
    };
    Ok(encoder.int(flag)?.eq(counted.flag()).ite(&one, &zero))
}
