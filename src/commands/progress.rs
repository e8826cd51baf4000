//! A progress bar on stderr for long `check` runs.
//!
//! Shown only on an interactive terminal, never in CI (`CI` is set by GitHub Actions,
//! GitLab, Jenkins and the like, some of which give jobs a pseudo-terminal), never with
//! `--quiet`, and only once a run has lasted `DELAY`: a quick run stays as quiet as a
//! pipe. It is cleared before the findings are printed.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before the bar appears.
const DELAY: Duration = Duration::from_millis(400);

pub struct Progress {
    /// `None` where no bar may ever be drawn.
    bar: Option<ProgressBar>,
    started: Instant,
}

impl Progress {
    /// A bar if stderr is a terminal outside CI and the run is not quiet.
    pub fn for_terminal(quiet: bool) -> Progress {
        let allowed = !quiet && std::io::stderr().is_terminal() && !in_ci();
        Progress::new(allowed)
    }

    /// A bar that draws on stderr when `allowed` (and stderr is a terminal: indicatif
    /// draws nothing otherwise).
    pub fn new(allowed: bool) -> Progress {
        let bar = allowed.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{spinner} checking [{bar:30}] {pos}/{len} {elapsed} {wide_msg}")
                    .expect("the template is valid")
                    .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
        }
    }

    /// Print on stderr without tearing the bar.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Remove the bar before the results are printed.
    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl syncguard_project::Progress for Progress {
    fn add_work(&self, count: usize) {
        if let Some(bar) = &self.bar {
            bar.inc_length(count as u64);
        }
    }

    fn start(&self, what: &str) {
        if let Some(bar) = &self.bar {
            if bar.is_hidden() && self.started.elapsed() >= DELAY {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_message(what.to_string());
        }
    }

    fn finish_one(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

/// Whether this runs in a CI job (`CI=true`, `CI=1`, ...; `CI=false` and `CI=0` are not).
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false" && value != "0")
}
