//! The points server (see the points-server issue).
