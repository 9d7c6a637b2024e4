//! The macros' diagnostics and accepted shapes, as trybuild cases: one mistake per `fail/` file,
//! its expected compiler output committed beside it; every accepted shape in `pass/`.
//! `TRYBUILD=overwrite` rewrites the `.stderr` files; review the diff.
//!
//! Compiler output changes between toolchains, so the cases run on the toolchain these machines
//! have (1.95 stable) and are skipped elsewhere.

#[test]
#[rustversion::attr(not(stable(1.95)), ignore)]
fn ui() {
    generate_skill_fixtures();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("fail/*.rs");
    cases.pass("pass/*.rs");
}

/// The `skills!` cases over the limits need directories too big to commit: 513 files, and 16 MiB
/// and a byte (a sparse file). Written under `fail/skills/generated/` (ignored by git).
fn generate_skill_fixtures() {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fail/skills/generated");
    let manifest = |name: &str| format!("---\nname: {name}\ndescription: Over a limit.\n---\n");
    let many = base.join("too-many/many");
    std::fs::create_dir_all(&many).unwrap();
    std::fs::write(many.join("SKILL.md"), manifest("many")).unwrap();
    for i in 0..512 {
        std::fs::write(many.join(format!("file-{i:03}.txt")), "x").unwrap();
    }
    let big = base.join("too-big/big");
    std::fs::create_dir_all(&big).unwrap();
    std::fs::write(big.join("SKILL.md"), manifest("big")).unwrap();
    let file = std::fs::File::create(big.join("data.bin")).unwrap();
    file.set_len(16 * 1024 * 1024 + 1).unwrap();
}
