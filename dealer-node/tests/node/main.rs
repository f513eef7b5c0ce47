//! Dealer node tests over real sockets on 127.0.0.1.

mod attacks;
mod common;
mod games;
mod lifecycle;
