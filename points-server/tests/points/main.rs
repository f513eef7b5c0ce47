//! The points server's integration tests in one binary (one link instead of
//! one per file); each former test file is the module of the same name.

// First: its `on_both_backends!` is used by the modules below.
#[macro_use]
mod common;

mod admin_cli;
mod api;
mod crash;
mod shards;
