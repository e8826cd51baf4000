//! "Did you mean …?" suggestions by edit distance.

/// Names longer than this are no typo of anything: the distance, quadratic in length,
/// is not computed for them.
const MAX_NAME: usize = 256;

/// The candidate closest to `name`, if it is close enough to be a plausible typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    if len > MAX_NAME {
        return None;
    }
    let candidates: Vec<&str> = candidates.into_iter().filter(|c| c.len() <= 4 * MAX_NAME).collect();
    // A truncated name (`aclrtCreateEventEx` for `aclrtCreateEventExWithFlag`) is the likeliest slip.
    let lower = name.to_lowercase();
    let extension = candidates
        .iter()
        .filter(|c| len >= 3 && c.len() > name.len() && c.to_lowercase().starts_with(&lower))
        .min_by_key(|c| (c.len(), **c));
    if let Some(extension) = extension {
        return Some(extension);
    }
    // A suggestion must keep part of the name: `x` → `N` would be a guess, not a typo fix.
    let limit = (len / 3).max(1).min(len.saturating_sub(1));
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        // The distance is at least the difference in length: most candidates end here.
        .filter(|candidate| candidate.chars().count().abs_diff(len) <= limit)
        .map(|candidate| (distance(&lower, &candidate.to_lowercase()), candidate))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_typos_only() {
        let names = ["s1", "s2", "aclrtRecordEvent"];
        assert_eq!(closest("s3", names), Some("s1"));
        assert_eq!(closest("aclrtRecrodEvent", names), Some("aclrtRecordEvent"));
        assert_eq!(closest("completely_different", names), None);
        assert_eq!(closest("x", ["N"]), None);
        let engines = ["COMM_ENGINE_CPU", "COMM_ENGINE_AICPU_TS"];
        assert_eq!(closest("COMM_ENGINE_AICPU", engines), Some("COMM_ENGINE_AICPU_TS"));
    }

    #[test]
    fn long_names_are_not_compared() {
        let long = "group".repeat(10_000);
        let started = std::time::Instant::now();
        assert_eq!(closest(&long, [long.as_str(), "group"]), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn distance_is_levenshtein() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
