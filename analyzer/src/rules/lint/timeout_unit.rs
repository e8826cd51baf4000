use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::model::{Expr, OpKind, TimeUnit, Timeout, for_each_op};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A constant timeout that reads as the wrong unit for its API: a value of a day or
    /// more where the API counts seconds (`HcommChannelNotifyWaitOnThread`,
    /// `aclrtWaitAndResetNotify`, `aclrtStreamWaitEventWithTimeout`,
    /// `aclrtSetOpWaitTimeout`: `1836000` is 1,836 seconds written in milliseconds), or a
    /// whole number of minutes from one minute to two hours where the API counts
    /// milliseconds (`aclrtSynchronizeStreamWithTimeout(s, 1800)` is 1.8 s, not half an
    /// hour). Each API's unit is in the catalogue (SYNC.md names it per call).
    ///
    /// ## Why is this a bug
    /// A timeout in the wrong unit turns a hang into a wait of three weeks, so CI and
    /// the cluster never see the error the timeout was written to raise; or it turns a
    /// generous deadline into a spurious failure of 1.8 s under load. Both appear only
    /// at run time, on the slow path, far from the constant.
    ///
    /// ## Example
    /// ```text
    /// HcommChannelNotifyWaitOnThread(t, ch, 0, 1836000);   // seconds: 21 days
    /// ```
    ///
    /// ## Fix
    /// Write the value in the API's unit (`1836` for HCCL's default), or name the unit
    /// in a constant (`constexpr uint32_t kNotifyWaitSeconds = 1836;`).
    pub struct TimeoutUnitSuspicious;
    code = "SG702",
    name = "timeout-unit-suspicious",
    severity = Warning,
    check = crate::rules::Check::Program(check),
}

/// A day: no wait on a device is meant to last longer.
const DAY_SECONDS: i64 = 24 * 60 * 60;

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for thread in &context.program.threads {
        for_each_op(&thread.body, &mut |op| {
            let Some(timeout) = timeout_of(&op.kind) else { return };
            let Expr::Int(value) = timeout.value else { return };
            if let Some((reading, meant, corrected)) = suspicion(timeout.unit, value) {
                out.push(
                    Diagnostic::new(
                        &TimeoutUnitSuspicious::INFO,
                        timeout.span.clone(),
                        format!(
                            "{} takes its timeout in {}: {value} is {reading}",
                            op.api,
                            unit_name(timeout.unit)
                        ),
                    )
                    .with_label(format!("{value} {}", unit_name(timeout.unit)))
                    .with_related(op.span.clone(), format!("the wait of {}", op.api))
                    .with_help(format!(
                        "if {meant} was meant, write {corrected} (the API counts {})",
                        unit_name(timeout.unit)
                    )),
                );
            }
        });
    }
}

/// What `value` amounts to in `unit`, what was probably meant, and the value that says
/// it; `None` when it reads as a plausible timeout.
fn suspicion(unit: TimeUnit, value: i64) -> Option<(String, String, i64)> {
    match unit {
        TimeUnit::Seconds if value >= DAY_SECONDS => Some((
            format!("{:.1} days", value as f64 / DAY_SECONDS as f64),
            format!("{} s ({value} ms)", value / 1000),
            value / 1000,
        )),
        TimeUnit::Milliseconds if (60..=7200).contains(&value) && value % 60 == 0 => Some((
            format!("{:.2} s", value as f64 / 1000.0),
            format!("{} minutes ({value} s)", value / 60),
            value * 1000,
        )),
        _ => None,
    }
}

fn unit_name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Seconds => "seconds",
        TimeUnit::Milliseconds => "milliseconds",
    }
}

fn timeout_of(kind: &OpKind) -> Option<&Timeout> {
    match kind {
        OpKind::EventWait { timeout, .. }
        | OpKind::EventSynchronize { timeout, .. }
        | OpKind::StreamSynchronize { timeout, .. }
        | OpKind::NotifyWait { timeout, .. }
        | OpKind::ChannelNotifyWait { timeout, .. }
        | OpKind::ThreadNotifyWait { timeout, .. } => timeout.as_deref(),
        OpKind::SetWaitTimeout(timeout) => Some(timeout),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hccl_default_in_milliseconds_is_suspicious_in_seconds() {
        assert!(suspicion(TimeUnit::Seconds, 1_836_000).is_some());
        assert!(suspicion(TimeUnit::Seconds, 1836).is_none());
        assert!(suspicion(TimeUnit::Milliseconds, 1800).is_some());
        assert!(suspicion(TimeUnit::Milliseconds, 1836).is_none());
        assert!(suspicion(TimeUnit::Milliseconds, -1).is_none());
    }
}
