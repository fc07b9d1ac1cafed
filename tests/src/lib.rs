//! End-to-end tests of probtest live in `tests/`; this library is empty.
