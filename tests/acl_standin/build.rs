//! Builds the stand-in CANN runtime (`<root>/lib64/lib{ascendcl,hccl,hcomm}.so`) from
//! the C sources beside this file; shared by the binary's and the bridge's tests.

use std::path::Path;
use std::process::Command;

/// `tests` is the repository's `tests/` folder.
pub fn build_stand_in(tests: &Path, root: &Path) {
    let lib = root.join("lib64");
    std::fs::create_dir_all(&lib).unwrap();
    for (library, source, link) in [
        ("libascendcl.so", "ascendcl.c", &[][..]),
        ("libhccl.so", "hccl.c", &["-lascendcl"][..]),
        ("libhcomm.so", "hcomm.c", &["-lascendcl"][..]),
    ] {
        let status = Command::new("cc")
            .args([
                "-shared",
                "-fPIC",
                "-pthread",
                "-O1",
                "-Wall",
                "-Werror",
                "-Wno-unused-parameter",
            ])
            // Never unloaded: its queues' worker threads outlive a backend's handle.
            .arg("-Wl,-z,nodelete")
            .arg(format!("-I{}", tests.join("capture").display()))
            .arg(format!("-I{}", tests.join("acl_standin").display()))
            .arg("-o")
            .arg(lib.join(library))
            .arg(tests.join("acl_standin").join(source))
            .arg(format!("-L{}", lib.display()))
            .arg("-Wl,-rpath,$ORIGIN")
            .args(link)
            .status()
            .expect("the tests need a C compiler (`cc`)");
        assert!(status.success(), "cc failed on {source}");
    }
}
