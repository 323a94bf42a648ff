//! wrench-tools-state
