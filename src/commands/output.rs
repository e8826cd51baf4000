//! Writing to standard output without panicking when the reader goes away
//! (`syncguard check ... | head`): the command still finishes and returns its status.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static READER_GONE: AtomicBool = AtomicBool::new(false);

/// Print `text` to standard output. After a broken pipe nothing more is written; any
/// other write error is fatal (exit 2).
pub fn print(text: &str) {
    if READER_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        if err.kind() == ErrorKind::BrokenPipe {
            READER_GONE.store(true, Ordering::Relaxed);
        } else {
            eprintln!("syncguard: cannot write output: {err}");
            std::process::exit(crate::Outcome::Failure as i32);
        }
    }
}

/// [`print`] followed by a newline.
pub fn println(text: &str) {
    print(&format!("{text}\n"));
}
