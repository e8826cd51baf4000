//! The rules this crate reports, one file each; the doc comment of each is its
//! documentation (`syncguard rules SG901`). The analyzer's registry lists them with
//! the other reading rules (`RuleInfo::reading`).

pub mod collective_desync;
pub mod collective_dtype_mismatch;
pub mod collective_not_entered;
pub mod collective_size_mismatch;
pub mod collective_stuck;
pub mod flight_recorder_unreadable;
pub mod rank_dump_missing;

pub use collective_desync::CollectiveDesync;
pub use collective_dtype_mismatch::CollectiveDtypeMismatch;
pub use collective_not_entered::CollectiveNotEntered;
pub use collective_size_mismatch::CollectiveSizeMismatch;
pub use collective_stuck::CollectiveStuck;
pub use flight_recorder_unreadable::FlightRecorderUnreadable;
pub use rank_dump_missing::RankDumpMissing;

use syncguard_model::declare_reading_rule as declare_dump_rule;
