//! sanitize (in progress).
