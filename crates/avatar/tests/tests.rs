//! Integration tests: the real `avatar` binary over loopback, real clients, and deployment files.
//!
//! Tests that need a tool (curl, python3, go, chromium, nginx, openssl) fail with the Debian
//! package to install when it is missing; none passes silently without it.

#[path = "suite/common.rs"]
mod common;

#[path = "suite/cli.rs"]
mod cli;
#[path = "suite/clients.rs"]
mod clients;
#[path = "suite/deploy.rs"]
mod deploy;
#[path = "suite/h2.rs"]
mod h2;
#[path = "suite/h3.rs"]
mod h3;
#[path = "suite/h3_hostile.rs"]
mod h3_hostile;
#[path = "suite/lifecycle.rs"]
mod lifecycle;
#[path = "suite/parser_property.rs"]
mod parser_property;
#[path = "suite/randomness.rs"]
mod randomness;
#[path = "suite/raw.rs"]
mod raw;
#[path = "suite/svg.rs"]
mod svg;
