//! A sweep's figures: each point's runs merged, and the lines of points along one variable
//! with their knee. `plumb sweep` prints them as its table; `plumb html` draws them.

pub use plumb_history::Merged;

use super::knee;

/// Points that agree on every variable but `key`, in the order of the points (the plan's
/// order of `key`'s values), with the knee among them.
pub struct Line {
    pub key: usize,
    /// The other variables: (index of the key, value).
    pub others: Vec<(usize, String)>,
    /// Indices of the points along the line.
    pub points: Vec<usize>,
    /// The knee's point, None when throughput grows by more than the rule's step at every one.
    pub knee: Option<usize>,
}

/// Every line of two or more points, variable by variable. `values[i]` are point i's values
/// (one per key), `per_s[i]` its throughput (None: not run).
pub fn lines(keys: usize, values: &[Vec<String>], per_s: &[Option<f64>]) -> Vec<Line> {
    let mut out = Vec::new();
    for v in 0..keys {
        let mut lines: Vec<Line> = Vec::new();
        for (i, vals) in values.iter().enumerate() {
            if per_s[i].is_none() {
                continue;
            }
            let others: Vec<(usize, String)> = vals
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != v)
                .map(|(j, x)| (j, x.clone()))
                .collect();
            match lines.iter_mut().find(|l| l.others == others) {
                Some(l) => l.points.push(i),
                None => lines.push(Line {
                    key: v,
                    others,
                    points: vec![i],
                    knee: None,
                }),
            }
        }
        for l in &mut lines {
            let line: Vec<(&str, f64)> = l
                .points
                .iter()
                .map(|&i| (values[i][v].as_str(), per_s[i].unwrap_or(0.0)))
                .collect();
            let k = knee::knee(&line);
            l.knee = k.and_then(|k| l.points.iter().copied().find(|&i| values[i][v] == k));
        }
        out.extend(lines.into_iter().filter(|l| l.points.len() > 1));
    }
    out
}

/// The knee's definition, with the sweep's unit.
pub fn knee_rule(unit: &str) -> String {
    format!(
        "the first value after which {unit} grows by {:.0}% or less per step",
        (knee::FLAT - 1.0) * 100.0
    )
}
