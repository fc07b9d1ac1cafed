//! The HTML report's small charts, as inline SVG written by hand: a pass-fraction bar with its
//! interval as a whisker and the gate's bar, a sparkline of a case's pass fraction over
//! sessions, and a forest plot's row for a comparison. A few shapes each, drawn in a 0-100 coordinate space and styled by the page's
//! CSS classes, so that a thousand rows stay small; a plotting crate would weigh more than the
//! runtime itself for this.
//!
//! Layer: export.

use std::fmt::Write;

/// The tone of a chart, a CSS class: `pass`, `warn` or `fail`.
pub(crate) type Tone = &'static str;

/// A number of the 0-100 drawing space, with one decimal at most.
fn at(value: f64) -> String {
    let value = (value.clamp(0.0, 100.0) * 10.0).round() / 10.0;
    format!("{value}")
}

/// The bar of a case: `rate` (0-100) filled in `tone`, the interval `(low, high)` (0-1) as a
/// whisker, and the gate's bar (0-1) as a dashed line.
pub(crate) fn bar(
    rate: f64,
    interval: Option<(f64, f64)>,
    gate: Option<f64>,
    tone: Tone,
    label: &str,
) -> String {
    let mut svg = format!(
        "<svg class=\"bar\" viewBox=\"0 0 100 12\" role=\"img\" aria-label=\"{label}\"><rect class=\"track\" width=\"100\" height=\"12\"/><rect class=\"{tone}\" width=\"{}\" height=\"12\"/>",
        at(rate)
    );
    if let Some((low, high)) = interval {
        let (low, high) = (at(low * 100.0), at(high * 100.0));
        let _ = write!(
            svg,
            "<path class=\"ci\" d=\"M{low} 6H{high}M{low} 2V10M{high} 2V10\"/>"
        );
    }
    if let Some(bar) = gate {
        let _ = write!(
            svg,
            "<path class=\"gate\" d=\"M{} 0V12\"/>",
            at(bar * 100.0)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A sparkline of pass rates (0-100, drawn from y 19 down to 1), oldest first, and `baseline`
/// (0-100) as a dashed line. Empty for a single point without a baseline: nothing to compare
/// it with.
pub(crate) fn sparkline(rates: &[f64], baseline: Option<f64>, label: &str) -> String {
    if rates.is_empty() || (rates.len() < 2 && baseline.is_none()) {
        return String::new();
    }
    // A single point sits at the right end, where the newest one always does.
    let step = 100.0 / (rates.len().max(2) - 1) as f64;
    let first = 100.0 - step * (rates.len() - 1) as f64;
    let y = |rate: f64| at(19.0 - rate.clamp(0.0, 100.0) * 0.18);
    let points: Vec<String> = rates
        .iter()
        .enumerate()
        .map(|(index, &rate)| format!("{},{}", at(first + index as f64 * step), y(rate)))
        .collect();
    let mut svg = format!(
        "<svg class=\"spark\" viewBox=\"-2 0 104 20\" role=\"img\" aria-label=\"{label}\">"
    );
    if let Some(baseline) = baseline {
        let _ = write!(svg, "<path class=\"base\" d=\"M0 {0}H100\"/>", y(baseline));
    }
    let last = rates[rates.len() - 1];
    let _ = write!(
        svg,
        "<polyline points=\"{}\"/><circle cx=\"100\" cy=\"{}\" r=\"1.6\"/></svg>",
        points.join(" "),
        y(last)
    );
    svg
}

/// One arm of a forest plot, on an axis from `-scale` to `scale`: the difference as a dot, its
/// interval as a line, zero as a solid line, the margin's lines dashed (`-margin`, and
/// `+margin` for equivalence).
pub(crate) fn forest_row(
    difference: Option<f64>,
    interval: Option<(f64, f64)>,
    margin: Option<f64>,
    equivalence: bool,
    scale: f64,
) -> String {
    let x = |d: f64| at(50.0 + 50.0 * d / scale);
    let mut svg = String::from(
        "<svg class=\"forest\" viewBox=\"0 0 100 12\" role=\"img\"><path class=\"zero\" d=\"M50 0V12\"/>",
    );
    if let Some(margin) = margin {
        let _ = write!(svg, "<path class=\"gate\" d=\"M{} 0V12\"/>", x(-margin));
        if equivalence {
            let _ = write!(svg, "<path class=\"gate\" d=\"M{} 0V12\"/>", x(margin));
        }
    }
    if let Some((low, high)) = interval {
        let _ = write!(
            svg,
            "<path class=\"ci\" d=\"M{0} 6H{1}M{0} 3V9M{1} 3V9\"/>",
            x(low),
            x(high)
        );
    }
    if let Some(d) = difference {
        let _ = write!(
            svg,
            "<circle class=\"point\" cx=\"{}\" cy=\"6\" r=\"2.2\"/>",
            x(d)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_the_rate_and_draws_the_interval_and_the_gate() {
        let svg = bar(70.0, Some((0.348, 0.933)), Some(0.9), "warn", "70%");
        assert!(svg.contains("<rect class=\"warn\" width=\"70\""), "{svg}");
        assert!(
            svg.contains("d=\"M34.8 6H93.3M34.8 2V10M93.3 2V10\""),
            "{svg}"
        );
        assert!(
            svg.contains("<path class=\"gate\" d=\"M90 0V12\"/>"),
            "{svg}"
        );
        let plain = bar(100.0, None, None, "pass", "100%");
        assert!(!plain.contains("ci") && !plain.contains("gate"), "{plain}");
    }

    #[test]
    fn a_forest_row_draws_zero_the_margin_and_the_interval_on_its_scale() {
        let svg = forest_row(Some(-0.1), Some((-0.3, 0.1)), Some(0.2), false, 0.5);
        assert!(
            svg.contains("<path class=\"zero\" d=\"M50 0V12\"/>"),
            "{svg}"
        );
        assert!(
            svg.contains("<path class=\"gate\" d=\"M30 0V12\"/>"),
            "{svg}"
        );
        assert_eq!(svg.matches("class=\"gate\"").count(), 1, "{svg}");
        assert!(svg.contains("d=\"M20 6H60M20 3V9M60 3V9\""), "{svg}");
        assert!(svg.contains("cx=\"40\""), "{svg}");
        let both = forest_row(None, None, Some(0.2), true, 0.5);
        assert_eq!(both.matches("class=\"gate\"").count(), 2, "{both}");
        assert!(!both.contains("circle"), "{both}");
    }

    #[test]
    fn a_sparkline_runs_oldest_to_newest_and_needs_two_points() {
        assert_eq!(sparkline(&[50.0], None, "x"), "");
        let alone = sparkline(&[50.0], Some(80.0), "x");
        assert!(alone.contains("<circle cx=\"100\" cy=\"10\""), "{alone}");
        assert!(alone.contains("class=\"base\""), "{alone}");
        let svg = sparkline(&[0.0, 50.0, 100.0], Some(80.0), "x");
        assert!(svg.contains("points=\"0,19 50,10 100,1\""), "{svg}");
        assert!(
            svg.contains("<path class=\"base\" d=\"M0 4.6H100\"/>"),
            "{svg}"
        );
        assert!(svg.contains("<circle cx=\"100\" cy=\"1\""), "{svg}");
    }
}
