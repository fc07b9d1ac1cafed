//! Every on-disk JSON shape, each owned by one module: the report ([`report`], its values'
//! shapes in `shape`), the session store's lines ([`store_lines`]) and small files
//! ([`store_files`]), the split of a row's failures in the doctor's JSON ([`doctor_split`]),
//! and the reading of the peer's reports. serde reads them and
//! is the oracle of the fast writers that every run calls.
//!
//! Layer: format. May import `crate::types` and `crate::model`; never `render`, `store` or
//! `harness`.

pub(crate) mod aggregate;
#[cfg_attr(not(feature = "_cli"), allow(dead_code))]
pub(crate) mod doctor_split;
pub(crate) mod escape;
pub(crate) mod explained;
#[cfg(test)]
mod explanation_tests;
pub(crate) mod peer;
pub(crate) mod report;
mod shape;
pub(crate) mod store_files;
pub(crate) mod store_lines;
#[cfg(test)]
mod tests;
