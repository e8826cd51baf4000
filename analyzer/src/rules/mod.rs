//! The rule catalogue. Each rule lives in its own file under a family folder; its doc
//! comment is what `syncguard rules CODE` prints. All rules are registered in [`RULES`].

use crate::diagnostic::Severity;

mod cores;
pub(crate) mod deadlocks;
mod events;
pub(crate) mod frontend;
mod graphs;
mod groups;
mod lint;
mod memory;
pub(crate) mod notifies;
mod pipes;
mod superkernel;

/// A rule's identity, documentation and check.
#[derive(Debug)]
pub struct RuleInfo {
    /// Stable code, e.g. `SG103`.
    pub code: &'static str,
    /// Stable kebab-case name, e.g. `event-reset-before-all-waits`.
    pub name: &'static str,
    pub severity: Severity,
    /// The rule's doc comment: what it detects, why it is a bug, an example, the fix.
    pub docs: &'static str,
    pub check: Check,
    /// Reported unless a selection leaves it out; an opt-in rule only when selected
    /// (`--select`, `--extend-select`).
    pub default_on: bool,
}

/// When and on what a rule runs.
#[derive(Clone, Copy)]
pub enum Check {
    /// Reported while reading a file (syntax, names).
    Frontend,
    /// Once per Program: structural properties (GE task lists, SuperKernel code paths).
    Program(fn(&crate::analysis::ProgramContext, &mut Vec<crate::Diagnostic>)),
    /// Once per concrete execution: properties of the happens-before graph.
    Execution(fn(&crate::analysis::Analysis, &mut Vec<crate::Diagnostic>)),
    /// Reported by the z3 prover (`smt`).
    Solver,
    /// Reported by the analysis driver about a run it could not analyze.
    Driver,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Check::Frontend => "Frontend",
            Check::Program(_) => "Program",
            Check::Execution(_) => "Execution",
            Check::Solver => "Solver",
            Check::Driver => "Driver",
        })
    }
}

impl crate::diagnostic::Rule for RuleInfo {
    fn code(&self) -> &'static str {
        self.code
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn severity(&self) -> Severity {
        self.severity
    }
}

impl RuleInfo {
    /// A rule the frontends report while reading (`syncguard_model::reading_rules`).
    pub const fn reading(rule: &syncguard_model::reading_rules::RuleDoc) -> RuleInfo {
        RuleInfo {
            code: rule.code,
            name: rule.name,
            severity: rule.severity,
            docs: rule.docs,
            check: Check::Frontend,
            default_on: true,
        }
    }

    /// [`RuleInfo::reading`], reported only when selected.
    pub const fn reading_opt_in(rule: &syncguard_model::reading_rules::RuleDoc) -> RuleInfo {
        RuleInfo {
            default_on: false,
            ..RuleInfo::reading(rule)
        }
    }

    /// The documentation with the single leading space of each `///` line removed.
    pub fn documentation(&self) -> String {
        self.docs
            .lines()
            .map(|line| line.strip_prefix(' ').unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Declares a rule: a unit struct carrying its doc comment as `INFO.docs`.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident;
        code = $code:literal,
        name = $kebab:literal,
        severity = $severity:ident,
        check = $check:expr $(,)?
    ) => {
        $(#[doc = $doc])*
        $vis struct $name;
        impl $name {
            pub const INFO: $crate::rules::RuleInfo = $crate::rules::RuleInfo {
                code: $code,
                name: $kebab,
                severity: $crate::diagnostic::Severity::$severity,
                docs: concat!($($doc, "\n"),*),
                check: $check,
                default_on: true,
            };
        }
    };
}
pub(crate) use declare_rule;

/// SG101 is also reported while names are resolved (a `.sync` event used above its `let`).
pub(crate) use events::use_before_create as event_use_before_create;
pub use frontend::solver_unknown::SolverUnknown;
pub use frontend::too_large_to_analyze::TooLargeToAnalyze;
pub use frontend::unused_suppression::UnusedSuppression;
pub(crate) use memory::handle_index_out_of_range;
pub use syncguard_model::reading_rules::{
    SyntaxErrorRule, TraceFormatError, UncheckedCreate, UncheckedReturn, UndefinedValue, UnknownName,
};

/// Every rule that exists, in code order.
pub static RULES: &[&RuleInfo] = &[
    // SG0xx: reading the input
    &RuleInfo::reading(&SyntaxErrorRule::INFO),
    &RuleInfo::reading(&TraceFormatError::INFO),
    &RuleInfo::reading(&UnknownName::INFO),
    &SolverUnknown::INFO,
    &UnusedSuppression::INFO,
    &TooLargeToAnalyze::INFO,
    &RuleInfo::reading(&UndefinedValue::INFO),
    // SG1xx: events
    &events::use_before_create::UseBeforeCreate::INFO,
    &events::missing_reset::MissingReset::INFO,
    &events::reset_before_all_waits::ResetBeforeAllWaits::INFO,
    &events::wait_never_recorded::WaitNeverRecorded::INFO,
    &events::record_overwritten::RecordOverwritten::INFO,
    &events::use_after_destroy::UseAfterDestroy::INFO,
    &events::leak::EventLeak::INFO,
    &events::reset_unsupported::ResetUnsupported::INFO,
    &events::wait_on_recording_stream::WaitOnRecordingStream::INFO,
    &events::limit_exceeded::LimitExceeded::INFO,
    &events::elapsed_time_misuse::ElapsedTimeMisuse::INFO,
    // SG2xx: GE group tasks
    &groups::record_without_wait::GroupRecordWithoutWait::INFO,
    &groups::wait_without_record::GroupWaitWithoutRecord::INFO,
    &groups::name_not_op_attr::GroupNameNotOpAttr::INFO,
    &groups::record_wait_same_stream::GroupRecordWaitSameStream::INFO,
    // SG3xx: HCCL notifies and transfers, memory-value waits
    &notifies::notify_unbalanced::NotifyUnbalanced::INFO,
    &notifies::notify_index_out_of_range::NotifyIndexOutOfRange::INFO,
    &notifies::notify_lost_signal::NotifyLostSignal::INFO,
    &notifies::remote_write_before_ready::RemoteWriteBeforeReady::INFO,
    &notifies::remote_read_before_write_done::RemoteReadBeforeWriteDone::INFO,
    &notifies::write_exceeds_buffer::WriteExceedsBuffer::INFO,
    &notifies::batch_never_submitted::BatchNeverSubmitted::INFO,
    &notifies::value_wait_already_satisfied::ValueWaitAlreadySatisfied::INFO,
    &notifies::value_wait_on_unset_memory::ValueWaitOnUnsetMemory::INFO,
    // SG4xx: SuperKernel early start
    &superkernel::next_task_start_not_on_all_paths::NextTaskStartNotOnAllPaths::INFO,
    &superkernel::next_task_start_repeated::NextTaskStartRepeated::INFO,
    &superkernel::next_task_start_before_last_transfer::NextTaskStartBeforeLastTransfer::INFO,
    &superkernel::next_task_start_no_effect::NextTaskStartNoEffect::INFO,
    &superkernel::invalid_pipe::NextTaskStartInvalidPipe::INFO,
    &superkernel::wait_pre_task_end_mismatch::WaitPreTaskEndMismatch::INFO,
    // SG5xx: hangs, and what a stream capture forbids
    &deadlocks::deadlock::Deadlock::INFO,
    &deadlocks::wait_without_signal::WaitWithoutSignal::INFO,
    &deadlocks::host_sync_hang::HostSyncHang::INFO,
    &graphs::capture_misuse::CaptureMisuseRule::INFO,
    &deadlocks::collectives_exceed_cores::CollectivesExceedCores::INFO,
    // SG6xx: memory
    &memory::data_race::DataRace::INFO,
    &memory::host_access_before_sync::HostAccessBeforeSync::INFO,
    &memory::use_after_free::UseAfterFree::INFO,
    &memory::release_while_pending::ReleaseWhilePending::INFO,
    &memory::handle_index_out_of_range::HandleIndexOutOfRange::INFO,
    // SG7xx: source lint
    &RuleInfo::reading(&UncheckedReturn::INFO),
    &lint::timeout_unit::TimeoutUnitSuspicious::INFO,
    &RuleInfo::reading_opt_in(&UncheckedCreate::INFO),
    // SG80x: inside one AI core, between its pipes
    &pipes::pipe_race::PipeRace::INFO,
    &pipes::missing_dequeue::MissingDeQue::INFO,
    &pipes::flag_never_waited::FlagNeverWaited::INFO,
    &pipes::wait_never_set::WaitNeverSet::INFO,
    &pipes::flag_direction_mismatch::FlagDirectionMismatch::INFO,
    &pipes::double_set::FlagSetWhilePending::INFO,
    &pipes::event_id_out_of_range::EventIdOutOfRange::INFO,
    &pipes::event_id_mixed::EventIdMixed::INFO,
    &pipes::event_id_not_released::EventIdNotReleased::INFO,
    &pipes::pipe_barrier_scalar::PipeBarrierScalar::INFO,
    &pipes::tensor_to_another_queue::TensorToAnotherQueue::INFO,
    &pipes::enqueued_never_dequeued::EnqueuedNeverDequeued::INFO,
    // SG85x: between the cores of a kernel
    &cores::cross_core_count_mismatch::CrossCoreCountMismatch::INFO,
    &cores::cross_core_counter_overflow::CrossCoreCounterOverflow::INFO,
    &cores::cross_core_flag_invalid::CrossCoreFlagInvalid::INFO,
    &cores::cross_core_without_scheduler::CrossCoreWithoutScheduler::INFO,
    &cores::sync_all_not_on_all_cores::SyncAllNotOnAllCores::INFO,
    &cores::sync_all_vector_only::SyncAllVectorOnly::INFO,
    &cores::sync_all_too_many_blocks::SyncAllTooManyBlocks::INFO,
    &cores::sync_all_workspace_too_small::SyncAllWorkspaceTooSmall::INFO,
    // SG9xx: PyTorch NCCL Flight Recorder dumps (`syncguard_flight_recorder`)
    &RuleInfo::reading(&syncguard_flight_recorder::rules::FlightRecorderUnreadable::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::CollectiveDesync::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::CollectiveSizeMismatch::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::CollectiveDtypeMismatch::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::CollectiveNotEntered::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::CollectiveStuck::INFO),
    &RuleInfo::reading(&syncguard_flight_recorder::rules::RankDumpMissing::INFO),
];

/// " (on rank 2)", " (on 3 ranks)", " (on every rank)" of a finding that `ranks` of the
/// program's `of` ranks have; nothing for a one-rank program.
/// "Insert a synchronize of the stream `agent` runs before `before`": the mechanical
/// fix where the host must wait for queued work; none for the default stream or an HCCL
/// thread, whose synchronize the code writes in its own way.
pub(crate) fn synchronize_before(
    exec: &crate::exec::Execution,
    agent: crate::exec::AgentId,
    before: crate::source::Span,
) -> Option<crate::diagnostic::Fix> {
    let crate::exec::AgentKind::Stream(inst) = exec.agent(agent).kind else {
        return None;
    };
    let stream = exec.instance(inst).obj;
    if stream == crate::model::Program::DEFAULT_STREAM || exec.instance(inst).element.is_some() {
        return None;
    }
    let api = events::spelled(exec.program, stream, "aclrtSynchronizeStream");
    let call = format!("{api}({})", exec.program.object(stream).shown());
    Some(crate::diagnostic::Fix {
        title: format!("Insert {call} before this"),
        edits: vec![crate::diagnostic::FixEdit::InsertCallBefore { before, call }],
    })
}

pub(crate) fn ranks_in_parentheses(ranks: &[u32], of: u32) -> String {
    match ranks {
        _ if of <= 1 => String::new(),
        _ if ranks.len() == of as usize => " (on every rank)".to_string(),
        [rank] => format!(" (on rank {rank})"),
        _ => format!(" (on {} ranks)", ranks.len()),
    }
}

/// Look a rule up by code (`SG003`) or name (`unknown-name`), case-insensitively.
/// `diagnostic` with each of `uses` (calls on other host threads that nothing orders
/// before its primary call) as a related label, once per place: `says` words the label
/// from the using thread's name.
pub(crate) fn with_unordered_uses(
    mut diagnostic: crate::diagnostic::Diagnostic,
    analysis: &crate::analysis::Analysis,
    uses: &[crate::exec::NodeId],
    says: impl Fn(&str) -> String,
) -> crate::diagnostic::Diagnostic {
    let mut seen = vec![diagnostic.primary.clone()];
    for &node in uses {
        let span = analysis.span(node);
        if !seen.contains(&span) {
            seen.push(span.clone());
            let thread = analysis.exec.agent_name(analysis.exec.node(node).host);
            diagnostic = diagnostic.with_related(span, says(&thread));
        }
    }
    diagnostic
}

pub fn find(key: &str) -> Option<&'static RuleInfo> {
    RULES
        .iter()
        .copied()
        .find(|rule| rule.code.eq_ignore_ascii_case(key) || rule.name.eq_ignore_ascii_case(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_sorted() {
        let codes: Vec<_> = RULES.iter().map(|r| r.code).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(codes, sorted);
        let mut names: Vec<_> = RULES.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
    }

    #[test]
    fn every_rule_documents_the_four_sections() {
        for rule in RULES {
            let docs = rule.documentation();
            for section in ["## What it detects", "## Why is this a bug", "## Example", "## Fix"] {
                assert!(docs.contains(section), "{} lacks `{section}`", rule.code);
            }
        }
    }
}
