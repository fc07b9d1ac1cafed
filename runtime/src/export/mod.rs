//! Report files people read outside the terminal: the self-contained HTML page a test process
//! writes at exit (`PROB_HTML`), and the pieces of text every report file shares with the
//! terminal summary (`cargo-probtest`'s Markdown and JUnit XML use them too). Every count,
//! rate, interval and verdict comes from the report; what these files add is layout.
//!
//! Layer: export. May import `crate::types`, `crate::model` and `crate::render` (whose text
//! pieces, money and bounds and status words, make the files say what the terminal says);
//! never `format`, `store` or `harness`. Writing the files is the reporter's
//! (`harness::reporter`).

#[cfg(all(test, feature = "html"))]
pub(crate) mod fixture;
#[cfg(feature = "html")]
pub(crate) mod html;
pub(crate) mod pieces;

#[cfg(feature = "html")]
pub use html::{html, History, HistorySession};
#[cfg(feature = "html")]
pub(crate) use pieces::*;
