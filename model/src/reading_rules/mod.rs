//! The rules a frontend reports while reading its input: the input is not a program
//! (syntax, trace format), names something that does not exist, has a value that is
//! not one, or (source frontends) throws away what a call returns. Each file is one
//! rule; its doc comment is its documentation. The analyzer's registry lists them with
//! the rest (they have no check of their own: the frontends report them).

pub mod syntax_error;
pub mod trace_format_error;
pub mod unchecked_create;
pub mod unchecked_return;
pub mod undefined_value;
pub mod unknown_name;

pub use syntax_error::SyntaxErrorRule;
pub use trace_format_error::TraceFormatError;
pub use unchecked_create::UncheckedCreate;
pub use unchecked_return::{UncheckedReturn, failure_changes_synchronization, unchecked_return};
pub use undefined_value::UndefinedValue;
pub use unknown_name::{UnknownName, unknown_api};

/// A rule's identity and documentation, without a check.
#[derive(Debug)]
pub struct RuleDoc {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: crate::diagnostic::Severity,
    /// The doc comment: what it detects, why it is a bug, an example, the fix.
    pub docs: &'static str,
}

impl crate::diagnostic::Rule for RuleDoc {
    fn code(&self) -> &'static str {
        self.code
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn severity(&self) -> crate::diagnostic::Severity {
        self.severity
    }
}

/// Declares a reading rule: a unit struct carrying its doc comment as `INFO.docs`
/// (also the rules of frontends in crates of their own, such as the dump reader's).
#[macro_export]
macro_rules! declare_reading_rule {
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
            pub const INFO: $crate::reading_rules::RuleDoc = $crate::reading_rules::RuleDoc {
                code: $code,
                name: $kebab,
                severity: $crate::diagnostic::Severity::$severity,
                docs: concat!($($doc, "\n"),*),
            };
        }
    };
}
use declare_reading_rule;
