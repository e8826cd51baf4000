use super::declare_reading_rule;

declare_reading_rule! {
    /// ## What it detects
    /// A call-trace line syncguard cannot use: not JSON, not a JSON object, bytes that
    /// are not UTF-8, a `rank` or `thread` that is not a valid id, a call without
    /// `api`, a required argument missing or of the wrong type (a string where the
    /// prototype takes an integer, a flag name the API does not define), a handle of
    /// the wrong kind (a stream where an event is expected), a gen-task call outside
    /// a `ge.op`, or an unsupported trace version. An `api` syncguard does not know is
    /// reported once per name as a warning under this code, and its lines are skipped.
    ///
    /// ## Why is this a bug
    /// The line's call is left out of the model, so anything it synchronizes is
    /// missing: a dropped record makes its wait look like a hang, a dropped wait hides
    /// a race. The rest of the trace is still checked, but findings near a malformed
    /// line can be consequences of it.
    ///
    /// ## Example
    /// ```text
    /// {"rank": 0, "api": "aclrtRecordEvent", "args": {"event": "ev1"}}
    ///     // `aclrtRecordEvent` needs argument `stream` (aclrtRecordEvent(event, stream))
    /// {"rank": 0, "api": "aclrtRecordEvent", "args": {"event": "ev1", "stream": "s1"}
    ///     // not valid JSON: EOF while parsing an object
    /// ```
    ///
    /// ## Fix
    /// Fix the tracer that wrote the line: one JSON object per line, argument names as
    /// in the C prototype (docs/TRACE.md), every required argument
    /// present.
    pub struct TraceFormatError;
    code = "SG002",
    name = "trace-format-error",
    severity = Error,
}
