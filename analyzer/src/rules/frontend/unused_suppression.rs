use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// An inline suppression that suppresses nothing: `syncguard: ignore[SG107]` in a
    /// comment on a line where (and below which) no SG107 finding is reported,
    /// `syncguard: ignore-file[SG108]` in a file without an SG108 finding, or a
    /// suppression naming a code that is no rule.
    ///
    /// ## Why is this a bug
    /// A suppression outlives the finding it silenced: once the code is fixed or moved,
    /// it stays and would silently hide the next, different problem on that line. A
    /// misspelled code suppresses nothing while its reader believes the finding is
    /// accepted.
    ///
    /// ## Example
    /// ```text
    /// aclrtDestroyEvent(ev);  // syncguard: ignore[SG107]   (ev no longer leaks)
    /// ```
    ///
    /// ## Fix
    /// Remove the suppression (or the unused code from its list), or correct the code
    /// it names. Suppressions are written `// syncguard: ignore[SG107, SG108]` (`#` in
    /// Python) on the line of the finding or the line above it, and
    /// `syncguard: ignore-file[SG108]` anywhere in a file.
    pub struct UnusedSuppression;
    code = "SG005",
    name = "unused-suppression",
    severity = Warning,
    check = crate::rules::Check::Frontend,
}
