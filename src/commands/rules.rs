//! `syncguard rules [CODE]`: the catalogue and each rule's documentation.

use syncguard_analyzer::rules::{self, RULES};

use super::output;
use crate::Outcome;

pub fn run(code: Option<&str>) -> Outcome {
    match code {
        None => {
            for rule in RULES {
                let opt_in = if rule.default_on { "" } else { "  (opt-in)" };
                output::println(&format!(
                    "{}  {:<8} {}{opt_in}",
                    rule.code,
                    rule.severity.as_str(),
                    rule.name
                ));
            }
            Outcome::Clean
        }
        Some(code) => match rules::find(code) {
            Some(rule) => {
                let opt_in = if rule.default_on { "" } else { ", opt-in" };
                output::println(&format!(
                    "# {} {} ({}{opt_in})\n",
                    rule.code,
                    rule.name,
                    rule.severity.as_str()
                ));
                output::println(rule.documentation().trim_end());
                Outcome::Clean
            }
            None => {
                eprintln!("syncguard: no rule `{code}`; `syncguard rules` lists them");
                Outcome::Failure
            }
        },
    }
}
