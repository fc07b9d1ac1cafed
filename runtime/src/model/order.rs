//! The order a report lists its records in: by case (package, module, row id, as
//! [`CaseKey`](crate::CaseKey) orders them), then run, then attempt; records equal in all three
//! keep the order they came in.
//!
//! Every process that prints a summary builds a report at exit, and test binaries are built
//! without optimizations, where each comparison and closure of a sort is a real call. So the
//! order is found in a few linear passes rather than one comparison sort: each record's case is
//! numbered (strings compared pointers first, and against the last few cases seen, since a
//! process's records come in runs of the few cases its test threads were running), the cases
//! are put in key order (a check, when they first appeared in it), the records are bucketed by
//! case, and only a case whose runs came out of order is sorted.
//!
//! Layer: model.

use crate::model::record::Record;
use crate::types::key::CaseKey;

/// The records' positions in report order, grouped by case.
#[derive(Debug)]
pub(crate) struct RecordOrder {
    /// Record positions, by case in key order, each case's by run and attempt.
    pub(crate) order: Vec<usize>,
    /// Where each case's records begin in `order`, then `order.len()`: case `c` holds
    /// `order[starts[c]..starts[c + 1]]`.
    pub(crate) starts: Vec<usize>,
    /// Each record's case: its place among the distinct cases in key order.
    pub(crate) case_of: Vec<usize>,
}

impl RecordOrder {
    /// The number of distinct cases.
    pub(crate) fn cases(&self) -> usize {
        self.starts.len() - 1
    }

    /// The positions of case `case`'s records, in run order.
    pub(crate) fn of_case(&self, case: usize) -> &[usize] {
        &self.order[self.starts[case]..self.starts[case + 1]]
    }
}

/// How many of the last distinct cases are remembered while numbering: a process's records
/// interleave the cases of its test threads.
const RECENT: usize = 8;

/// Buckets at most this long are put in run order by insertion; longer ones that are out of
/// order by the standard library's (stable) sort.
const INSERTION: usize = 32;

/// The order of `records` in a report.
pub(crate) fn record_order(records: &[Record]) -> RecordOrder {
    let (provisional, firsts, runs) = number_cases(records);
    // In key order already when the cases first appeared in it, as a process's do when its
    // tests run in name order; else sorted, with equal keys (a case that came back after
    // leaving the recent ones) made one.
    let ascending = (1..firsts.len()).all(|i| {
        records[firsts[i - 1]]
            .key()
            .compare(&records[firsts[i]].key())
            .is_lt()
    });
    let (case_of, cases) = if ascending {
        (provisional, firsts.len())
    } else {
        let (rank, cases) = rank_cases(records, &firsts);
        (provisional.into_iter().map(|id| rank[id]).collect(), cases)
    };
    // A counting sort by case keeps each case's records in the order they came.
    let mut starts = vec![0; cases + 1];
    for &case in &case_of {
        starts[case + 1] += 1;
    }
    for case in 0..cases {
        starts[case + 1] += starts[case];
    }
    let mut next = starts.clone();
    let mut order = vec![0; records.len()];
    for (index, &case) in case_of.iter().enumerate() {
        order[next[case]] = index;
        next[case] += 1;
    }
    for case in 0..cases {
        sort_runs(&mut order[starts[case]..starts[case + 1]], &runs);
    }
    RecordOrder {
        order,
        starts,
        case_of,
    }
}

/// Numbers each record's case in the order cases first appear (a case that appears again after
/// leaving the last [`RECENT`] may get a second number); gives the numbers, a record of each
/// number, and each record's run and attempt as one sortable number.
fn number_cases(records: &[Record]) -> (Vec<usize>, Vec<usize>, Vec<u64>) {
    let mut provisional = Vec::with_capacity(records.len());
    let mut runs = Vec::with_capacity(records.len());
    let mut firsts: Vec<usize> = Vec::new();
    // The last distinct cases seen, with their numbers, the newest at `newest`.
    let mut recent = [(0usize, CaseKey::default()); RECENT];
    let (mut known, mut newest) = (0, 0);
    for (index, record) in records.iter().enumerate() {
        runs.push((u64::from(record.run) << 32) | u64::from(record.attempt));
        let key = record.key();
        let mut found = None;
        // Newest first: most records are of the case of the record before them.
        for back in 0..known {
            let (id, seen) = &recent[(newest + RECENT - back) % RECENT];
            if seen.same(&key) {
                found = Some(*id);
                break;
            }
        }
        let id = match found {
            Some(id) => id,
            None => {
                firsts.push(index);
                newest = (newest + 1) % RECENT;
                recent[newest] = (firsts.len() - 1, key);
                known = (known + 1).min(RECENT);
                firsts.len() - 1
            }
        };
        provisional.push(id);
    }
    (provisional, firsts, runs)
}

/// Each provisional number's place among the distinct keys in key order, and how many there
/// are.
fn rank_cases(records: &[Record], firsts: &[usize]) -> (Vec<usize>, usize) {
    let mut by_key: Vec<usize> = (0..firsts.len()).collect();
    by_key.sort_by(|&a, &b| records[firsts[a]].key().compare(&records[firsts[b]].key()));
    let mut rank = vec![0; firsts.len()];
    let mut cases = 0;
    for (place, &id) in by_key.iter().enumerate() {
        if place > 0
            && !records[firsts[by_key[place - 1]]]
                .key()
                .same(&records[firsts[id]].key())
        {
            cases += 1;
        }
        rank[id] = cases;
    }
    (rank, cases + usize::from(!firsts.is_empty()))
}

/// Puts one case's record positions in run and attempt order, stably; `runs` holds each
/// record's run and attempt.
fn sort_runs(positions: &mut [usize], runs: &[u64]) {
    if positions.len() <= INSERTION {
        // Runs mostly arrive in order, or nearly (two threads finishing out of turn).
        for i in 1..positions.len() {
            let moving = positions[i];
            let mut j = i;
            while j > 0 && runs[positions[j - 1]] > runs[moving] {
                positions[j] = positions[j - 1];
                j -= 1;
            }
            positions[j] = moving;
        }
    } else if (1..positions.len()).any(|i| runs[positions[i - 1]] > runs[positions[i]]) {
        positions.sort_by_key(|&position| runs[position]);
    }
}

/// Reorders `items` so that `items[i]` becomes what was at `from[i]`, `from` being a
/// permutation: cycle by cycle, with swaps, so that nothing is cloned or wrapped.
pub(crate) fn permute<T>(items: &mut [T], from: &[usize]) {
    debug_assert_eq!(items.len(), from.len());
    let mut placed = vec![false; from.len()];
    for start in 0..from.len() {
        if placed[start] || from[start] == start {
            continue;
        }
        let mut at = start;
        loop {
            placed[at] = true;
            let source = from[at];
            if source == start {
                break;
            }
            items.swap(at, source);
            at = source;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::model::tests::record;
    use crate::types::status::Outcome;

    /// The order as one stable comparison sort gives it: what the passes must reproduce.
    fn sorted(records: &[Record]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..records.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&records[a], &records[b]);
            (a.key(), a.run, a.attempt).cmp(&(b.key(), b.run, b.attempt))
        });
        order
    }

    /// Checks `record_order` against [`sorted`], and that its buckets are the cases.
    fn check(records: &[Record]) -> RecordOrder {
        let found = record_order(records);
        assert_eq!(found.order, sorted(records));
        for case in 0..found.cases() {
            let bucket = found.of_case(case);
            assert!(!bucket.is_empty());
            for &index in bucket {
                assert_eq!(found.case_of[index], case);
                assert_eq!(records[index].key(), records[bucket[0]].key());
            }
            if case > 0 {
                let before = found.of_case(case - 1)[0];
                assert!(records[before].key() < records[bucket[0]].key());
            }
        }
        found
    }

    fn run(case: &'static str, run: u32) -> Record {
        Record {
            case: Cow::Borrowed(case),
            ..record("x", run, Outcome::Pass, 0.0, Vec::new())
        }
    }

    #[test]
    fn records_already_in_order_stay_in_order() {
        let records: Vec<Record> = ["a::1", "a::2", "b::1"]
            .iter()
            .flat_map(|case| (1..=3).map(move |r| run(case, r)))
            .collect();
        let found = check(&records);
        assert_eq!(found.order, (0..9).collect::<Vec<_>>());
        assert_eq!(found.starts, [0, 3, 6, 9]);
    }

    #[test]
    fn interleaved_and_reversed_records_are_sorted() {
        // Two threads: runs swapped in pairs, two cases mixed where one ends.
        let records = vec![
            run("a::2", 2),
            run("a::2", 1),
            run("a::2", 3),
            run("a::10", 1),
            run("a::2", 4),
            run("a::10", 3),
            run("a::10", 2),
        ];
        let found = check(&records);
        // "a::10" orders before "a::2", though it came after.
        assert_eq!(found.order, [3, 6, 5, 1, 0, 2, 4]);
        let reversed: Vec<Record> = (1..=40).rev().map(|r| run("a::1", r)).collect();
        check(&reversed);
    }

    #[test]
    fn equal_text_at_other_addresses_is_the_same_case() {
        // Owned copies (as records read from a file are) beside borrowed ones, a case that
        // comes back after more than `RECENT` others, and repeated runs and retries.
        let owned = |case: &str, r: u32| Record {
            case: Cow::Owned(case.to_string()),
            ..run("", r)
        };
        let mut records = vec![owned("m::0", 2), run("m::0", 1)];
        for (i, case) in ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
            .iter()
            .enumerate()
        {
            records.push(run(case, 1 + i as u32 % 2));
        }
        records.push(owned("m::0", 1));
        records.push(Record {
            attempt: 2,
            ..run("m::0", 1)
        });
        records.push(owned("c3", 1));
        let found = check(&records);
        assert_eq!(found.cases(), 10);
        let m = found.case_of[0];
        assert_eq!(found.of_case(m), [1, 11, 12, 0]);
        assert_eq!(found.case_of[13], found.case_of[5]);
    }

    #[test]
    fn packages_and_modules_order_before_row_ids() {
        let at = |package: &'static str, module: &'static str, case: &'static str| Record {
            package: Cow::Borrowed(package),
            module: Cow::Borrowed(module),
            ..run(case, 1)
        };
        let records = vec![
            at("b", "a", "a"),
            at("a", "b", "a"),
            at("a", "a", "b"),
            at("a", "a", "a"),
            at("a", "a", "b"),
        ];
        let found = check(&records);
        assert_eq!(found.order, [3, 2, 4, 1, 0]);
        assert_eq!(found.cases(), 4);
    }

    #[test]
    fn long_cases_out_of_order_are_sorted_stably() {
        let mut records: Vec<Record> = (0..100).map(|i| run("a", 1 + (i * 37) % 50)).collect();
        records.extend((0..40).map(|i| run("b", 40 - i)));
        check(&records);
        assert_eq!(check(&[]).cases(), 0);
    }

    #[test]
    fn permuting_moves_each_item_once() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        permute(&mut items, &[2, 0, 1, 3, 5, 4]);
        assert_eq!(items, ['c', 'a', 'b', 'd', 'f', 'e']);
        let mut same = vec![1, 2, 3];
        permute(&mut same, &[0, 1, 2]);
        assert_eq!(same, [1, 2, 3]);
    }
}
