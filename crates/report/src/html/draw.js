// Draws every chart of the page from the JSON in #plumb-charts with uPlot, and counts the
// charts drawn into <body data-charts-drawn>: a headless browser checks that count.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  var body = document.body;
  var drawn = 0;
  var specs;
  try {
    specs = JSON.parse(document.getElementById("plumb-charts").textContent);
  } catch (e) {
    window.plumbError("chart data: " + e);
    return;
  }
  function number(v) {
    if (v == null) return "";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
    return String(Math.round(v * 1000) / 1000);
  }
  specs.forEach(function (s) {
    var el = document.getElementById(s.id);
    if (!el) { window.plumbError("no element for " + s.id); return; }
    try {
      var cats = s.x.categories || [];
      var xscale = { time: false };
      var xaxis = { label: s.x.label, stroke: "#333" };
      if (s.x.kind === "log") {
        xscale.distr = 3;
      } else if (s.x.kind === "categories") {
        xscale.range = [-0.5, cats.length - 0.5];
        xaxis.splits = function () { return cats.map(function (_, i) { return i; }); };
        xaxis.values = function (u, splits) { return splits.map(function (i) { return cats[i]; }); };
      }
      var scales = { x: xscale, y: {} };
      var axes = [xaxis, { scale: "y", label: s.y[0] || "", stroke: "#333",
                           values: function (u, v) { return v.map(number); }, size: 70 }];
      if (s.y.length > 1) {
        scales.y2 = {};
        axes.push({ scale: "y2", side: 1, label: s.y[1], stroke: "#333", grid: { show: false },
                    values: function (u, v) { return v.map(number); }, size: 70 });
      }
      var series = [{ label: s.x.label,
                      value: s.x.kind === "categories"
                        ? function (u, v) { return v == null ? "" : cats[v]; }
                        : function (u, v) { return number(v); } }];
      s.series.forEach(function (d) {
        var c = palette[d.color % palette.length];
        var one = { label: d.label, scale: d.axis === 1 ? "y2" : "y", stroke: c, width: 2,
                    spanGaps: true, value: function (u, v) { return number(v); } };
        if (d.dash) one.dash = [6, 4];
        if (d.marker) {
          one.paths = function () { return null; };
          one.points = { show: true, size: 14, stroke: c, fill: c };
          one.spanGaps = false;
        } else {
          one.points = { show: true, size: 5 };
        }
        series.push(one);
      });
      var done = false;
      var width = Math.max(320, Math.min(el.clientWidth || 900, 1100));
      var opts = {
        width: width,
        height: 300,
        scales: scales,
        axes: axes,
        series: series,
        legend: { show: true },
        hooks: {
          draw: [function () {
            if (done) return;
            done = true;
            drawn += 1;
            body.setAttribute("data-charts-drawn", String(drawn));
          }]
        }
      };
      new uPlot(opts, s.data, el);
    } catch (e) {
      window.plumbError(s.id + ": " + e);
    }
  });
})();
