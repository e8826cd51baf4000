//! Which rules a `check` reports (`--select`, `--extend-select`, `--ignore`), as ruff
//! selects: a code (`SG107`) or a prefix (`SG1` is SG100–SG199, `SG` every rule).
//! Without `--select`, the rules on by default and those `--extend-select` names; an
//! opt-in rule (SG703) is reported only when a selection names it, by code or prefix.
//! The analysis is the same whatever is selected; unselected findings are not reported.

use syncguard_analyzer::Diagnostic;
use syncguard_analyzer::rules::RULES;

#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Reported rules; empty: the rules on by default.
    pub select: Vec<String>,
    /// Reported in addition to `select`.
    pub extend_select: Vec<String>,
    /// Not reported, whatever selects them.
    pub ignore: Vec<String>,
}

impl Selection {
    /// An error naming the first code or prefix that matches no rule.
    pub fn validate(&self) -> Result<(), String> {
        for pattern in self.select.iter().chain(&self.extend_select).chain(&self.ignore) {
            if !RULES.iter().any(|rule| matches(pattern, rule.code)) {
                return Err(format!(
                    "`{pattern}` matches no rule: give a code (`SG107`) or a prefix (`SG1`); `syncguard rules` lists them"
                ));
            }
        }
        Ok(())
    }

    pub fn reports(&self, code: &str) -> bool {
        let named = self
            .select
            .iter()
            .chain(&self.extend_select)
            .any(|pattern| matches(pattern, code));
        let selected = named || (self.select.is_empty() && on_by_default(code));
        selected && !self.ignore.iter().any(|pattern| matches(pattern, code))
    }

    /// Drop the findings of rules not reported.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|diagnostic| self.reports(diagnostic.code));
    }
}

/// Whether the rule `code` is reported when no selection names it. Codes no rule has
/// (none reach here) count as on.
fn on_by_default(code: &str) -> bool {
    RULES
        .iter()
        .find(|rule| rule.code == code)
        .is_none_or(|rule| rule.default_on)
}

/// `SG1` matches `SG107`; `SG107` only itself. Case-insensitive, as codes are typed.
/// Configuration files select by the same rule.
pub fn matches(pattern: &str, code: &str) -> bool {
    code.to_ascii_uppercase()
        .starts_with(&pattern.trim().to_ascii_uppercase())
        && !pattern.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(select: &[&str], extend: &[&str], ignore: &[&str]) -> Selection {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        Selection {
            select: owned(select),
            extend_select: owned(extend),
            ignore: owned(ignore),
        }
    }

    #[test]
    fn codes_and_prefixes_select_and_ignore() {
        let all = selection(&[], &[], &["SG107"]);
        assert!(all.reports("SG601") && !all.reports("SG107"));
        let events = selection(&["SG1"], &["SG601"], &["sg108"]);
        assert!(events.reports("SG107") && events.reports("SG601"));
        assert!(!events.reports("SG108") && !events.reports("SG501"));
        assert!(selection(&["SG99"], &[], &[]).validate().is_err());
        assert!(selection(&["SG1", "SG701"], &[], &["SG10"]).validate().is_ok());
    }

    #[test]
    fn opt_in_rules_are_reported_only_when_named() {
        assert!(!selection(&[], &[], &[]).reports("SG703"));
        assert!(selection(&[], &[], &[]).reports("SG701"));
        assert!(selection(&[], &["SG703"], &[]).reports("SG703"));
        assert!(selection(&["SG7"], &[], &[]).reports("SG703"));
        assert!(!selection(&["SG6"], &[], &[]).reports("SG703"));
        assert!(!selection(&[], &["SG703"], &["SG70"]).reports("SG703"));
    }
}
