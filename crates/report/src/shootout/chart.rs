//! SVG charts.
