//! Helpers shared by the test binaries: golden snapshots and spawning the example servers.
