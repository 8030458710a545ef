//! The shootout crate from outside: what its public API promises to other parts of the
//! project.

mod suite_reference;
