//! The axes of nondeterminism the doctor varies, and the perturbations on each: a value that
//! controls the axis (its nondeterminism pinned to a benign value), values that provoke it, and
//! how a perturbation reaches a test process (environment variables read by the preload
//! library, the CPUs it may run on and the load beside it, or which sibling tests run beside
//! the victim and how).
//!
//! The axes and what a run changes (`Axis`, `Perturbation`) are the repro blob's, in
//! `probtest_settings::repro`; `values` holds the values that control, provoke and leave alone
//! each axis.

mod values;

pub use probtest_settings::repro::{
    describe, utc, Axis, Clock, Cpus, Perturbation, KEPT_VARIABLES,
};
pub use values::{
    benign, control, control_otherwise, in_far_zone, local_zone, provocations, seed_provocations,
    Provocation,
};
