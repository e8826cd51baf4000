//! Which rules a `check` reports (`--select`, `--extend-select`, `--ignore`), as ruff
//! selects: a code (`SG107`) or a prefix (`SG1` is SG100–SG199, `SG` every rule). The
//! analysis is the same whatever is selected; unselected findings are not reported.

use syncguard_analyzer::Diagnostic;
use syncguard_analyzer::rules::RULES;

#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Reported rules; empty: every rule.
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
        // No `select`: every rule, so `extend_select` adds nothing.
        let selected = self.select.is_empty()
            || self
                .select
                .iter()
                .chain(&self.extend_select)
                .any(|pattern| matches(pattern, code));
        selected && !self.ignore.iter().any(|pattern| matches(pattern, code))
    }

    /// Drop the findings of rules not reported.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|diagnostic| self.reports(diagnostic.code));
    }
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
        assert!(selection(&["SG9"], &[], &[]).validate().is_err());
        assert!(selection(&["SG1", "SG701"], &[], &["SG10"]).validate().is_ok());
    }
}
