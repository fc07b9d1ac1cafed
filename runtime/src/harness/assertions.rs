//! Assertion macros that generated bench bodies use in place of std's, so that a failed
//! assertion is classified as `fail` and any other panic as `error`. They behave and read
//! exactly like std's.

use std::fmt::{Arguments, Debug};

/// Panics as a failed assertion with `message`.
#[track_caller]
#[doc(hidden)]
pub fn fail(message: Arguments<'_>) -> ! {
    crate::harness::context::mark_assertion();
    panic!("{message}")
}

/// Panics as std's `assert_eq!` / `assert_ne!` do.
#[track_caller]
#[doc(hidden)]
pub fn fail_comparison<L: Debug + ?Sized, R: Debug + ?Sized>(
    op: &str,
    left: &L,
    right: &R,
    message: Option<Arguments<'_>>,
) -> ! {
    crate::harness::context::mark_assertion();
    match message {
        Some(message) => panic!(
            "assertion `left {op} right` failed: {message}\n  left: {left:?}\n right: {right:?}"
        ),
        None => panic!("assertion `left {op} right` failed\n  left: {left:?}\n right: {right:?}"),
    }
}

/// `assert!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_assert {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::__private::assertions::fail(::core::format_args!(
                "assertion failed: {}",
                ::core::stringify!($cond)
            ))
        }
    };
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            $crate::__private::assertions::fail(::core::format_args!($($arg)+))
        }
    };
}

/// `assert_eq!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_assert_eq {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    $crate::__private::assertions::fail_comparison("==", &*left, &*right, ::core::option::Option::None)
                }
            }
        }
    };
    ($left:expr, $right:expr, $($arg:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    $crate::__private::assertions::fail_comparison(
                        "==", &*left, &*right, ::core::option::Option::Some(::core::format_args!($($arg)+)))
                }
            }
        }
    };
}

/// `assert_ne!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_assert_ne {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    $crate::__private::assertions::fail_comparison("!=", &*left, &*right, ::core::option::Option::None)
                }
            }
        }
    };
    ($left:expr, $right:expr, $($arg:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    $crate::__private::assertions::fail_comparison(
                        "!=", &*left, &*right, ::core::option::Option::Some(::core::format_args!($($arg)+)))
                }
            }
        }
    };
}

/// `debug_assert!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_debug_assert {
    ($($arg:tt)*) => {
        if ::core::cfg!(debug_assertions) {
            $crate::__probtest_assert!($($arg)*);
        }
    };
}

/// `debug_assert_eq!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_debug_assert_eq {
    ($($arg:tt)*) => {
        if ::core::cfg!(debug_assertions) {
            $crate::__probtest_assert_eq!($($arg)*);
        }
    };
}

/// `debug_assert_ne!`, classified as a failed assertion.
#[doc(hidden)]
#[macro_export]
macro_rules! __probtest_debug_assert_ne {
    ($($arg:tt)*) => {
        if ::core::cfg!(debug_assertions) {
            $crate::__probtest_assert_ne!($($arg)*);
        }
    };
}

pub use crate::{
    __probtest_assert as assert, __probtest_assert_eq as assert_eq,
    __probtest_assert_ne as assert_ne, __probtest_debug_assert as debug_assert,
    __probtest_debug_assert_eq as debug_assert_eq, __probtest_debug_assert_ne as debug_assert_ne,
};
