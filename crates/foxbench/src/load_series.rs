//! What `foxbench load` does with each interval besides the JSON series: `--hlog` and
//! `--slo-abort`. Wiring only: the log format lives in `stats::hlog`, the rule in `report::slo`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use report::slo::{Breach, Slo, Watch};
use stats::hlog::IntervalLog;

/// The per-interval outputs of one run.
pub struct Observers<'a> {
    hlog: Option<(PathBuf, IntervalLog<BufWriter<File>>)>,
    hlog_error: Option<std::io::Error>,
    watch: Option<Watch<'a>>,
    /// What stopped the run early, under `--slo-abort`.
    pub breach: Option<Breach>,
}

impl<'a> Observers<'a> {
    /// Opens `--hlog` (a setup error if it cannot be created) and arms `--slo-abort`.
    pub fn new(
        hlog: Option<&Path>,
        abort: Option<&'a Slo>,
        total_requests: Option<u64>,
    ) -> Result<Self> {
        let hlog = match hlog {
            None => None,
            Some(path) => {
                let file = File::create(path)
                    .with_context(|| format!("cannot create --hlog {}", path.display()))?;
                let log = IntervalLog::begin(BufWriter::new(file), SystemTime::now())
                    .with_context(|| format!("cannot write --hlog {}", path.display()))?;
                Some((path.to_path_buf(), log))
            }
        };
        Ok(Self {
            hlog,
            hlog_error: None,
            watch: abort.map(|slo| Watch::new(slo, total_requests)),
            breach: None,
        })
    }

    /// Takes one interval; returns true when the run should stop (`--slo-abort`).
    pub fn observe(&mut self, iv: &stats::Interval) -> bool {
        if let Some((_, log)) = &mut self.hlog {
            if self.hlog_error.is_none() {
                self.hlog_error = log.write(iv).err();
            }
        }
        if self.breach.is_none() {
            self.breach = self.watch.as_mut().and_then(|w| w.observe(iv));
            return self.breach.is_some();
        }
        false
    }

    /// Flushes `--hlog`, reporting the first write error of the run.
    pub fn finish(self) -> Result<()> {
        if let Some((path, log)) = self.hlog {
            let cannot = || format!("cannot write --hlog {}", path.display());
            if let Some(e) = self.hlog_error {
                return Err(e).with_context(cannot);
            }
            log.finish().with_context(cannot)?;
        }
        Ok(())
    }
}
