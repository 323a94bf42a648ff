//! wrench-tools-fs
