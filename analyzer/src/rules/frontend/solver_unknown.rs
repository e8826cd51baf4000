use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A property the z3 prover set out to prove for every parameter value (every rank
    /// count `N` in its range, every TilingKey) or a schedule it set out to decide, for
    /// which z3 gave no answer within the time limit (`--smt-timeout`, 2 s by default)
    /// or in a theory it cannot decide (non-linear integer arithmetic). Also: host threads
    /// that share streams, events or notifies in more issue orders than the 1,024 the
    /// happens-before analysis checks per run; branches on query results in more
    /// combinations than the 64 runs checked per parameter assignment; and a violation
    /// z3 found only at values too large to run, whose search for smaller values ran out
    /// of time. Also memory-value waits (`aclrtValueWait`) too many for the program's
    /// size to match with their writes: they order nothing then. And, as a note: real
    /// kernel launches (`aclrtLaunchKernelWithConfig`, ...)
    /// that declare no `reads:` / `writes:`, whose memory no rule can check; and an
    /// IPC export (`aclrtNotifyGetExportKey`, `aclrtIpcGetEventHandle`,
    /// `aclrtIpcMemGetExportKey`) that no process of the run opens: what the process
    /// that does records, waits on or writes is not checked, and a notify's waits here
    /// are taken to be satisfied there. And, as a note: a kernel's tiling field that the
    /// kernel only compares with constants (`if (hasBias == 1)`): its launches take only
    /// the values from the smallest compared to the largest.
    ///
    /// ## Why is this a bug
    /// It is not a bug in the program: it is a hole in the verification, a limit of the
    /// tool. Nothing is proven about that property, so a finding that only appears at a
    /// rank count the concrete runs did not cover would go unnoticed. It is reported as
    /// information: always printed, naming the property, so that a green CI run never
    /// silently means "not checked", but never failing the run, `--deny warnings`
    /// included. The property is still checked on the concrete runs (the smallest
    /// parameter values).
    ///
    /// ## Example
    /// ```text
    /// ranks N in 2..=1024;
    /// for step in 0..N - 1 {
    ///     // an index that only non-linear arithmetic can bound
    ///     HcommChannelNotifyRecordOnThread(t, ch, (step * step * step + rank * rank) % 7919 % 4);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Raise the limit (`syncguard check --smt-timeout 10s`), or write the expression
    /// more simply (a table of indices, a linear formula), or narrow the parameter range.
    /// For issue orders: give each host thread its own streams and events, or order the
    /// threads' calls (an event one records and the other synchronizes on). For query
    /// outcomes: branch on fewer query results, or synchronize instead of querying. For
    /// kernel launches: declare what each kernel reads and writes on the call.
    pub struct SolverUnknown;
    code = "SG004",
    name = "solver-unknown",
    severity = Info,
    check = crate::rules::Check::Solver,
}
