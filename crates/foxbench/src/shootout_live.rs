//! `foxbench shootout --dashboard`: the shootout told to the dashboard, as the same page and
//! server as `foxbench load --dashboard` show. The matrix is the `cells` feed; the running
//! cell is the page's current run, its loads (warm-up slices, repeats, capacity windows)
//! one after another on one time axis.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use dashboard::{CellState, CellStatus, Dashboard, Feed, Meta, Shared};
use shootout::watch::{CellAt, CellNow, Ended, Watch};

/// The running cell, as the dashboard's current run.
struct Cell {
    /// Its run number: the cell's link.
    run: u64,
    title: String,
    series: Shared,
    /// Whether its first load has begun (and the dashboard shows it).
    begun: bool,
    /// Where the current load's intervals go: after the cell's earlier loads.
    base_index: u64,
    offset_s: f64,
    /// Where the cell's loads have reached so far.
    next_index: u64,
    end_s: f64,
}

/// The dashboard of a shootout.
pub struct ShootoutLive {
    dash: Dashboard,
    cell: Mutex<Cell>,
}

impl std::fmt::Debug for ShootoutLive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootoutLive")
            .field("url", &self.dash.url())
            .finish()
    }
}

impl ShootoutLive {
    /// Binds the dashboard (a port in use is an error here, before any build) and prints its URL.
    pub fn bind(addr: SocketAddr, suite: &str) -> Result<ShootoutLive> {
        let meta = Meta {
            kind: dashboard::Kind::Shootout,
            title: format!("{suite}: no cell running yet"),
            model: "closed".into(),
            interval_s: 1.0,
            saturated_percent: report::SATURATED_PERCENT,
            ..Meta::default()
        };
        let series = crate::live::series();
        let dash = Dashboard::bind(addr, &meta, series.clone()).context("--dashboard")?;
        eprintln!("foxbench: dashboard at {}", dash.url());
        Ok(ShootoutLive {
            dash,
            cell: Mutex::new(Cell {
                run: 0,
                title: String::new(),
                series,
                begun: false,
                base_index: 0,
                offset_s: 0.0,
                next_index: 0,
                end_s: 0.0,
            }),
        })
    }

    /// Turns the pages into the shootout's report.
    pub fn finish(self, html: &str, json: &str) {
        let cpu = self.dash.finish(html, json, Duration::from_secs(10));
        eprintln!(
            "foxbench: the dashboard's threads used {:.3} s of CPU",
            cpu.as_secs_f64()
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cell> {
        self.cell.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Watch for ShootoutLive {
    fn cell(&self, at: CellAt<'_>, now: &CellNow) {
        let mut c = self.lock();
        let run = if *now == CellNow::Running {
            c.run += 1;
            c.title = format!("{} · {}", at.target, at.column);
            c.series = crate::live::series();
            c.begun = false;
            (c.base_index, c.offset_s, c.next_index, c.end_s) = (0, 0.0, 0, 0.0);
            Some(c.run)
        } else {
            None
        };
        let (status, requests_per_sec, reason) = match now {
            CellNow::Waiting => (CellStatus::Waiting, None, None),
            CellNow::Running => (CellStatus::Running, None, None),
            CellNow::Measured { requests_per_sec } => {
                (CellStatus::Measured, *requests_per_sec, None)
            }
            CellNow::Ended { how, reason } => {
                let status = match how {
                    Ended::Failed => CellStatus::Failed,
                    Ended::Excluded => CellStatus::Excluded,
                    Ended::Interrupted => CellStatus::Interrupted,
                };
                (status, None, Some(reason.clone()))
            }
        };
        self.dash.push(
            Feed::Cells,
            &CellState {
                target: at.target.into(),
                level: at.column.into(),
                status,
                requests_per_sec,
                reason,
                run,
            },
        );
    }

    fn load(&self, plan: &load::Plan) {
        let mut c = self.lock();
        (c.base_index, c.offset_s) = (c.next_index, c.end_s);
        if !c.begun {
            c.begun = true;
            let meta = Meta {
                kind: dashboard::Kind::Shootout,
                run: c.run,
                title: c.title.clone(),
                // The cell's loads follow each other: no one schedule spans them.
                target: Vec::new(),
                // Nor one interval: warm-up slices report one row each (the engine's
                // default interval, cut short), repeats one per sample interval. 0 keeps
                // every row on the page.
                interval_s: 0.0,
                ..crate::live::meta(plan, None)
            };
            self.dash.begin_run(&meta, c.series.clone());
        }
    }

    fn pinned(&self, cpus: &[usize]) {
        if let Err(e) = self.dash.pin(cpus) {
            eprintln!("foxbench: note: cannot pin the dashboard's threads to CPUs {cpus:?}: {e}");
        }
    }

    fn cpu(&self) -> probe::OwnUsage {
        self.dash.cpu()
    }

    fn interval(&self, iv: &stats::Interval, row: &report::IntervalRow) {
        let mut c = self.lock();
        let mut row = row.clone();
        row.start_s += c.offset_s;
        let index = c.base_index + iv.index;
        (c.next_index, c.end_s) = (index + 1, row.start_s + row.duration_s);
        // Rows made here carry their histogram: merging them cannot fail.
        let _ = c
            .series
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(index, row);
        if let Some(mut p) = crate::live::service_point(iv) {
            p.start_s += c.offset_s;
            self.dash.push(Feed::Service, &p);
        }
        drop(c);
        self.dash.pushed();
    }
}

/// The dashboard as the shootout's watch, and as itself for the end.
pub fn watch(live: &Arc<ShootoutLive>) -> Arc<dyn Watch> {
    live.clone()
}
