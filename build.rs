//! Builds the interposer `syncguard trace` preloads into the program it runs.
//!
//! The interposer is C, not a Rust `cdylib`: every function it defines replaces a C
//! library's (ACL, HCCL, CUDA) in a foreign process, is entered from any thread and
//! from inside signal handlers' reach, and must forward its arguments untouched. That is
//! FFI from end to end, which the workspace's `unsafe_code = "forbid"` rightly keeps out
//! of the Rust crates; in C it is a few hundred plain lines with no runtime of its own
//! (a Rust cdylib would also bring its allocator and panic machinery into the traced
//! process). The wrappers are generated from capture/apis.list (capture/spec.rs), and
//! the shared object is embedded in the `syncguard` binary (src/commands/trace.rs), so
//! the binary stays self-contained.

// The tests read fields of the list the generator does not need.
#[allow(dead_code)]
#[path = "capture/spec.rs"]
mod spec;

use std::path::PathBuf;
use std::process::Command;

fn main() {
    for file in [
        "capture/apis.list",
        "capture/spec.rs",
        "capture/runtime.c",
        "capture/runtime.h",
        "build.rs",
    ] {
        println!("cargo::rerun-if-changed={file}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let list = std::fs::read_to_string("capture/apis.list").expect("capture/apis.list is readable");
    let wrappers = spec::parse(&list).unwrap_or_else(|err| panic!("{err}"));
    let generated = out.join("wrappers.c");
    std::fs::write(&generated, spec::generate(&wrappers)).expect("OUT_DIR is writable");
    let library = out.join("libsyncguard_capture.so");
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let mut command: Command = compiler.to_command();
    command
        .args([
            "-shared",
            "-fPIC",
            "-O2",
            "-std=gnu11",
            "-fvisibility=hidden",
            "-ftls-model=initial-exec",
        ])
        .args(["-Wall", "-Wextra", "-Wno-unused-parameter"])
        .arg("-Icapture")
        .arg("-o")
        .arg(&library)
        .arg("capture/runtime.c")
        .arg(&generated)
        .args(["-ldl", "-lpthread"]);
    let status = command
        .status()
        .unwrap_or_else(|err| panic!("cannot run the C compiler: {err}"));
    assert!(
        status.success(),
        "the C compiler failed to build the interposer: {command:?}"
    );
}
