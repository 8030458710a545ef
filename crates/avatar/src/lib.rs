//! The avatar service (work in progress).
