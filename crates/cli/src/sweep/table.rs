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

/// Why variable `key` (named `name`) has no line of two or more points to look for a knee
/// on, None when it has one: the plan gives it one value, or no two points done differ
/// in it alone (a sweep stopped early).
pub fn no_line(key: usize, name: &str, values: &[Vec<String>], lines: &[Line]) -> Option<String> {
    if lines.iter().any(|l| l.key == key) {
        return None;
    }
    let mut seen: Vec<&str> = Vec::new();
    for v in values {
        if !seen.contains(&v[key].as_str()) {
            seen.push(&v[key]);
        }
    }
    Some(if seen.len() < 2 {
        format!(
            "too few points along it (the plan gives it one value, {})",
            seen.first().copied().unwrap_or("none")
        )
    } else {
        format!("too few points along it (no two points done differ in {name} alone)")
    })
}

/// The knee's definition, with the sweep's unit.
pub fn knee_rule(unit: &str) -> String {
    format!(
        "the first value after which {unit} grows by {:.0}% or less per step",
        (knee::FLAT - 1.0) * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn a_variable_without_a_line_says_why() {
        // threads has one value; size has two, but only one point of each was done.
        let values = v(&[&["1", "10"], &["1", "20"]]);
        let l = lines(2, &values, &[Some(5.0), Some(6.0)]);
        assert_eq!(
            no_line(0, "threads", &values, &l).as_deref(),
            Some("too few points along it (the plan gives it one value, 1)")
        );
        assert_eq!(no_line(1, "size", &values, &l), None);
        let l = lines(2, &values, &[Some(5.0), None]);
        assert_eq!(
            no_line(1, "size", &values, &l).as_deref(),
            Some("too few points along it (no two points done differ in size alone)")
        );
        // Two points done that differ in both variables make no line for either.
        let values = v(&[&["1", "10"], &["2", "10"], &["1", "20"], &["2", "20"]]);
        let l = lines(2, &values, &[Some(5.0), None, None, Some(6.0)]);
        assert!(l.is_empty());
        assert!(no_line(0, "threads", &values, &l).is_some());
    }
}
