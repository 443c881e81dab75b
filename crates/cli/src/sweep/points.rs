//! The matrix as points in the order they run, grouped by data set so that each data set is
//! prepared once and its points run back to back; and a run of a point once done.

use std::path::PathBuf;

use plumb_pipeline::Record;

use super::front_end::Swept;

/// One point of the matrix: its values, in the order the plan lists the keys.
pub(super) struct Point {
    pub values: Vec<String>,
    /// The options for the command line (`--threads=2`).
    pub options: Vec<String>,
    /// Which data set it uses (its data-set values).
    pub data_set: Vec<String>,
    /// The files its run opens and lays out when they are missing (fio), from the front
    /// end's check.
    pub files: Vec<PathBuf>,
}

/// One run of a point.
pub(super) struct Done {
    pub point: usize,
    pub repeat: u32,
    pub run_id: Option<i64>,
    pub record: Record,
}

/// The points in the order they run: data-set variables outermost (so each data set's
/// points run back to back), then the others, each in the plan's order, the last fastest.
pub(super) fn expand(
    matrix: &[(String, Vec<String>, usize)],
    swept: &[Swept],
    extra: &[String],
) -> Vec<Point> {
    let mut order: Vec<usize> = (0..matrix.len()).filter(|&k| swept[k].data_set).collect();
    order.extend((0..matrix.len()).filter(|&k| !swept[k].data_set));
    let mut combos: Vec<Vec<usize>> = vec![vec![0; matrix.len()]];
    for &k in &order {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                (0..matrix[k].1.len()).map(move |v| {
                    let mut c = c.clone();
                    c[k] = v;
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|c| {
            let values: Vec<String> = c
                .iter()
                .enumerate()
                .map(|(k, &v)| matrix[k].1[v].clone())
                .collect();
            Point {
                options: swept
                    .iter()
                    .zip(&values)
                    .map(|(s, v)| format!("{}{v}", s.prefix))
                    .chain(extra.iter().cloned())
                    .collect(),
                data_set: swept
                    .iter()
                    .zip(&values)
                    .filter(|(s, _)| s.data_set)
                    .map(|(_, v)| v.clone())
                    .collect(),
                values,
                files: Vec::new(),
            }
        })
        .collect()
}

/// Whether point `i` is the first of its data set.
pub(super) fn starts_set(points: &[Point], i: usize) -> bool {
    i == 0 || points[i - 1].data_set != points[i].data_set
}

/// Whether point `i` is the last of its data set.
pub(super) fn ends_set(points: &[Point], i: usize) -> bool {
    i + 1 == points.len() || points[i + 1].data_set != points[i].data_set
}

/// The last point of the data set point `i` is in.
pub(super) fn set_end(points: &[Point], i: usize) -> usize {
    points[i..]
        .iter()
        .position(|p| p.data_set != points[i].data_set)
        .map_or(points.len() - 1, |k| i + k - 1)
}

/// How many data sets the points use.
pub(super) fn sets(points: &[Point]) -> usize {
    points
        .windows(2)
        .filter(|w| w[0].data_set != w[1].data_set)
        .count()
        + 1
}

/// The files the runs of a data set's points open (the front end's translation names
/// them), each once.
pub(super) fn set_files(points: &[Point]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for f in points.iter().flat_map(|p| &p.files) {
        if !v.contains(f) {
            v.push(f.clone());
        }
    }
    v
}
