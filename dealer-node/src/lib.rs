#![warn(missing_docs)]
//! The game-claw dealer node: a sans-IO [`engine`] that deals one hand of any
//! registered game with commitments, sealed cards and a signed transcript;
//! [`room`] tasks that run the room and player state machines, timers and
//! chips; a WebSocket [`server`] with the 4-step handshake, limits and rate
//! limiting; health and metrics over [`http`]; and the `claw-dealer` binary.
//!
//! Start a node in-process with [`DealerNode::start`]; the returned
//! [`NodeHandle`] gives the bound addresses and the invite URLs.

pub mod archive;
pub mod chips;
pub mod config;
pub mod demo;
pub mod engine;
pub mod http;
pub mod lock;
pub mod metrics;
pub mod node;
pub mod room;
pub mod server;
pub mod testgame;
pub mod tls;

pub use config::{ConfigError, Limits, NodeConfig, RoomConfig, RoomsFile};
pub use engine::{GameSpec, Hand, HandSeat};
pub use node::{DealerNode, NodeError, NodeHandle};
