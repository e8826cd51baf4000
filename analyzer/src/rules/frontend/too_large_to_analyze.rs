use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A program, or a parameter assignment of it, or a call trace, that is beyond what
    /// the happens-before analysis can hold: a `.sync` program that unrolls to more than
    /// 20,000,000 calls or walks more than 80,000,000 statements and loop iterations (a
    /// loop is refused before it runs when its iterations times the calls each issues
    /// are past that), a SuperKernel whose cores walk too many steps, more streams,
    /// threads and ranks than that, or an execution whose happens-before clocks need
    /// more than 1.5 GiB. The message gives the estimate that was refused and where.
    ///
    /// ## Why is this a bug
    /// It is not a bug in the program: it is a hole in the verification. Nothing about
    /// that program (or that assignment) was checked, so it is an error: a run that
    /// passes CI must mean "verified", never "too big to look at".
    ///
    /// ## Example
    /// ```text
    /// let s = aclrtCreateStream();
    /// for step in 0..100000000 {
    ///     kernel(s, "tile");
    /// }
    /// ```
    ///
    /// ## Fix
    /// Check a smaller configuration that exercises the same synchronization: fewer
    /// loop iterations (two or three show a missing reset or a lost signal), fewer
    /// ranks (the parametric prover covers every rank count in the declared range), or
    /// a shorter trace (a few steps of the training loop rather than the whole run).
    ///
    /// Method: estimates before expanding (loop trip counts, ranks, calls), and the size
    /// of the clocks while they are computed.
    pub struct TooLargeToAnalyze;
    code = "SG006",
    name = "too-large-to-analyze",
    severity = Error,
    check = crate::rules::Check::Driver,
}
