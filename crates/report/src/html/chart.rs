//! One chart as the page's script draws it with uPlot: its x axis, up to two y axes and its
//! series, on one shared x array (uPlot's aligned data; a series has null where it has no
//! point).

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Chart {
    /// The element's id (`chart-N`), set when the chart is placed in the page.
    pub id: String,
    pub title: String,
    pub x: XAxis,
    /// The left axis, then the right one when a series uses it.
    pub y: Vec<String>,
    pub series: Vec<Series>,
    /// `data[0]` is x; `data[i + 1]` is `series[i]`.
    pub data: Vec<Vec<Option<f64>>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct XAxis {
    pub label: String,
    /// `linear`, `log` (base 10) or `categories` (x is the index into `categories`).
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub label: String,
    /// 0: the left axis, 1: the right one.
    pub axis: usize,
    /// Index into the page's palette: series of one run share a colour across charts.
    pub color: usize,
    pub dash: bool,
    /// Drawn as large points only (a knee marker).
    pub marker: bool,
}

impl Series {
    pub fn line(label: impl Into<String>, color: usize) -> Series {
        Series {
            label: label.into(),
            axis: 0,
            color,
            dash: false,
            marker: false,
        }
    }

    pub fn right(mut self) -> Series {
        self.axis = 1;
        self
    }

    pub fn dashed(mut self) -> Series {
        self.dash = true;
        self
    }

    pub fn marker(mut self) -> Series {
        self.marker = true;
        self
    }
}

impl XAxis {
    pub fn linear(label: impl Into<String>) -> XAxis {
        XAxis {
            label: label.into(),
            kind: "linear",
            categories: Vec::new(),
        }
    }

    pub fn log(label: impl Into<String>) -> XAxis {
        XAxis {
            label: label.into(),
            kind: "log",
            categories: Vec::new(),
        }
    }

    pub fn categories(label: impl Into<String>, categories: Vec<String>) -> XAxis {
        XAxis {
            label: label.into(),
            kind: "categories",
            categories,
        }
    }
}

impl Chart {
    /// A chart from series given as their own (x, y) points: the x values of all series are
    /// joined into one sorted array and each series gets null where it has no point. Series
    /// without a single point are left out; None when none has one (the page then says that
    /// the run has no such data instead of drawing an empty chart).
    pub fn join(
        title: impl Into<String>,
        x: XAxis,
        y: Vec<String>,
        series: Vec<(Series, Vec<(f64, f64)>)>,
    ) -> Option<Chart> {
        let series: Vec<_> = series
            .into_iter()
            .filter(|(_, pts)| pts.iter().any(|(x, y)| x.is_finite() && y.is_finite()))
            .collect();
        if series.is_empty() {
            return None;
        }
        let mut xs: Vec<f64> = series
            .iter()
            .flat_map(|(_, pts)| pts.iter().map(|p| p.0))
            .filter(|x| x.is_finite())
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut data = vec![xs.iter().map(|&x| Some(x)).collect::<Vec<_>>()];
        for (_, pts) in &series {
            let mut col = vec![None; xs.len()];
            for &(x, y) in pts {
                if let (Ok(i), true) = (xs.binary_search_by(|v| v.total_cmp(&x)), y.is_finite()) {
                    col[i] = Some(y);
                }
            }
            data.push(col);
        }
        Some(Chart {
            id: String::new(),
            title: title.into(),
            x,
            y,
            series: series.into_iter().map(|(s, _)| s).collect(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_joined_on_one_x_array_with_gaps() {
        let c = Chart::join(
            "t",
            XAxis::linear("s"),
            vec!["y".into()],
            vec![
                (Series::line("a", 0), vec![(1.0, 10.0), (2.0, 20.0)]),
                (Series::line("b", 1), vec![(1.5, 5.0), (2.0, 6.0)]),
                (Series::line("empty", 2), vec![]),
            ],
        )
        .unwrap();
        assert_eq!(c.series.len(), 2);
        assert_eq!(
            c.data,
            vec![
                vec![Some(1.0), Some(1.5), Some(2.0)],
                vec![Some(10.0), None, Some(20.0)],
                vec![None, Some(5.0), Some(6.0)],
            ]
        );
        assert!(Chart::join("t", XAxis::linear("s"), vec![], vec![]).is_none());
    }
}
