use super::declare_reading_rule;

declare_reading_rule! {
    /// ## What it detects
    /// An argument, condition or loop bound that has no value on some rank or for some
    /// parameter value: it divides by zero or overflows a signed 64-bit integer
    /// (`2 / (1 - rank)` on rank 1), or it names a device or a count outside what the
    /// runtime accepts (a negative device, a handle array of more than 65,536). In a
    /// `.sync` program or a trace, the value is what was written; a source frontend never
    /// invents one: a C/C++ or Python value it cannot compute stays unknown, and what
    /// depends on it is a reader's limit (`--explain`), not this error.
    ///
    /// ## Why is this a bug
    /// The call, condition or loop cannot run as written on that rank: the process
    /// traps, or the runtime rejects the call. syncguard leaves the call (or, for a
    /// condition, the rest of that thread's or core's code) out of the analysis, so a
    /// finding that depends on it can be missed; the prover reports the smallest
    /// parameter values for which it happens.
    ///
    /// ## Example
    /// ```text
    /// ranks 2;
    /// HcommChannelNotifyRecordOnThread(t, ch, 2 / (1 - rank));   // no value on rank 1
    /// ```
    ///
    /// ## Fix
    /// Guard the expression so that it is defined for every rank and parameter value
    /// (`if rank != 1 { ... }`), or correct the value.
    pub struct UndefinedValue;
    code = "SG007",
    name = "undefined-value",
    severity = Error,
}
