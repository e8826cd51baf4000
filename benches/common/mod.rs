//! What both lint benchmarks share: deterministic randomness for their generated
//! trees, and running and timing the commands they compare.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// splitmix64: no dependency, the same tree for a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

pub fn time_command(command: &mut Command) -> (Duration, std::process::Output) {
    let start = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {command:?}: {err}"));
    (start.elapsed(), output)
}

/// `syncguard check --format json ARGS PATH`, timed, and its JSON.
pub fn syncguard_json(binary: &Path, args: &[&str], path: &Path) -> (Duration, serde_json::Value) {
    let (elapsed, output) = time_command(
        Command::new(binary)
            .arg("check")
            .arg("--format")
            .arg("json")
            .args(args)
            .arg(path),
    );
    // 0: clean, 1: findings; anything else is a failure.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "syncguard check failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("syncguard prints JSON");
    (elapsed, json)
}
