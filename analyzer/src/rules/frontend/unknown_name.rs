use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A name that nothing declares: a stream, event, notify, channel, HCCL thread,
    /// buffer or communicator used before (or without) the `let` that creates it, a
    /// loop variable or parameter out of scope, a constant such as `ACL_EVENT_SYNK`
    /// that the API does not define, or a call to an API syncguard does not know.
    /// The message suggests the closest declared name.
    ///
    /// ## Why is this a bug
    /// In the real program the handle would be uninitialised or belong to another
    /// scope: the runtime returns an invalid-handle error, or worse, records on a
    /// stream nobody waits on. syncguard cannot know which object was meant, so every
    /// op that uses the name is left out of the analysis.
    ///
    /// ## Example
    /// ```text
    /// let s1 = aclrtCreateStream();
    /// aclrtRecordEvent(ev, s2);     // `s2` is not declared; did you mean `s1`?
    /// ```
    ///
    /// ## Fix
    /// Create the object first (`let s2 = aclrtCreateStream();`) or correct the name.
    pub struct UnknownName;
    code = "SG003",
    name = "unknown-name",
    severity = Error,
    check = crate::rules::Check::Frontend,
}
