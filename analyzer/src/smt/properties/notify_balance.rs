//! `notify-balance`: for every parameter value, every pair of ranks and every notify
//! index, the records into a flag equal the waits on it. A flag is notify `i` of rank
//! `dst`'s channel to rank `src` (HCCL channels), notify `i` of an HCCL thread, or an
//! ACL notify. Each call's execution count is a z3 term: the product of its loops' trip
//! counts under its path condition (a loop whose variable the flag depends on is
//! expanded when its bounds are constant).

use z3::Model;
use z3::ast::{Bool, Int};

use super::{Counterexample, Outcome, Side, Space, Via, notify_use, unsupported};
use crate::diagnostic::Diagnostic;
use crate::model::{Expr, ObjId, ObjectKind, Program};
use crate::smt::encode::Scope;
use crate::smt::paths::{CountError, Loop, PathOp, Unsupported, count};
use crate::smt::{Answer, SmtOptions, Unproved, value_of};
use crate::source::Span;

pub(super) const PROPERTY: &str = "notify-balance";

/// One family of flags: every channel flag (they span ranks), or the flags of one HCCL
/// thread or ACL notify (on one rank; one created in a loop is a new object in every
/// iteration, so its flags are keyed by the iteration too: `Flag::instance`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Channels,
    Local(ObjId),
}

impl Family {
    /// `Local` names the array of an element (`workers[i]`): its flags are keyed by the
    /// element index too (`Flag::element`).
    fn of(program: &Program, via: Via) -> Family {
        match via {
            Via::Channel(_) => Family::Channels,
            Via::Thread(obj) | Via::Acl(obj) => Family::Local(program.base(obj)),
        }
    }
}

/// ACL notifies shared with another process by IPC key (exported, or opened by key):
/// their balance is between processes, which the concrete runs match by key (and leave
/// to the other process where it is outside the run).
fn shared_by_key(program: &Program) -> std::collections::HashSet<Via> {
    let mut shared = std::collections::HashSet::new();
    for thread in &program.threads {
        crate::model::for_each_op(&thread.body, &mut |op| {
            if let crate::model::OpKind::IpcExport { obj, .. } = &op.kind {
                shared.insert(Via::Acl(*obj));
            }
        });
    }
    for (index, object) in program.objects.iter().enumerate() {
        if object.ipc_key.is_some() {
            shared.insert(Via::Acl(ObjId(index as u32)));
        }
    }
    shared
}

pub(super) fn prove(space: &Space, ops: &[PathOp], options: &SmtOptions, outcome: &mut Outcome) {
    let uses: Vec<(&PathOp, super::NotifyUse)> = ops
        .iter()
        .filter_map(|path| notify_use(path.op).map(|used| (path, used)))
        .collect();
    if uses.is_empty() {
        return;
    }
    let mut families = vec![Family::Channels];
    for (_, used) in &uses {
        let family = Family::of(space.program, used.via);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    let shared = shared_by_key(space.program);
    let mut because = Vec::new();
    for &family in &families {
        let members: Vec<Member> = uses
            .iter()
            .filter(|(_, used)| Family::of(space.program, used.via) == family)
            .map(|(path, used)| (*path, used))
            .collect();
        if members.is_empty() {
            continue;
        }
        // A flag of an object from before may start set: balance is not a property of
        // the code shown (the concrete runs still match its waits).
        let existed_before = |via: Via| {
            let (Via::Channel(obj) | Via::Thread(obj) | Via::Acl(obj)) = via;
            space.program.object(obj).existed_before()
        };
        if members
            .iter()
            .any(|(_, used)| existed_before(used.via) || shared.contains(&used.via))
        {
            continue;
        }
        match check_family(space, family, ops, &members, options) {
            Ok(Answer::Holds(core)) => {
                for id in core {
                    if let Some((path, _)) = members.get(id) {
                        because.push((
                            path.op.span.clone(),
                            format!("how often {} runs and what it targets", path.op.api),
                        ));
                    }
                }
            }
            Ok(Answer::Fails(found)) => {
                outcome.counterexamples.push(found);
                return;
            }
            Ok(Answer::Unknown(reason)) => {
                space.unknown(outcome, PROPERTY, members[0].0.op.span.clone(), &reason);
                return;
            }
            Err(unsupported) => {
                outcome
                    .unproved
                    .push(Unproved::new(PROPERTY, unsupported.reason, unsupported.span));
                return;
            }
        }
    }
    because.sort_by_key(|(span, why)| (span.file.0, span.range.start, why.clone()));
    because.dedup();
    space.proved(outcome, PROPERTY, because);
}

/// A call into a flag family, and how it uses the flag.
type Member<'a, 'p> = (&'a PathOp<'p>, &'a super::NotifyUse<'p>);

/// The flag's endpoints: the recording and the waiting rank, and the index; for an
/// object created in loops, the values of those loops' variables at its creation.
struct Flag {
    src: Int,
    dst: Int,
    index: Int,
    instance: Vec<(Expr, Int)>,
    /// The handle of an array family (`workers[i]`).
    element: Option<Int>,
}

/// The loops around the one creation of a family's object (none for channels).
fn creation_loops<'a, 'p>(family: Family, ops: &'a [PathOp<'p>]) -> Result<&'a [Loop<'p>], Unsupported> {
    let Family::Local(obj) = family else {
        return Ok(&[]);
    };
    let mut created = ops
        .iter()
        .filter(|path| matches!(path.op.kind, crate::model::OpKind::Create(o) if o == obj));
    match (created.next(), created.next()) {
        (Some(path), None) => Ok(&path.loops),
        (Some(_), Some(path)) => Err(Unsupported {
            reason: "a notify object created by more than one call".into(),
            span: path.op.span.clone(),
        }),
        (None, _) => Ok(&[]),
    }
}

/// Whether `path` runs inside the loops that created the object, so that it uses the
/// instance of its own iteration; a use after the loop is not encoded.
fn inside(path: &PathOp, loops: &[Loop]) -> Result<(), Unsupported> {
    let same = path.loops.len() >= loops.len() && path.loops.iter().zip(loops).all(|(a, b)| a.var == b.var);
    if same {
        return Ok(());
    }
    Err(Unsupported {
        reason: format!(
            "{} uses a notify object created in a loop outside that loop",
            path.op.api
        ),
        span: path.op.span.clone(),
    })
}

fn check_family(
    space: &Space,
    family: Family,
    ops: &[PathOp],
    members: &[Member],
    options: &SmtOptions,
) -> Result<Answer<Counterexample>, Unsupported> {
    // A channel flag's ranks range over every integer: a channel to a rank outside
    // `0..N` is a flag whose other end does not exist, so nothing balances its side.
    // Only ranks that exist run calls.
    let (src, src_facts) = space.rank("src");
    let mut query = space.query(options);
    let dst = if family == Family::Channels {
        Int::fresh_const("dst")
    } else {
        query.assert(&Bool::and(&src_facts));
        src.clone()
    };
    let loops = creation_loops(family, ops)?;
    let flag = Flag {
        src,
        dst,
        index: Int::fresh_const("index"),
        instance: loops
            .iter()
            .map(|lp| (Expr::Var(lp.var), Int::fresh_const("iteration")))
            .collect(),
        element: match family {
            Family::Local(obj) if space.program.object(obj).array.is_some() => Some(Int::fresh_const("element")),
            _ => None,
        },
    };
    // Model values must be the concrete runs' i64s.
    for value in [&flag.dst, &flag.index] {
        query.assert(&Bool::and(&[value.ge(i64::MIN), value.le(i64::MAX)]));
    }
    let mut counts = Vec::new();
    for (id, &(path, used)) in members.iter().enumerate() {
        inside(path, loops)?;
        let runs = op_count(space, family, &flag, path, used).map_err(|e| unsupported(space.program, path, e))?;
        let me = match used.side {
            Side::Record => &flag.src,
            Side::Wait => &flag.dst,
        };
        let exists = Bool::and(&[me.ge(0), me.lt(&space.ranks)]);
        let count = Int::fresh_const("count");
        query.assert_tracked(&count.eq(exists.ite(&runs, &Int::from_i64(0))), id);
        counts.push(count);
    }
    let sum = |side: Side| {
        let mut terms = vec![Int::from_i64(0)];
        terms.extend(
            members
                .iter()
                .zip(&counts)
                .filter(|((_, used), _)| used.side == side)
                .map(|(_, c)| c.clone()),
        );
        Int::add(&terms)
    };
    query.assert(&sum(Side::Record).ne(sum(Side::Wait)));
    let mut objectives = space.objectives();
    objectives.push((flag.dst.clone(), 0));
    objectives.push((flag.src.clone(), 0));
    objectives.push((flag.index.clone(), i64::from(i32::MIN)));
    objectives.extend(flag.instance.iter().map(|(_, i)| (i.clone(), i64::from(i32::MIN))));
    objectives.extend(flag.element.iter().map(|e| (e.clone(), 0)));
    Ok(match query.solve(&objectives) {
        Answer::Holds(core) => Answer::Holds(core),
        Answer::Unknown(reason) => Answer::Unknown(reason),
        Answer::Fails(model) => Answer::Fails(Counterexample {
            smallest: query.smallest(),
            ..counterexample(space, family, &flag, members, &counts, &model)
        }),
    })
}

/// How many times `path` runs into `flag`: as a record, on rank `src` towards `dst`; as a
/// wait, on rank `dst` from `src`.
fn op_count(
    space: &Space,
    family: Family,
    flag: &Flag,
    path: &PathOp,
    used: &super::NotifyUse,
) -> Result<Int, CountError> {
    let (me, peer) = match used.side {
        Side::Record => (&flag.src, &flag.dst),
        Side::Wait => (&flag.dst, &flag.src),
    };
    let mut scope: Scope = space.scope.clone();
    scope.rank = Some(me.clone());
    let program = space.program;
    let remote: Option<Expr> = match used.via {
        Via::Channel(channel) if family == Family::Channels => match program.kind_of(channel) {
            ObjectKind::Channel(info) => info.remote_rank.as_ref().map(|r| program.attribute_of(channel, r)),
            _ => None,
        },
        _ => None,
    };
    let element: Option<&Expr> = match (used.via, &flag.element) {
        (Via::Thread(obj) | Via::Acl(obj), Some(_)) => match &program.object(obj).kind {
            ObjectKind::Element { index, .. } => Some(index),
            _ => None,
        },
        _ => None,
    };
    let mut pins = vec![(used.index, flag.index.clone())];
    pins.extend(remote.as_ref().map(|remote| (remote, peer.clone())));
    pins.extend(element.zip(flag.element.clone()));
    pins.extend(flag.instance.iter().map(|(var, value)| (var, value.clone())));
    let runs = count(path, &scope, &pins)?;
    Ok(accepted_index(space, used.via, &scope, &flag.index)?.ite(&runs, &Int::from_i64(0)))
}

/// Whether the runtime accepts notify `index` of `via` on the rank `scope` names: a call
/// with an index outside the object's notifies is rejected and signals nothing, as in
/// the concrete runs (SG302 reports it). A count with no value rejects nothing there.
fn accepted_index(space: &Space, via: Via, scope: &Scope, index: &Int) -> Result<Bool, CountError> {
    let Some((_, limit, _)) = super::notify_index::notify_count(space, via) else {
        return Ok(Bool::from_bool(true));
    };
    let mut encoder = crate::smt::encode::Encoder::new(scope);
    let limit = encoder.int(&limit)?;
    let in_range = Bool::and(&[index.ge(0), index.lt(&limit)]);
    Ok(Bool::or(&[encoder.definedness().not(), in_range]))
}

fn counterexample(
    space: &Space,
    family: Family,
    flag: &Flag,
    members: &[Member],
    counts: &[Int],
    model: &Model,
) -> Counterexample {
    let (params, assignment) = space.assignment(model);
    let (src, dst, index) = (
        value_of(model, &flag.src),
        value_of(model, &flag.dst),
        value_of(model, &flag.index),
    );
    let mut recorded = 0;
    let mut waited = 0;
    let mut involved: Vec<(Span, String, Side, i64)> = Vec::new();
    for (&(path, used), count) in members.iter().zip(counts) {
        let n = value_of(model, count);
        if n == 0 {
            continue;
        }
        match used.side {
            Side::Record => recorded += n,
            Side::Wait => waited += n,
        }
        involved.push((path.op.span.clone(), path.op.api.to_string(), used.side, n));
    }
    let what = match family {
        Family::Channels => format!("notify {index} of rank {dst}'s channel to rank {src}"),
        Family::Local(obj) => {
            let object = space.program.object(obj);
            let mut on_rank = if space.program.params.is_empty() {
                String::new()
            } else {
                format!(" on rank {src}")
            };
            for (var, value) in &flag.instance {
                if let Expr::Var(id) = var {
                    let name = &space.program.vars[id.index()].name;
                    on_rank.push_str(&format!(" created with {name} = {}", value_of(model, value)));
                }
            }
            let name = match &flag.element {
                Some(element) => format!("{}[{}]", object.shown(), value_of(model, element)),
                None => object.shown().to_string(),
            };
            match object.kind {
                ObjectKind::Notify => format!("notify {name}{on_rank}"),
                _ => format!("notify {index} of {} {name}{on_rank}", object.kind.noun()),
            }
        }
    };
    let times = |n: i64| {
        if n == 1 {
            "once".to_string()
        } else {
            format!("{n} times")
        }
    };
    let consequence = if waited > recorded {
        "a wait without its record blocks until the notify-wait timeout"
    } else {
        "a record nobody waits for leaves the flag set, and a later wait passes before its real signal"
    };
    let message = format!(
        "{what} is recorded {} but waited on {}: {consequence}",
        times(recorded),
        times(waited)
    );
    let primary = involved
        .iter()
        .find(|(.., side, _)| (*side == Side::Wait) == (waited > recorded))
        .or(involved.first())
        .map(|(span, ..)| span.clone())
        .unwrap_or_else(|| space.span());
    let rule = crate::rules::find("SG301").expect("SG301 is in the catalogue");
    let mut diagnostic = Diagnostic::new(rule, primary, message)
        .with_label(format!("unbalanced with {assignment}"))
        .with_note(format!(
            "smallest counterexample (z3): {assignment}, {what}: {} record(s), {} wait(s)",
            recorded, waited
        ))
        .with_help("give every wait exactly one record on the other side, on every path and for every rank count");
    for (span, api, side, n) in &involved {
        if *span == diagnostic.primary {
            continue;
        }
        let verb = if *side == Side::Record {
            "records it"
        } else {
            "waits on it"
        };
        diagnostic = diagnostic.with_related(span.clone(), format!("{api} {verb} {} with {assignment}", times(*n)));
    }
    Counterexample {
        property: PROPERTY,
        params,
        diagnostic,
        smallest: true,
    }
}
