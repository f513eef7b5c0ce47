//! Dealer node tests over real sockets on 127.0.0.1.

mod alerts;
mod attacks;
mod common;
mod dos;
mod games;
mod http_port;
mod lifecycle;
mod sanctions;
