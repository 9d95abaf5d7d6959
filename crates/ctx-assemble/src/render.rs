//! render (in progress).
