//! The `probability: history` section (`cargo probtest report --history`): each case's pass
//! fraction in each session the store keeps, oldest first, and the change from the session
//! before the latest one.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::trend::{Change, History};
use crate::render::text::{column_widths, paint, rule};
use crate::types::status::Color;

/// Renders the history; `color` paints a significant drop red and a rise green.
pub fn history(history: &History, color: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", rule("probability: history"));
    if history.cases.is_empty() {
        let _ = writeln!(out, "  No session in the store ran a probtest case.");
        return out;
    }
    let sessions = history.sessions.len();
    let mut header = vec!["case".to_string()];
    header.extend((1..=sessions).map(|index| index.to_string()));
    header.push("change".to_string());
    let rows: Vec<Vec<String>> = history
        .cases
        .iter()
        .map(|case| {
            let mut cells = vec![crate::render::text::shown(&case.case).into_owned()];
            cells.extend(case.sessions.iter().map(|counts| match counts {
                Some((passes, runs)) => format!("{}%", percent(*passes, *runs)),
                None => "—".to_string(),
            }));
            cells.push(case.change.as_ref().map_or(String::new(), change_text));
            cells
        })
        .collect();
    let widths = column_widths(&header, &rows);
    let line = |cells: &[String]| {
        let mut text = format!("  {:<width$}", cells[0], width = widths[0]);
        let last = cells.len() - 1;
        for (column, cell) in cells.iter().enumerate().skip(1) {
            if column == last {
                let _ = write!(text, "  {cell}");
            } else {
                let _ = write!(text, "  {cell:>width$}", width = widths[column]);
            }
        }
        text.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&header));
    for (case, cells) in history.cases.iter().zip(&rows) {
        let text = line(cells);
        let tone = case
            .change
            .as_ref()
            .filter(|change| change.significant)
            .map(|change| {
                if change.difference < 0.0 {
                    Color::Red
                } else {
                    Color::Green
                }
            });
        let _ = writeln!(
            out,
            "{}",
            match tone {
                Some(tone) => paint(&text, tone, color),
                None => text,
            }
        );
    }
    let changed = history
        .cases
        .iter()
        .filter(|case| {
            case.change
                .as_ref()
                .is_some_and(|change| change.significant)
        })
        .count();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  Sessions: {sessions}, oldest first: {}",
        history
            .sessions
            .iter()
            .enumerate()
            .map(|(index, key)| format!("{} {key}", index + 1))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "  Changed: {changed} of {} cases: each case's latest session against the one before\n           it that ran it, the difference in points, Newcombe's {}% interval and\n           Fisher's exact p.",
        history.cases.len(),
        (history.level * 100.0).round()
    );
    out
}

/// `−60 pts [−80, −35]  p<0.001  CHANGED`.
fn change_text(change: &Change) -> String {
    let points = |value: f64| {
        let rounded = (value * 100.0).round() as i64;
        if rounded > 0 {
            format!("+{rounded}")
        } else if rounded < 0 {
            format!("−{}", -rounded)
        } else {
            "0".to_string()
        }
    };
    let p = if change.p_value < 0.001 {
        "p<0.001".to_string()
    } else {
        format!("p={:.3}", change.p_value)
    };
    let mut text = format!(
        "{} pts [{}, {}]  {p}",
        points(change.difference),
        points(change.low),
        points(change.high)
    );
    if change.significant {
        text.push_str(if change.difference < 0.0 {
            "  DROPPED"
        } else {
            "  ROSE"
        });
    }
    text
}

/// `passes` of `runs` as a whole percent.
fn percent(passes: u64, runs: u64) -> u64 {
    (passes as f64 / runs as f64 * 100.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trend::CaseHistory;

    #[test]
    fn the_history_reads_across_sessions_with_the_change_last() {
        let drop = Change {
            from: 1,
            to: 2,
            difference: -0.6,
            low: -0.8,
            high: -0.35,
            p_value: 4.5e-5,
            significant: true,
        };
        let history = History {
            sessions: vec!["s1".into(), "s2".into(), "s3".into()],
            level: 0.95,
            cases: vec![
                CaseHistory {
                    case: "triage::refund".into(),
                    package: "evals".into(),
                    module: "evals".into(),
                    sessions: vec![Some((19, 20)), Some((20, 20)), Some((8, 20))],
                    change: Some(drop),
                },
                CaseHistory {
                    case: "new".into(),
                    package: "evals".into(),
                    module: "evals".into(),
                    sessions: vec![None, None, Some((5, 5))],
                    change: None,
                },
            ],
        };
        let text = history_text(&history);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  case              1     2     3  change");
        assert_eq!(
            lines[2],
            "  triage::refund  95%  100%   40%  −60 pts [−80, −35]  p<0.001  DROPPED"
        );
        assert_eq!(lines[3], "  new               —     —  100%");
        assert!(
            text.contains("  Sessions: 3, oldest first: 1 s1, 2 s2, 3 s3"),
            "{text}"
        );
        assert!(
            text.contains("  Changed: 1 of 2 cases: each case's latest session"),
            "{text}"
        );
    }

    fn history_text(history: &History) -> String {
        super::history(history, false)
    }
}
