//! The binary's own tests: each edge's wording of the libraries' typed messages.

mod hints;
mod wording;
