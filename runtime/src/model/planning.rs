//! The plan of a session that has not run: per case, the runs its gate needs to pass at all, the
//! runs that make a pass likely at an assumed true rate, the chance the planned runs give, the
//! chance they catch a rare failure, and their cost at an earlier report's price. Built from the
//! cases a test binary lists; nothing runs.
//!
//! Layer: model. Imports only `crate::types`.

use std::collections::BTreeMap;

use crate::model::case::{effective_gate, CaseInfo};
use crate::types::stats::plan::{detection_chance, power, runs_for_power, runs_to_see_failure};
use crate::types::stats::{GateSpec, Rule, StatsConfig};

/// What a plan assumes and asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanSettings {
    /// The true pass rate the chances assume (`--assume`, default 0.97).
    pub assume: f64,
    /// Failure rates the plan asks the chance of catching (`--flake`, default 0.1 and 0.01).
    pub flakes: Vec<f64>,
    /// The chance of passing that "runs for" aims at: 0.8.
    pub power: f64,
    /// The most runs the plan looks at: 10,000.
    pub cap: u64,
}

impl Default for PlanSettings {
    fn default() -> PlanSettings {
        PlanSettings {
            assume: 0.97,
            flakes: vec![0.1, 0.01],
            power: 0.8,
            cap: 10_000,
        }
    }
}

/// One case's plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRow {
    /// The row id.
    pub case: String,
    /// Runs planned.
    pub runs: u64,
    /// The gate that judges it, its own or the session's.
    pub gate: Option<GateSpec>,
    /// The fewest runs with which the gate can pass at all; `None` without a gate, or when no
    /// number of runs lets it.
    pub min_runs: Option<u64>,
    /// The fewest runs that pass the gate with [`PlanSettings::power`]'s chance at the assumed
    /// rate; `None` without a gate or when no run count up to the cap does.
    pub runs_for_power: Option<u64>,
    /// The chance the planned runs pass the gate at the assumed rate.
    pub chance: Option<f64>,
    /// Per failure rate of [`PlanSettings::flakes`], the chance the planned runs show one.
    pub catch: Vec<f64>,
    /// The cost of a run in the earlier report, when it priced the case.
    pub cost_per_run: Option<f64>,
    /// The latency gate's limit in seconds (`max_latency`), when the case has one: `min_runs`
    /// is then the larger of the two gates' minimums, and the power columns stay the rate
    /// gate's alone (a latency gate's chance would need an assumed run time).
    pub max_latency: Option<f64>,
}

impl PlanRow {
    /// The projected cost of the planned runs.
    pub fn cost(&self) -> Option<f64> {
        self.cost_per_run.map(|cost| cost * self.runs as f64)
    }

    /// Whether the assumed rate is at or below the gate's bar: no run count passes it often.
    pub fn never(&self, assume: f64) -> bool {
        matches!(self.gate, Some(GateSpec { rule: Rule::MinRate(bar), .. }) if assume <= bar)
    }
}

/// The plan of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// What it assumes.
    pub settings: PlanSettings,
    /// The session's confidence level, for the runs that catch a flake at that level.
    pub level: f64,
    /// Per failure rate, the runs that catch it with the session's confidence.
    pub runs_to_catch: Vec<Option<u64>>,
    /// The earlier report the costs come from.
    pub report: Option<String>,
    /// One row per case, in source order.
    pub rows: Vec<PlanRow>,
}

impl Plan {
    /// The plan of `cases` under `config`; `prices` is an earlier report's path and its cost per
    /// run of each row id.
    pub fn build(
        cases: &[CaseInfo],
        config: &StatsConfig,
        settings: PlanSettings,
        prices: Option<(String, BTreeMap<String, f64>)>,
    ) -> Plan {
        // A gate's numbers other than its chance do not depend on the planned runs: once each.
        let mut per_gate: Vec<(GateSpec, Option<u64>, Option<u64>)> = Vec::new();
        // In source order, as the summary lists rows; binaries list them in link order.
        let mut cases: Vec<&CaseInfo> = cases.iter().collect();
        cases.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
        let rows = cases
            .into_iter()
            .map(|info| {
                let runs = u64::from(info.runs);
                let gate = effective_gate(info.gate, config);
                let (min_runs, for_power, chance) = match gate {
                    None => (None, None, None),
                    Some(gate) => {
                        let (min_runs, for_power) =
                            match per_gate.iter().find(|(seen, ..)| *seen == gate) {
                                Some((_, min_runs, for_power)) => (*min_runs, *for_power),
                                None => {
                                    let min_runs = gate.runs_needed(config);
                                    let for_power = runs_for_power(
                                        &gate,
                                        config,
                                        settings.assume,
                                        settings.power,
                                        settings.cap,
                                    );
                                    per_gate.push((gate, min_runs, for_power));
                                    (min_runs, for_power)
                                }
                            };
                        let chance = power(&gate, config, runs, settings.assume);
                        (min_runs, for_power, Some(chance))
                    }
                };
                let latency = crate::model::latency_gate::gate_min_runs(info, config);
                let min_runs = match (gate, latency) {
                    (None, Some((_, least))) => Some(least),
                    (Some(_), Some((_, least))) => min_runs.map(|rate| rate.max(least)),
                    (_, None) => min_runs,
                };
                PlanRow {
                    case: info.case.clone(),
                    runs,
                    gate,
                    max_latency: latency.map(|(limit, _)| limit),
                    min_runs,
                    runs_for_power: for_power,
                    chance,
                    catch: settings
                        .flakes
                        .iter()
                        .map(|flake| detection_chance(*flake, runs))
                        .collect(),
                    cost_per_run: prices
                        .as_ref()
                        .and_then(|(_, prices)| prices.get(&info.case).copied()),
                }
            })
            .collect();
        let level = config.interval.level;
        Plan {
            runs_to_catch: settings
                .flakes
                .iter()
                .map(|flake| runs_to_see_failure(*flake, level))
                .collect(),
            level,
            report: prices.map(|(path, _)| path),
            settings,
            rows,
        }
    }

    /// Runs planned in all.
    pub fn total_runs(&self) -> u64 {
        self.rows.iter().map(|row| row.runs).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::info;

    #[test]
    fn a_plan_prices_gates_and_flakes_per_case() {
        let mut gated = info("a");
        gated.runs = 20;
        gated.gate = Some(GateSpec {
            rule: Rule::MinRate(0.8),
            method: None,
            level: None,
            prior: None,
        });
        let mut plain = info("b");
        plain.runs = 30;
        let prices = BTreeMap::from([("a".to_string(), 0.002)]);
        let plan = Plan::build(
            &[gated, plain],
            &StatsConfig::default(),
            PlanSettings::default(),
            Some(("old.json".into(), prices)),
        );
        let [a, b] = plan.rows.as_slice() else {
            panic!("two rows: {plan:?}");
        };
        assert_eq!((a.min_runs, a.runs_for_power), (Some(17), Some(26)));
        assert_eq!(a.chance.map(|c| (c * 100.0).round()), Some(54.0));
        assert_eq!(a.cost(), Some(0.04));
        assert_eq!((b.min_runs, b.chance, b.cost()), (None, None, None));
        assert!(
            (b.catch[0] - 0.957_608_841_724_783_5).abs() < 1e-12,
            "{b:?}"
        );
        assert_eq!(plan.runs_to_catch, [Some(29), Some(299)]);
        assert_eq!(plan.total_runs(), 50);
    }

    #[test]
    fn a_latency_gate_needs_the_runs_its_interval_needs_for_an_upper_bound() {
        use crate::types::stats::latency::LatencySpec;
        let latency = Some(LatencySpec {
            quantile: None,
            max_latency: Some(2.0),
            level: None,
        });
        // p95 at 95% needs 72 runs; a 0.8 rate gate alone needs 17.
        let both = CaseInfo {
            latency,
            gate: Some(GateSpec {
                rule: Rule::MinRate(0.8),
                method: None,
                level: None,
                prior: None,
            }),
            ..info("a")
        };
        let timed = CaseInfo {
            latency,
            ..info("b")
        };
        let plan = Plan::build(
            &[both, timed],
            &StatsConfig::default(),
            PlanSettings::default(),
            None,
        );
        let [a, b] = plan.rows.as_slice() else {
            panic!("two rows: {plan:?}");
        };
        assert_eq!((a.min_runs, a.max_latency), (Some(72), Some(2.0)));
        assert!(a.chance.is_some(), "the rate gate's chance stays");
        assert_eq!(
            (b.min_runs, b.chance, b.max_latency),
            (Some(72), None, Some(2.0))
        );
    }
}
