//! The end-to-end tests in one binary (one link instead of one per file);
//! each former test file is the module of the same name.

mod chain;
mod cli;
mod deferred;
mod games;
mod messages;
mod node;
mod people;
