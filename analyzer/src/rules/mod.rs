//! The rule catalogue. Each rule lives in its own file under a family folder; its doc
//! comment is what `syncguard rules CODE` prints. All rules are registered in [`RULES`].

use crate::diagnostic::Severity;

mod frontend;

/// A rule's identity and documentation.
#[derive(Debug)]
pub struct RuleInfo {
    /// Stable code, e.g. `SG103`.
    pub code: &'static str,
    /// Stable kebab-case name, e.g. `event-reset-before-all-waits`.
    pub name: &'static str,
    pub severity: Severity,
    /// The rule's doc comment: what it detects, why it is a bug, an example, the fix.
    pub docs: &'static str,
}

impl RuleInfo {
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
        severity = $severity:ident $(,)?
    ) => {
        $(#[doc = $doc])*
        $vis struct $name;
        impl $name {
            pub const INFO: $crate::rules::RuleInfo = $crate::rules::RuleInfo {
                code: $code,
                name: $kebab,
                severity: $crate::diagnostic::Severity::$severity,
                docs: concat!($($doc, "\n"),*),
            };
        }
    };
}
pub(crate) use declare_rule;

pub use frontend::syntax_error::SyntaxErrorRule;
pub use frontend::unknown_name::UnknownName;

/// Every rule that exists, in code order.
pub static RULES: &[&RuleInfo] = &[&SyntaxErrorRule::INFO, &UnknownName::INFO];

/// Look a rule up by code (`SG003`) or name (`unknown-name`), case-insensitively.
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
