use super::declare_reading_rule;

declare_reading_rule! {
    /// ## What it detects
    /// In C/C++ or Python source, a call that creates a stream, event, notify or
    /// context, or allocates memory, whose return code is thrown away (as SG701 says
    /// for the calls that synchronize). Opt-in: `--extend-select SG703`, or
    /// `extend-select = ["SG703"]` in the configuration.
    ///
    /// ## Why is this a bug
    /// A failed create leaves the handle uninitialised, and every later call on it
    /// fails too. Unlike a failed record or wait, that failure does not go unnoticed
    /// where the later calls are checked: the first checked use reports it, so most
    /// code that checks its synchronizing calls (SG701, on by default) does not need
    /// this rule. It is for code bases that want every return code checked.
    ///
    /// ## Example
    /// ```text
    /// aclrtCreateStream(&stream);                 // returns aclError, ignored
    /// ACL_CHECK(aclrtRecordEvent(ready, stream));  // fails here if the create did
    /// ```
    ///
    /// ## Fix
    /// Check it as the rest of the code does (`ACL_CHECK(aclrtCreateStream(&stream))`),
    /// or write `(void)` before the call where ignoring a failure is intended.
    pub struct UncheckedCreate;
    code = "SG703",
    name = "unchecked-create",
    severity = Warning,
}
