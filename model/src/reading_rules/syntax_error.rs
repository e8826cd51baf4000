use super::declare_reading_rule;

declare_reading_rule! {
    /// ## What it detects
    /// A `.sync` file that does not parse, or a statement that does not match the
    /// signature of the API it calls: a missing brace, a stray token, an unterminated
    /// string, a bad number, bytes that are not UTF-8, a call with the wrong number of
    /// arguments, an argument of the wrong kind (an event where a stream is expected),
    /// or a call in a place where that API cannot be called (a GE task factory outside
    /// an `op`, `SetNextTaskStart` outside a `subkernel`). A value that has none on
    /// some rank (`10 / (rank - 1)` on rank 1) is SG007.
    ///
    /// ## Why is this a bug
    /// The file is not a program, so nothing in the broken statement can be verified.
    /// syncguard recovers at the next statement or block and still checks the rest, but
    /// a finding that depends on the broken statement can be missed.
    ///
    /// ## Example
    /// ```text
    /// aclrtRecordEvent(ev s1);      // expected `)` or `,`, found identifier `s1`
    /// aclrtStreamWaitEvent(s2);     // aclrtStreamWaitEvent takes 2 arguments (stream, event)
    /// ```
    ///
    /// ## Fix
    /// Correct the statement as the message says; `syncguard fmt` prints the canonical
    /// form of a file that parses, and `grammar/SYNC.md` lists every statement.
    pub struct SyntaxErrorRule;
    code = "SG001",
    name = "syntax-error",
    severity = Error,
}
