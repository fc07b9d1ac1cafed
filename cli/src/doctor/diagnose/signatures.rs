//! One flaky test can fail in more than one way (two assertions driven by the same randomness,
//! a timeout beside a wrong value): the failures seen unperturbed are grouped by fingerprint,
//! and each group gets its own attribution: the diagnosis's value when its verifying runs
//! failed that way, else another value of the same axis, else of another axis, that does.

use std::collections::BTreeMap;

use crate::doctor::axes::{self, Axis};
use crate::doctor::diagnose::{Diagnosis, Doctor, Signature};
use crate::doctor::fingerprint::Ending;
use crate::doctor::runner::Plan;

/// The most values of an axis tried for one signature.
const MOST_VALUES: u64 = 40;

impl Doctor<'_> {
    /// The signatures of the failures seen unperturbed, each attributed where a value makes
    /// the test fail that way; empty when they all read alike.
    pub(super) fn attribute_signatures(&mut self, diagnosis: &Diagnosis) -> Vec<Signature> {
        let seen: BTreeMap<String, u64> = self.seen_prints.clone();
        if seen.len() < 2 {
            return Vec::new();
        }
        let Some(reproduction) = &diagnosis.reproduction else {
            return seen
                .into_iter()
                .map(|(fingerprint, count)| Signature {
                    fingerprint,
                    seen: count,
                    cause: None,
                })
                .collect();
        };
        let mut signatures = Vec::new();
        for (fingerprint, count) in seen {
            let cause = if reproduction.fingerprints.contains(&fingerprint) {
                Some(format!("{}: {}", reproduction.axis, reproduction.value))
            } else {
                self.progress(&format!("a second way it fails: {fingerprint}"));
                self.value_failing_as(reproduction.axis, &fingerprint)
            };
            signatures.push(Signature {
                fingerprint,
                seen: count,
                cause,
            });
        }
        signatures
    }

    /// A value of `axis` (then of the other axes of the victim's own run) under which the
    /// victim fails with `fingerprint` twice in a row, as `axis: value`.
    fn value_failing_as(&mut self, axis: Axis, fingerprint: &str) -> Option<String> {
        let victim = self.victim().to_string();
        let first: Vec<axes::Provocation> = match axis {
            // The seeds after the ones the diagnosis went through.
            Axis::Entropy => axes::seed_provocations(MOST_VALUES * 3)
                .into_iter()
                .skip(MOST_VALUES as usize)
                .collect(),
            other => axes::provocations(other),
        };
        let mut candidates: Vec<(Axis, axes::Provocation)> =
            first.into_iter().map(|value| (axis, value)).collect();
        for other in self.provocable(&self.controlled_axes()) {
            if other != axis && other != Axis::Entropy {
                candidates.extend(
                    axes::provocations(other)
                        .into_iter()
                        .map(|value| (other, value)),
                );
            }
        }
        let (mut tried, mut runs) = (0u64, 0u64);
        let mut found = None;
        for (axis, provocation) in candidates {
            if self.over_budget() || tried >= MOST_VALUES * 2 {
                break;
            }
            tried += 1;
            let plan = Plan::alone(&victim, provocation.perturbation.clone());
            let first = self.runner.run(&plan);
            runs += 1;
            if first.fingerprint() != Some(fingerprint) || first == Ending::Hang {
                continue;
            }
            let second = self.runner.run(&plan);
            runs += 1;
            if second.fingerprint() == Some(fingerprint) {
                found = Some(format!("{axis}: {}", provocation.label));
                break;
            }
        }
        self.evidence.push(crate::doctor::diagnose::Evidence {
            label: format!("provoke the second way it fails ({tried} values)"),
            runs,
            failed: u64::from(found.is_some()) * 2,
            note: found.clone().unwrap_or_else(|| "not attributed".into()),
        });
        found
    }
}
