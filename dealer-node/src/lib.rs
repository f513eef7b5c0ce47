#![warn(missing_docs)]
//! The game-claw dealer node, the tokio driver of `claw-engine` (the
//! GameEngine that deals one hand of any registered game with commitments,
//! sealed cards and a signed transcript): [`room`] tasks that run the room and player state machines, timers and
//! chips; a WebSocket [`server`] with the 4-step handshake, limits and rate
//! limiting; health and metrics over [`http`]; and the `claw-dealer` binary.
//!
//! Start a node in-process with [`DealerNode::start`]; the returned
//! [`NodeHandle`] gives the bound addresses and the invite URLs.

pub mod admin;
pub mod ai;
pub mod archive;
pub mod audit_log;
pub mod chips;
pub mod config;
pub mod conn;
pub mod fdlimit;
pub mod http;
pub mod lock;
pub mod matchmaking;
pub mod metrics;
pub mod node;
pub mod pending;
pub mod registry;
pub mod room;
pub mod sanctions;
pub mod server;
pub mod tls;
#[cfg(feature = "web")]
pub mod web;

pub use config::{ConfigError, Limits, NodeConfig, RoomConfig, RoomsFile};
pub use node::{DealerNode, NodeError, NodeHandle};
