//! Cargo's conventions for what `cargo probtest` prints: `--color` (else `CARGO_TERM_COLOR`,
//! else `NO_COLOR`, `CLICOLOR_FORCE` and whether stdout is a terminal), `-q` and `-v`, taken
//! on any subcommand, and passed on to the cargo it starts.

use std::ffi::OsString;
use std::io::Write;
use std::process::Command;

use clap::{Args, ValueEnum};

use crate::error::Error;

/// Cargo's variable for its coloring, which `--color` overrides.
pub const CARGO_TERM_COLOR: &str = "CARGO_TERM_COLOR";

/// When to color: cargo's three choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal, unless `NO_COLOR` (or `CLICOLOR_FORCE`) says otherwise.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// The name cargo uses for the choice.
    pub fn name(self) -> &'static str {
        match self {
            ColorChoice::Auto => "auto",
            ColorChoice::Always => "always",
            ColorChoice::Never => "never",
        }
    }

    fn parse(text: &str) -> Option<ColorChoice> {
        ColorChoice::from_str(text.trim(), true).ok()
    }
}

/// The options every subcommand takes, as cargo's own do.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct UiArgs {
    /// Coloring: auto, always, never [default: CARGO_TERM_COLOR, else auto]; passed on to the
    /// cargo (and nextest) it starts.
    #[arg(long, value_enum, value_name = "WHEN", global = true)]
    pub color: Option<ColorChoice>,

    /// Print nothing but errors and what was asked for (no summary, no progress); cargo and
    /// nextest get their quiet option.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say more: the commands started, the session read; cargo (and nextest) get `-v`.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// What the options decide, once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ui {
    /// Whether the summary and the history get colors.
    pub color: bool,
    /// The choice `--color` made, for the cargo this command starts.
    pub color_flag: Option<ColorChoice>,
    /// `-q`.
    pub quiet: bool,
    /// How many `-v`.
    pub verbose: u8,
}

impl Ui {
    /// Decides from the options and the environment; a `CARGO_TERM_COLOR` that is none of
    /// cargo's choices is an error, as it is to cargo.
    pub fn new(args: &UiArgs) -> Result<Ui, Error> {
        Ui::decide(
            args,
            std::env::var(CARGO_TERM_COLOR).ok(),
            probtest::color_enabled,
        )
    }

    fn decide(
        args: &UiArgs,
        term_color: Option<String>,
        auto: impl FnOnce() -> bool,
    ) -> Result<Ui, Error> {
        let choice = match (
            args.color,
            term_color.filter(|value| !value.trim().is_empty()),
        ) {
            (Some(choice), _) => choice,
            (None, Some(value)) => ColorChoice::parse(&value).ok_or_else(|| {
                Error::new(format!(
                    "{CARGO_TERM_COLOR}={value:?}: expected auto, always or never"
                ))
            })?,
            (None, None) => ColorChoice::Auto,
        };
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => auto(),
        };
        Ok(Ui {
            color,
            color_flag: args.color,
            quiet: args.quiet,
            verbose: args.verbose,
        })
    }

    /// Passes the choices on to a cargo (or nextest) this command starts: `--color` through
    /// `CARGO_TERM_COLOR`, which both read.
    pub fn pass_on(&self, command: &mut Command) {
        if let Some(choice) = self.color_flag {
            command.env(CARGO_TERM_COLOR, choice.name());
        }
    }

    /// Cargo's options for `-q` and `-v`: `cargo test`'s `-q` and `-v`, nextest's
    /// `--cargo-quiet` and `-v` (nextest has no quiet of its own).
    pub fn cargo_flags(&self, nextest: bool) -> Vec<OsString> {
        if self.quiet {
            let quiet = if nextest { "--cargo-quiet" } else { "-q" };
            return vec![quiet.into()];
        }
        (0..self.verbose.min(2)).map(|_| "-v".into()).collect()
    }

    /// Says `text` on stderr under `-v`.
    pub fn detail(&self, text: &str) {
        if self.verbose > 0 {
            let _ = writeln!(std::io::stderr().lock(), "probtest: {text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(flag: Option<ColorChoice>, env: Option<&str>, auto: bool) -> Result<Ui, Error> {
        let args = UiArgs {
            color: flag,
            ..UiArgs::default()
        };
        Ui::decide(&args, env.map(str::to_string), || auto)
    }

    #[test]
    fn the_flag_beats_cargo_term_color_which_beats_the_terminal() {
        let color = |flag, env, auto| decided(flag, env, auto).expect("decided").color;
        assert!(color(Some(ColorChoice::Always), Some("never"), false));
        assert!(!color(Some(ColorChoice::Never), Some("always"), true));
        assert!(color(None, Some("always"), false));
        assert!(!color(None, Some("NEVER"), true));
        assert!(color(None, Some("auto"), true));
        assert!(!color(None, None, false));
        assert!(color(Some(ColorChoice::Auto), Some("never"), true));
        assert!(color(None, Some(" "), true));
        let error = decided(None, Some("blue"), true).expect_err("refused");
        assert_eq!(
            error.message(),
            "CARGO_TERM_COLOR=\"blue\": expected auto, always or never"
        );
        // A bad variable is no matter when the flag decides.
        assert!(decided(Some(ColorChoice::Never), Some("blue"), true).is_ok());
    }

    #[test]
    fn quiet_and_verbose_reach_cargo_and_nextest_in_their_own_words() {
        let ui = |quiet, verbose| Ui {
            quiet,
            verbose,
            ..Ui::default()
        };
        assert!(ui(false, 0).cargo_flags(false).is_empty());
        assert_eq!(ui(true, 0).cargo_flags(false), ["-q"]);
        assert_eq!(ui(true, 0).cargo_flags(true), ["--cargo-quiet"]);
        assert_eq!(ui(false, 1).cargo_flags(true), ["-v"]);
        assert_eq!(ui(false, 5).cargo_flags(false), ["-v", "-v"]);
    }
}
