//! attacks
