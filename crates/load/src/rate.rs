//! The open model's rate over time: constant, a linear ramp, k6-style stages, or steps,
//! and the exact due instant of every request under it.
//!
//! A [`Rate`] is a list of stages, each going linearly from one rate to another over a
//! duration, then a rate held for the rest of the run. Requests due by `t` is the integral
//! of the rate, `N(t)`, piecewise quadratic; request `j` (0-based, over all workers) is due
//! at `N⁻¹(j)`. Both are computed from `j` and `t` directly, never accumulated, so a long
//! run does not drift.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::parse_duration;

/// One stage: the rate goes linearly from `from_per_sec` to `to_per_sec` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    /// Requests per second at the stage's start.
    pub from_per_sec: f64,
    /// Requests per second at its end.
    pub to_per_sec: f64,
    /// How long it lasts.
    pub duration: Duration,
}

/// The open model's request rate over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    stages: Arc<[Stage]>,
    /// The rate after the last stage, held to the end of the run.
    hold_per_sec: f64,
    /// Each stage's start (ns) and the requests due before it, plus one entry for the end.
    starts_ns: Arc<[f64]>,
    before: Arc<[f64]>,
}

/// A rate that cannot be used, with what to write instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid rate {text:?}: {reason}; write e.g. 20000, 1000..20000/60s, 1000/10s,5000/30s or 1000+1000/10s..10000")]
pub struct RateError {
    /// The rate as given.
    pub text: String,
    /// What is wrong.
    pub reason: String,
}

impl Rate {
    /// `per_sec` requests per second, for the whole run.
    pub fn constant(per_sec: f64) -> Rate {
        Rate::new(Vec::new(), per_sec)
    }

    /// A schedule of stages, then `hold_per_sec` to the end of the run.
    pub fn new(stages: Vec<Stage>, hold_per_sec: f64) -> Rate {
        let mut starts = Vec::with_capacity(stages.len() + 1);
        let mut before = Vec::with_capacity(stages.len() + 1);
        let (mut t, mut n) = (0.0, 0.0);
        for s in &stages {
            starts.push(t);
            before.push(n);
            let secs = s.duration.as_secs_f64();
            t += secs * 1e9;
            n += (s.from_per_sec + s.to_per_sec) / 2.0 * secs;
        }
        starts.push(t);
        before.push(n);
        Rate {
            stages: stages.into(),
            hold_per_sec,
            starts_ns: starts.into(),
            before: before.into(),
        }
    }

    /// Parses `-R`: `20000` (constant); `1000..20000/60s` (a linear ramp); stages
    /// `1000/10s,5000/30s,5000/60s`, each ramping to its rate by its end, from 0 or from a
    /// bare rate given first (`500,1000/10s`); steps `1000+1000/10s..10000`, each rate held
    /// for the duration. After the last stage its rate is held.
    pub fn parse(text: &str) -> Result<Rate, RateError> {
        let bad = |reason: String| RateError {
            text: text.to_string(),
            reason,
        };
        let t = text.trim();
        let number = |s: &str| -> Result<f64, RateError> {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| bad(format!("{s:?} is not a number of requests per second")))?;
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{s:?} must be a finite number, 0 or more")));
            }
            Ok(v)
        };
        let duration = |s: &str| parse_duration(s.trim()).map_err(bad);
        let rate = if let Some((start, rest)) = t.split_once('+') {
            // Steps: A+S/D..B
            let (step_dur, last) = rest
                .split_once("..")
                .ok_or_else(|| bad("steps need an end, as in 1000+1000/10s..10000".into()))?;
            let (step, dur) = step_dur
                .split_once('/')
                .ok_or_else(|| bad("steps need a duration, as in +1000/10s".into()))?;
            let (start, step, dur, last) =
                (number(start)?, number(step)?, duration(dur)?, number(last)?);
            if step <= 0.0 || last < start {
                return Err(bad(
                    "the step must be positive and the end at least the start".into(),
                ));
            }
            // In floating point first: a huge end must not overflow the count (found by
            // fuzzing: `1++2/4..1e49`).
            let steps = ((last - start) / step).floor() + 1.0;
            if steps > 10_000.0 {
                return Err(bad(format!("{steps:.0} steps: at most 10,000")));
            }
            let count = steps as u64;
            let stages = (0..count)
                .map(|i| {
                    let r = start + step * i as f64;
                    Stage {
                        from_per_sec: r,
                        to_per_sec: r,
                        duration: dur,
                    }
                })
                .collect::<Vec<_>>();
            let hold = stages.last().map_or(start, |s| s.to_per_sec);
            Rate::new(stages, hold)
        } else if let Some((from, rest)) = t.split_once("..") {
            // A linear ramp: A..B/D
            let (to, dur) = rest
                .split_once('/')
                .ok_or_else(|| bad("a ramp needs a duration, as in 1000..20000/60s".into()))?;
            let (from, to) = (number(from)?, number(to)?);
            Rate::new(
                vec![Stage {
                    from_per_sec: from,
                    to_per_sec: to,
                    duration: duration(dur)?,
                }],
                to,
            )
        } else if t.contains('/') || t.contains(',') {
            // Stages: [A,]R/D,R/D...
            let mut stages = Vec::new();
            let mut current = 0.0;
            for (i, item) in t.split(',').enumerate() {
                match item.split_once('/') {
                    Some((r, d)) => {
                        let r = number(r)?;
                        stages.push(Stage {
                            from_per_sec: current,
                            to_per_sec: r,
                            duration: duration(d)?,
                        });
                        current = r;
                    }
                    None if i == 0 => current = number(item)?,
                    None => {
                        return Err(bad(format!(
                            "{item:?} has no duration: each stage after the first is RATE/DURATION"
                        )))
                    }
                }
            }
            Rate::new(stages, current)
        } else {
            Rate::constant(number(t)?)
        };
        if rate.peak_per_sec() <= 0.0 {
            return Err(bad("it never sends a request".into()));
        }
        if rate.peak_per_sec() > 1e9 {
            return Err(bad("more than 10⁹ requests per second".into()));
        }
        Ok(rate)
    }

    /// True for a rate that never changes.
    pub fn is_constant(&self) -> bool {
        self.stages.is_empty()
    }

    /// The constant rate, for a rate that never changes.
    pub fn constant_per_sec(&self) -> Option<f64> {
        self.is_constant().then_some(self.hold_per_sec)
    }

    /// How long the stages last; `None` for a constant rate.
    pub fn stages_duration(&self) -> Option<Duration> {
        (!self.is_constant()).then(|| self.stages.iter().map(|s| s.duration).sum::<Duration>())
    }

    /// The highest rate anywhere in the schedule.
    pub fn peak_per_sec(&self) -> f64 {
        self.stages
            .iter()
            .flat_map(|s| [s.from_per_sec, s.to_per_sec])
            .fold(self.hold_per_sec, f64::max)
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The rate after the stages.
    pub fn hold_per_sec(&self) -> f64 {
        self.hold_per_sec
    }

    /// The rate at `t_ns` from the start.
    pub fn at(&self, t_ns: f64) -> f64 {
        let s = self.stage_at_time(t_ns);
        match self.stages.get(s) {
            Some(st) => {
                let secs = st.duration.as_secs_f64();
                let tau = (t_ns - self.starts_ns[s]) / 1e9;
                st.from_per_sec + (st.to_per_sec - st.from_per_sec) * tau / secs
            }
            None => self.hold_per_sec,
        }
    }

    /// Requests due by `t_ns` (real-valued): the integral of the rate from 0 to `t_ns`.
    pub fn due_by(&self, t_ns: f64) -> f64 {
        let s = self.stage_at_time(t_ns);
        let tau = (t_ns - self.starts_ns[s]) / 1e9;
        match self.stages.get(s) {
            Some(st) => {
                let slope = (st.to_per_sec - st.from_per_sec) / st.duration.as_secs_f64();
                self.before[s] + st.from_per_sec * tau + slope * tau * tau / 2.0
            }
            None => self.before[s] + self.hold_per_sec * tau,
        }
    }

    /// When request `j` (0-based, of all workers) falls due, in ns from the start; `None`
    /// if it never does (the schedule ends at rate 0 before it).
    pub fn due_ns(&self, j: f64) -> Option<f64> {
        // The last stage (or the hold) whose first request is at or before j.
        let s = self.before.partition_point(|&b| b <= j).saturating_sub(1);
        let left = j - self.before[s];
        match self.stages.get(s) {
            Some(st) => {
                let secs = st.duration.as_secs_f64();
                let (a, slope) = (st.from_per_sec, (st.to_per_sec - st.from_per_sec) / secs);
                // Solves a·τ + slope·τ²/2 = left, in the form that stays exact as slope → 0.
                if left <= 0.0 {
                    return Some(self.starts_ns[s]);
                }
                let disc = (a * a + 2.0 * slope * left).max(0.0);
                let denom = a + disc.sqrt();
                if denom <= 0.0 {
                    return None;
                }
                let tau = (2.0 * left / denom).min(secs);
                Some(self.starts_ns[s] + tau * 1e9)
            }
            None if self.hold_per_sec > 0.0 => {
                Some(self.starts_ns[s] + left / self.hold_per_sec * 1e9)
            }
            None => None,
        }
    }

    fn stage_at_time(&self, t_ns: f64) -> usize {
        self.starts_ns
            .partition_point(|&s| s <= t_ns)
            .saturating_sub(1)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = |v: f64| format!("{v}");
        if self.stages.is_empty() {
            return write!(f, "{} req/s", r(self.hold_per_sec));
        }
        let parts: Vec<String> = self
            .stages
            .iter()
            .map(|s| {
                if s.from_per_sec == s.to_per_sec {
                    format!("{} for {:?}", r(s.to_per_sec), s.duration)
                } else {
                    format!(
                        "{}→{} over {:?}",
                        r(s.from_per_sec),
                        r(s.to_per_sec),
                        s.duration
                    )
                }
            })
            .collect();
        write!(
            f,
            "{} req/s, then {}",
            parts.join(", "),
            r(self.hold_per_sec)
        )
    }
}

#[cfg(test)]
mod tests;
