//! Plain values every layer shares: statistics, run classes and statuses, token usage, an
//! ordered map, timestamps, sums that stay finite and counts written for people.
//!
//! Layer: types, the bottom. Its modules import nothing from the crate outside `types`, and
//! carry no serde: the JSON shape of each value a file holds is `format::shape`'s.

pub(crate) mod count;
pub(crate) mod key;
pub(crate) mod ordered_map;
pub mod stats;
pub(crate) mod status;
pub(crate) mod sum;
pub(crate) mod time;
pub(crate) mod usage;
