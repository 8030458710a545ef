//! The request table: every request shape of a run, encoded once, and how each request
//! picks one.

use crate::template::{Rng, Template};
use crate::{RequestSpec, Target, TargetError};

/// How each request picks its shape from the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// In table order, each worker starting at its own offset.
    #[default]
    RoundRobin,
    /// Uniformly at random, from the run's seeded generator.
    Random,
}

impl Selection {
    /// The name used by `--select` and the JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            Selection::RoundRobin => "round-robin",
            Selection::Random => "random",
        }
    }
}

/// One request shape, encoded once.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub template: Template,
    /// HEAD: its responses carry no body, whatever their headers say.
    pub head: bool,
}

/// Every request shape of a run, and the rule that picks one per request.
#[derive(Debug, Clone)]
pub(crate) struct RequestTable {
    pub shapes: Vec<Shape>,
    pub selection: Selection,
    /// The most bytes one encoded request can take.
    pub max_len: usize,
    /// Under HTTP/2: each shape's header block and body, in the same order; else empty.
    pub h2: Vec<crate::h2::request::RequestShape>,
    /// Under HTTP/2: the shapes' fixed fields, indexed per connection.
    pub h2_fields: crate::h2::encoder::Fields,
    /// Under HTTP/2: the longest value with random parts, for the scratch buffer.
    pub h2_max_value: usize,
    /// Under HTTP/3: each shape's request stream, its HEADERS frame and any DATA frame,
    /// encoded once ([`crate::h3::requests`]); else empty.
    pub h3: Vec<Vec<u8>>,
}

impl RequestTable {
    /// Encodes every request for `target`; `close` asks the server to close after each.
    /// With `http2`, each is also encoded as an HTTP/2 header block and body.
    pub fn new(
        target: &Target,
        requests: &[RequestSpec],
        selection: Selection,
        close: bool,
        http2: bool,
    ) -> Result<Self, TargetError> {
        let shapes = requests
            .iter()
            .map(|r| {
                Ok(Shape {
                    template: r.encode(target, close)?,
                    head: r.is_head(),
                })
            })
            .collect::<Result<Vec<_>, TargetError>>()?;
        let mut h2_fields = crate::h2::encoder::Fields::default();
        // Literal paths are indexed too when there are few: a table of thousands of URLs
        // would only churn the server's 4 KB table.
        let index_paths = requests.len() <= 16;
        let h2 = if http2 {
            requests
                .iter()
                .map(|r| {
                    crate::h2::request::RequestShape::new(r, target, &mut h2_fields, index_paths)
                })
                .collect::<Result<Vec<_>, TargetError>>()?
        } else {
            Vec::new()
        };
        let max_len = shapes
            .iter()
            .map(|s| s.template.max_len())
            .chain(
                h2.iter()
                    .map(|s| s.max_headers_frame() + s.max_data_frames()),
            )
            .max()
            .unwrap_or(0);
        let h2_max_value = h2.iter().map(|s| s.max_value()).max().unwrap_or(0);
        Ok(Self {
            shapes,
            selection,
            max_len,
            h2,
            h2_fields,
            h2_max_value,
            h3: Vec::new(),
        })
    }
}

/// A worker's cursor into the table: picks shapes and fills their random parts.
#[derive(Debug)]
pub(crate) struct Picker {
    rng: Rng,
    next: usize,
}

impl Picker {
    pub fn new(seed: u64, worker: usize, shapes: usize) -> Self {
        Self {
            rng: Rng::new(seed, worker),
            // Workers start at different rows so that short runs still spread the table.
            next: worker % shapes.max(1),
        }
    }

    /// Picks the next shape's index.
    #[inline]
    pub fn pick(&mut self, table: &RequestTable) -> usize {
        let n = table.shapes.len();
        if n == 1 {
            return 0;
        }
        match table.selection {
            Selection::RoundRobin => {
                let i = self.next;
                self.next = if i + 1 == n { 0 } else { i + 1 };
                i
            }
            Selection::Random => self.rng.below_inclusive(n as u64 - 1) as usize,
        }
    }

    /// The generator that fills random parts.
    #[inline]
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Appends request `shape` to `out`, its random parts filled.
    #[inline]
    pub fn encode(&mut self, table: &RequestTable, shape: usize, out: &mut Vec<u8>) {
        table.shapes[shape].template.fill(&mut self.rng, out);
    }
}

#[cfg(test)]
mod tests;
