//! Opening a vendor runtime library at run time, and explaining why it could not be.
//!
//! The device runtimes (CANN's ACL/HCCL, the NVIDIA driver) are never linked: syncguard
//! must build and run its simulator on machines without them. A backend opens its
//! libraries when it is asked for, trying a fixed list of candidate paths; when none
//! opens, the error names every path tried, the loader's own message for each, and how
//! to point syncguard at the install. The CUDA backend shares this module.

#![allow(unsafe_code)]

use std::ffi::OsString;
use std::fmt;

use libloading::Library;

/// One place a library may be found.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// A full path, or a bare soname the dynamic loader resolves.
    pub path: OsString,
    /// Where the path came from, for the error message ("from $ASCEND_HOME_PATH/lib64").
    pub origin: String,
}

impl Candidate {
    /// A bare soname, found through the dynamic loader's search path.
    pub fn soname(name: &str) -> Self {
        Candidate {
            path: name.into(),
            origin: "on the dynamic loader's search path (LD_LIBRARY_PATH, ldconfig)".into(),
        }
    }
}

/// A candidate that could not be opened, with the loader's reason.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub candidate: Candidate,
    pub error: String,
}

/// An opened library and the path it was opened from.
pub struct Opened {
    pub library: Library,
    pub path: String,
}

/// Why a backend's runtime could not be loaded.
#[derive(Clone, Debug)]
pub enum LoadError {
    /// No candidate path of `library` could be opened.
    Library {
        library: &'static str,
        /// What the library is, in words ("the Ascend CANN runtime").
        what: &'static str,
        attempts: Vec<Attempt>,
        /// How to make the library findable.
        hint: &'static str,
    },
    /// The libraries opened, but none exports a function the backend calls: the install
    /// is too old or incomplete.
    Symbol {
        symbol: &'static str,
        /// The libraries searched, with the paths they were opened from.
        searched: Vec<String>,
        error: String,
        hint: &'static str,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Library {
                library,
                what,
                attempts,
                hint,
            } => {
                writeln!(f, "cannot load {library} ({what}). Tried:")?;
                for attempt in attempts {
                    let path = attempt.candidate.path.to_string_lossy();
                    // dlerror() repeats the path; say it once.
                    let reason = attempt
                        .error
                        .strip_prefix(&format!("{path}: "))
                        .unwrap_or(&attempt.error);
                    writeln!(f, "  {path}, {}: {reason}", attempt.candidate.origin)?;
                }
                write!(f, "hint: {hint}")
            }
            LoadError::Symbol {
                symbol,
                searched,
                error,
                hint,
            } => {
                writeln!(f, "the runtime does not export `{symbol}`; searched:")?;
                for path in searched {
                    writeln!(f, "  {path}")?;
                }
                writeln!(f, "loader: {error}")?;
                write!(f, "hint: {hint}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Opens the first candidate that loads.
pub fn open_first(
    library: &'static str,
    what: &'static str,
    candidates: Vec<Candidate>,
    hint: &'static str,
) -> Result<Opened, LoadError> {
    let mut attempts = Vec::new();
    for candidate in candidates {
        // SAFETY: opening runs the library's initialisers. The candidates are the vendor
        // runtimes themselves (ACL, HCCL, the NVIDIA driver), whose initialisers are
        // written to run under dlopen; nothing else is opened here.
        match unsafe { Library::new(&candidate.path) } {
            Ok(library) => {
                let path = candidate.path.to_string_lossy().into_owned();
                return Ok(Opened { library, path });
            }
            Err(error) => attempts.push(Attempt {
                candidate,
                error: error.to_string(),
            }),
        }
    }
    Err(LoadError::Library {
        library,
        what,
        attempts,
        hint,
    })
}

/// Looks `symbol` up in each library in turn and returns the first definition.
///
/// # Safety
/// `T` must be the exact C type of `symbol` (an `unsafe extern "C" fn` matching the
/// documented prototype); calling through a mistyped pointer is undefined behaviour.
pub unsafe fn function<T: Copy>(
    libraries: &[&Opened],
    symbol: &'static str,
    hint: &'static str,
) -> Result<T, LoadError> {
    let mut error = String::from("no library to search");
    for opened in libraries {
        // SAFETY: the caller guarantees `T` is the symbol's C type (see above).
        match unsafe { opened.library.get::<T>(symbol.as_bytes()) } {
            Ok(found) => return Ok(*found),
            Err(e) => error = e.to_string(),
        }
    }
    Err(LoadError::Symbol {
        symbol,
        searched: libraries.iter().map(|opened| opened.path.clone()).collect(),
        error,
        hint,
    })
}

/// Like [`function`], for symbols only some versions export: `None` when none does.
///
/// # Safety
/// As for [`function`].
pub unsafe fn optional_function<T: Copy>(libraries: &[&Opened], symbol: &'static str) -> Option<T> {
    // SAFETY: forwarded from the caller.
    unsafe { function(libraries, symbol, "") }.ok()
}
