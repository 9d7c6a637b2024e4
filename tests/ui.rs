//! The macros' diagnostics and accepted shapes, as trybuild cases: one mistake per `fail/` file,
//! its expected compiler output committed beside it; every accepted shape in `pass/`.
//! `TRYBUILD=overwrite` rewrites the `.stderr` files; review the diff.
//!
//! Compiler output changes between toolchains, so the cases run on the toolchain these machines
//! have (1.95 stable) and are skipped elsewhere.

#[test]
#[rustversion::attr(not(stable(1.95)), ignore)]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
