//! The cases of a function: the cartesian product of its groups (each group of `params(...)`,
//! and the rows of `cases(...)` as one more), with the ids composed from each group's part.

use std::collections::HashMap;

use syn::Expr;

use crate::ast::BenchFn;
use crate::attr::Group;
use crate::dataset::Dataset;
use crate::ids;
use crate::valid::written_text;

/// One combination of parameter values.
pub(crate) struct Case {
    /// The id users see (`refund please-Terse-2+2`).
    pub(crate) id: String,
    /// The test item name made from the id (`refund_please_terse_2_2`).
    pub(crate) item: String,
    /// Argument values in the function's argument order.
    pub(crate) args: Vec<CaseArg>,
    /// `(argument, value as written)` in the function's argument order; a row's argument has
    /// the JSON text it is read from.
    pub(crate) params: Vec<(String, String)>,
    /// Per group of `params(...)`, in written order: its argument names, the id of the value
    /// this case takes from it, and that value's position.
    pub(crate) parts: Vec<(Vec<String>, String, u32)>,
    /// The data file's row this case takes, if the function has `cases(...)`.
    pub(crate) row: Option<RowRef>,
}

/// Where a case's row is in its file, for the messages of a row that does not parse.
#[derive(Clone, Copy)]
pub(crate) struct RowRef {
    pub(crate) number: u32,
    pub(crate) line: u32,
}

/// An argument's value in one case.
pub(crate) enum CaseArg {
    /// An expression of `params(...)`.
    Expr(Expr),
    /// Read from the case's row when the run starts (its text is in the case's `params`).
    Row,
}

/// What one value of a group gives an argument.
#[derive(Clone, Copy)]
enum Bound<'a> {
    Expr(&'a Expr),
    /// A row's JSON text for the argument.
    Row(&'a str),
}

/// One value of one group: its id and what it gives to each named argument.
pub(crate) struct Choice<'a> {
    pub(crate) id: String,
    bindings: Vec<(String, Bound<'a>)>,
    row: Option<RowRef>,
}

pub(crate) fn group_choices(group: &Group) -> Vec<Choice<'_>> {
    group
        .values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let bindings: Vec<(String, &Expr)> = match (&value.expr, group.zipped) {
                (Expr::Tuple(tuple), true) => group
                    .names
                    .iter()
                    .map(ToString::to_string)
                    .zip(tuple.elems.iter())
                    .collect(),
                (expr, _) => vec![(group.names[0].to_string(), expr)],
            };
            let id = match &value.id {
                Some(id) => id.value(),
                None => bindings
                    .iter()
                    .map(|(name, expr)| ids::value_id(expr, name, index))
                    .collect::<Vec<_>>()
                    .join("-"),
            };
            let bindings = bindings
                .into_iter()
                .map(|(name, expr)| (name, Bound::Expr(expr)))
                .collect();
            Choice {
                id,
                bindings,
                row: None,
            }
        })
        .collect()
}

/// One choice per row of the data file.
fn row_choices(dataset: &Dataset) -> Vec<Choice<'_>> {
    dataset
        .rows
        .iter()
        .map(|row| Choice {
            id: row.id.clone(),
            bindings: dataset
                .names
                .iter()
                .cloned()
                .zip(row.texts.iter().map(|text| Bound::Row(text)))
                .collect(),
            row: Some(RowRef {
                number: row.number,
                line: row.line,
            }),
        })
        .collect()
}

/// Every case of the function, the last group varying fastest.
pub(crate) fn build(groups: &[Group], dataset: Option<&Dataset>, func: &BenchFn) -> Vec<Case> {
    let mut choices: Vec<Vec<Choice<'_>>> = groups.iter().map(group_choices).collect();
    let mut names: Vec<Vec<String>> = groups
        .iter()
        .map(|group| group.names.iter().map(ToString::to_string).collect())
        .collect();
    if let Some(dataset) = dataset {
        let at = if dataset.first { 0 } else { choices.len() };
        choices.insert(at, row_choices(dataset));
        names.insert(at, dataset.names.clone());
    }
    // Cartesian product in written order: the last group varies fastest. Each combination is
    // the position of its choice in every group.
    let mut combos: Vec<Vec<u32>> = vec![Vec::new()];
    for group in &choices {
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                (0..group.len() as u32).map(move |index| {
                    let mut next = prefix.clone();
                    next.push(index);
                    next
                })
            })
            .collect();
    }
    let pick = |combo: &[u32]| -> Vec<&Choice<'_>> {
        combo
            .iter()
            .zip(&choices)
            .map(|(index, group)| &group[*index as usize])
            .collect()
    };
    let mut case_ids: Vec<String> = if choices.is_empty() {
        vec![func.short_name()]
    } else {
        combos
            .iter()
            .map(|combo| {
                pick(combo)
                    .iter()
                    .map(|choice| choice.id.as_str())
                    .collect::<Vec<_>>()
                    .join("-")
            })
            .collect()
    };
    ids::make_unique(&mut case_ids);
    let items = ids::item_names(&case_ids);
    combos
        .iter()
        .zip(case_ids)
        .zip(items)
        .map(|((combo, id), item)| {
            let picked = pick(combo);
            let parts = names
                .iter()
                .zip(&picked)
                .zip(combo)
                .map(|((names, choice), index)| (names.clone(), choice.id.clone(), *index))
                .collect();
            let bound: HashMap<&str, Bound<'_>> = picked
                .iter()
                .flat_map(|choice| {
                    choice
                        .bindings
                        .iter()
                        .map(|(name, bound)| (name.as_str(), *bound))
                })
                .collect();
            let mut args = Vec::new();
            let mut params = Vec::new();
            for arg in &func.args {
                let name = arg
                    .ident
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                match bound[name.as_str()] {
                    Bound::Expr(expr) => {
                        params.push((name, written_text(expr)));
                        args.push(CaseArg::Expr(expr.clone()));
                    }
                    Bound::Row(text) => {
                        params.push((name, text.to_string()));
                        args.push(CaseArg::Row);
                    }
                }
            }
            Case {
                id,
                item,
                args,
                params,
                parts,
                row: picked.iter().find_map(|choice| choice.row),
            }
        })
        .collect()
}
