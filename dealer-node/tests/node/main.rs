//! Dealer node tests over real sockets on 127.0.0.1.

mod alerts;
mod attacks;
mod audit_start;
mod common;
mod dos;
mod games;
mod grants;
mod http_port;
mod lifecycle;
mod live_feed;
mod quick_match;
mod sanctions;
