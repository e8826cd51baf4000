//! One line per finding: `concise` for editors' error formats and problem matchers,
//! `github` as GitHub Actions workflow commands (annotations on the pull request).

use super::json::position;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Sources;

/// `path:line:col: SG103 [error] message`
pub fn render_concise(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let (file, line, column) = position(&diagnostic.primary, sources, false);
            format!(
                "{file}:{line}:{column}: {} [{}] {}\n",
                diagnostic.code,
                diagnostic.severity.as_str(),
                single_line(&diagnostic.message)
            )
        })
        .collect()
}

/// `::error file=op.cpp,line=3,col=5,endLine=3,endColumn=20,title=SG103 name::message`
pub fn render_github(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let (file, line, column) = position(&diagnostic.primary, sources, false);
            let (_, end_line, end_column) = position(&diagnostic.primary, sources, true);
            let command = match diagnostic.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let mut message = diagnostic.message.clone();
            if let Some(help) = &diagnostic.help {
                message.push_str("\nHelp: ");
                message.push_str(help);
            }
            format!(
                "::{command} file={},line={line},col={column},endLine={end_line},endColumn={end_column},title={}::{}\n",
                escape_property(&file),
                escape_property(&format!("{} {}", diagnostic.code, diagnostic.name)),
                escape_data(&message)
            )
        })
        .collect()
}

fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A workflow command's message: `%`, CR and LF encoded (as `@actions/core` does).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_what_would_end_them() {
        assert_eq!(escape_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(escape_property("C:\\a,b.cpp"), "C%3A\\a%2Cb.cpp");
    }
}
