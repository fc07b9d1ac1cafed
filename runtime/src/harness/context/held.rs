//! What a run holds that its timeout must let go of: a limit's slot, held on the body's thread,
//! which a timed-out run leaves running. The runner abandons the run at its deadline; that
//! releases everything it holds, and whatever it takes later is released at once.
//!
//! Layer: harness.

use std::sync::Arc;

/// Something a run holds until it is released, by its owner or by the run's abandonment.
pub(crate) trait Release: Send + Sync {
    /// Lets go of it; a second call does nothing.
    fn release(&self);
}

/// What a run holds, and whether it was abandoned.
#[derive(Default)]
pub(super) struct Held {
    pub(super) abandoned: bool,
    pub(super) items: Vec<Arc<dyn Release>>,
}
