//! The `syncguard` command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use syncguard_analyzer::Overrides;
use syncguard_analyzer::model::{CannPolicy, Target};
use syncguard_analyzer::smt::SmtOptions;

mod commands;

/// Static verifier and linter for Ascend (CANN) and CUDA synchronization programs.
#[derive(Parser, Debug)]
#[command(
    name = "syncguard",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status: 0 when no error-severity finding is reported (--deny warnings counts warnings, \
                  --exit-zero always 0); 1 when one is (verify-then-run: when verification or the run finds an \
                  error); 2 for a usage error, an input or configuration that cannot be read, or an internal error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check `.sync` programs, `.jsonl` call traces, C/C++ and Python sources
    /// (directories are searched for all of them; the sources of one run are read together; `-` reads
    /// standard input).
    Check {
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        analysis: AnalysisArgs,
        #[command(flatten)]
        sources: Box<SourceArgs>,
        #[command(flatten)]
        lint: LintArgs,
    },
    /// Verify a program and, only if it has no error, execute it: on the simulator
    /// (default; real threads, memory and blocking, no device), the ACL/HCCL runtime or
    /// CUDA. Exit 1 without a single device call when verification finds an error.
    VerifyThenRun {
        #[arg(value_name = "FILE")]
        path: PathBuf,
        /// Where the program runs.
        #[arg(long, value_enum, default_value_t = BackendChoice::Sim)]
        backend: BackendChoice,
        /// The simulator's timing seed: each seed exercises another interleaving.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write what was executed as a JSONL call trace (`syncguard check` reads it).
        #[arg(long, value_name = "TRACE")]
        trace_out: Option<PathBuf>,
        /// A parameter's value for the run (`--param N=4`); others take their smallest.
        #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
        params: Vec<(String, i64)>,
        /// Memory the simulator may hold for buffer contents, in MiB; a run that needs
        /// more stops with an error (exit 2). Unwritten bytes and ranges a kernel fills
        /// whole cost nothing.
        #[arg(long, value_name = "MIB", default_value_t = syncguard_runtime_bridge::sim::DEFAULT_MEMORY_LIMIT >> 20, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
        sim_memory: u64,
        #[command(flatten)]
        analysis: AnalysisArgs,
    },
    /// List the rules, or print one rule's documentation (`syncguard rules SG003`).
    Rules {
        /// A rule code (`SG003`) or name (`unknown-name`).
        code: Option<String>,
    },
    /// Print a JSONL call trace as the equivalent `.sync` program (`-` reads standard
    /// input; one file, not a folder). Malformed lines are reported on stderr and left out.
    /// For a C/C++ or Python source: each entry point's extracted program, with source lines.
    Convert {
        #[arg(value_name = "TRACE|SOURCE")]
        path: PathBuf,
    },
    /// Run a program and write the ACL, HCCL and CUDA calls of each of its processes as
    /// JSONL call traces (`DIR/<host>-<pid>.jsonl`, merged into `DIR/run-RUN.jsonl`;
    /// `syncguard check DIR` checks one run's files together). The exit status is the
    /// program's. See docs/TRACE.md.
    Trace {
        /// The folder the traces are written to (created if missing).
        #[arg(long, value_name = "DIR", default_value = "syncguard-trace")]
        out: PathBuf,
        /// The program and its arguments, after `--`.
        #[arg(required = true, last = true, value_name = "CMD")]
        command: Vec<std::ffi::OsString>,
    },
    /// Reduce call traces to their skeletons, where they were captured: the per-rank
    /// pass of a check past one machine (docs/SCALE.md), one `.sgskel` file per trace
    /// file in OUT_DIR (which all nodes may share). `syncguard check-skeletons` checks them.
    Skeleton {
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        /// The folder the skeletons are written to (created if missing).
        #[arg(long, short, value_name = "OUT_DIR")]
        output: PathBuf,
        /// The configuration file whose exclusions apply (by default found as `check`
        /// finds it).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Read no configuration file.
        #[arg(long, conflicts_with = "config")]
        isolated: bool,
    },
    /// Check the skeletons `syncguard skeleton` wrote, together (the global pass,
    /// docs/SCALE.md): the findings `syncguard check` reports on the traces, placed on
    /// their lines.
    CheckSkeletons {
        #[arg(required = true, value_name = "DIR|FILE")]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        analysis: AnalysisArgs,
        #[command(flatten)]
        lint: LintArgs,
    },
    /// Print a shell completion script (`syncguard completions bash > /etc/bash_completion.d/syncguard`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff: `syncguard man > syncguard.1; man ./syncguard.1`).
    Man,
    /// Run the language server on standard input and output (for editors: see
    /// editors/vscode and editors/nvim).
    Lsp {
        /// Accepted for clients that pass it; standard input and output is the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
        /// The configuration file for every file checked (by default each file's
        /// `syncguard.toml`, or `pyproject.toml` with `[tool.syncguard]`, in its folder
        /// or above).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Read no configuration file.
        #[arg(long, conflicts_with = "config")]
        isolated: bool,
    },
    /// Rewrite `.sync` files in canonical form (comments are kept); `-` prints the
    /// formatted standard input.
    Fmt {
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        /// Change nothing; exit 1 if any file is not formatted.
        #[arg(long)]
        check: bool,
    },
}

/// How C/C++ and Python sources are read (docs/CPP.md, docs/PYTHON.md).
#[derive(Args, Debug)]
struct SourceArgs {
    /// Check only this function as an entry point; repeatable. C/C++: `Run`,
    /// `Ctx::Run`; Python: `main`, `Runner.execute`, `module:Runner.execute`.
    #[arg(long = "entry", value_name = "FUNCTION")]
    entries: Vec<String>,
    /// C/C++: the rank counts SPMD code is checked for (`4`, `2..=8`), over the files'
    /// `// syncguard: ranks` comments and the default 2..=8.
    #[arg(long, value_name = "N|LO..=HI", value_parser = parse_ranks)]
    ranks: Option<RankCounts>,
    /// C/C++: a preprocessor definition deciding `#if`/`#ifdef` (`-D NAME` is
    /// `NAME=1`); repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define)]
    defines: Vec<(String, String)>,
    /// C/C++: calls may fail; branches on their return codes are checked both ways
    /// (by default every call succeeds and error branches are not taken).
    #[arg(long)]
    error_paths: bool,
    /// C/C++: the compilation database (`compile_commands.json`, or the folder holding
    /// it) whose `-D`/`-U` flags decide each file's `#if`/`#ifdef`. By default one is
    /// looked for next to the checked paths, in their parent folders and their `build/`.
    #[arg(long, value_name = "FILE|DIR")]
    compile_commands: Option<PathBuf>,
    /// Names of parameters, globals or members that may be one object (`src,dst`: an
    /// in-place call passes one buffer as both); repeatable, one group each. Objects the
    /// code receives are distinct otherwise.
    #[arg(long = "alias", value_name = "NAME,NAME,...", value_parser = parse_alias_group)]
    aliases: Vec<Vec<String>>,
}

/// `src,dst`: at least two names.
fn parse_alias_group(text: &str) -> Result<Vec<String>, String> {
    syncguard_project::config::parse_alias_group(text)
}

impl SourceArgs {
    /// No source options: for commands that read no sources.
    fn none() -> Self {
        SourceArgs {
            entries: Vec::new(),
            ranks: None,
            defines: Vec::new(),
            error_paths: false,
            compile_commands: None,
            aliases: Vec::new(),
        }
    }

    fn options(&self) -> Result<syncguard_project::sources::SourceOptions, String> {
        let compile_db = match &self.compile_commands {
            Some(path) => Some(std::sync::Arc::new(syncguard_project::sources::load_compile_db(path)?)),
            None => None,
        };
        Ok(syncguard_project::sources::SourceOptions {
            cpp: syncguard_cpp::Options {
                entries: self.entries.clone(),
                ranks: self.ranks.clone().map(|counts| counts.0),
                defines: self.defines.clone(),
                error_paths: self.error_paths,
                compile_db,
                aliases: self.aliases.clone(),
            },
            python: syncguard_python::Options {
                entries: self.entries.clone(),
                aliases: self.aliases.clone(),
            },
        })
    }
}

/// The rank counts `--ranks` names (one value, not a list of arguments).
#[derive(Clone, Debug)]
struct RankCounts(Vec<i64>);

fn parse_ranks(text: &str) -> Result<RankCounts, String> {
    syncguard_project::config::parse_ranks(text).map(RankCounts)
}

fn parse_define(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').unwrap_or((text, "1"));
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !value.contains(['\n', ';', '{', '}']);
    valid
        .then(|| (name.to_string(), value.to_string()))
        .ok_or_else(|| "expected NAME or NAME=VALUE, such as -D USE_EARLY_START or -D TILE=256".into())
}

/// How files are analyzed and findings shown (`check` and `verify-then-run`).
#[derive(Args, Debug)]
struct AnalysisArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// When to colour text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Target product (device limits, whether SetNextTaskStart has an effect);
    /// overrides `target` in the files.
    #[arg(long, value_parser = parse_target)]
    target: Option<Target>,
    /// Which CANN documentation decides what aclrtResetEvent accepts; overrides
    /// `cann` in the files.
    #[arg(long, value_enum)]
    cann: Option<Cann>,
    /// Treat warnings as errors for the exit status (`--deny warnings`).
    #[arg(long, value_enum)]
    deny: Option<Deny>,
    /// Time limit of each z3 query (`2s`, `500ms`; 1 ms to 24 h); an unanswered
    /// query is reported as SG004.
    #[arg(long, value_name = "TIME", default_value = "2s", value_parser = parse_duration)]
    smt_timeout: Duration,
    /// With each proved property, list the calls and declarations the proof rests on.
    #[arg(long)]
    explain: bool,
    /// Print findings only: no proof lines and no summary.
    #[arg(long, short)]
    quiet: bool,
    /// Print every proof line; by default a file's proofs are left out when it has
    /// findings.
    #[arg(long)]
    show_proofs: bool,
    /// After the findings, how many of each rule were reported.
    #[arg(long)]
    statistics: bool,
    /// Write the report to FILE instead of standard output (html, chrome-trace, dot,
    /// json, sarif). With dot, a directory (existing, or ending in `/`) gets one graph
    /// per finding: DIR/001-SG501.dot, ...
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Open the HTML report (`--format html`) in the browser: $BROWSER, else the
    /// desktop's default. Without --output it is written to a temporary file, whose
    /// path is printed.
    #[arg(long)]
    open: bool,
}

/// Which findings `check` reports, and whether they fail the run.
#[derive(Args, Debug)]
struct LintArgs {
    /// Report only these rules: codes or prefixes (`SG1` is SG100–SG199), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    select: Vec<String>,
    /// Report these rules in addition to `--select`.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    extend_select: Vec<String>,
    /// Do not report these rules (codes or prefixes), whatever selects them.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    ignore: Vec<String>,
    /// Exit 0 whatever is found (2 still means an input could not be read).
    #[arg(long)]
    exit_zero: bool,
    /// Report only findings not recorded in this baseline (`--write-baseline`).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record this run's findings (after suppressions) as the baseline FILE.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// The configuration file (by default `syncguard.toml`, or `pyproject.toml` with
    /// `[tool.syncguard]`, in the first checked path's folder or above).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Read no configuration file.
    #[arg(long, conflicts_with = "config")]
    isolated: bool,
}

impl LintArgs {
    /// The selection: `--select` replaces the file's, `--extend-select` and `--ignore`
    /// add to it.
    fn lint(&self, config: syncguard_project::config::Config) -> Result<commands::check::Lint, String> {
        let select = if self.select.is_empty() {
            config.select.clone()
        } else {
            self.select.clone()
        };
        let selection = syncguard_project::selection::Selection {
            select,
            extend_select: [config.extend_select.clone(), self.extend_select.clone()].concat(),
            ignore: [config.ignore.clone(), self.ignore.clone()].concat(),
        };
        selection.validate()?;
        Ok(commands::check::Lint {
            config: std::sync::Arc::new(config),
            selection,
            baseline: commands::baseline::BaselineArgs {
                compare: self.baseline.clone(),
                write: self.write_baseline.clone(),
            },
            exit_zero: self.exit_zero,
        })
    }
}

impl AnalysisArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            target: self.target,
            cann: self.cann.map(|c| match c {
                Cann::Current => CannPolicy::Current,
                Cann::Legacy => CannPolicy::Legacy,
            }),
            smt: SmtOptions {
                timeout: self.smt_timeout,
                rlimit: None,
                explain: self.explain,
                timelines: self.format.draws_executions(),
            },
        }
    }

    /// Options no parser checks: `--output` needs a format that is one document.
    fn validate(&self) -> Result<(), String> {
        if self.output.is_some() && !self.format.is_document() {
            return Err(
                "--output writes a whole document: use it with --format html, chrome-trace, dot, json or sarif".into(),
            );
        }
        if self.open && self.format != Format::Html {
            return Err("--open opens an HTML report: use it with --format html".into());
        }
        Ok(())
    }

    /// How findings are shown; `title` heads a document format ("syncguard check src/").
    fn report(&self, title: String) -> commands::check::Report {
        commands::check::Report {
            output: self.output.clone(),
            open: self.open,
            title,
            format: self.format,
            color: match self.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            },
            explain: self.explain,
            deny_warnings: self.deny.is_some(),
            quiet: self.quiet,
            show_proofs: self.show_proofs,
            statistics: self.statistics,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// The built-in simulator.
    Sim,
    /// The CANN runtime (libascendcl.so, libhccl.so), on an NPU host.
    Acl,
    /// The CUDA driver (libcuda.so); needs a build with the `cuda` feature.
    Cuda,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Each finding with its source lines, then proofs and a summary.
    Text,
    /// One line per finding: `path:line:col: SG103 [error] message`.
    Concise,
    /// The findings, proofs and summary as one JSON document.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers).
    Sarif,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
    /// One self-contained HTML page (no network access): a summary per file and rule,
    /// and each finding's timeline of streams and threads, with the cycle or race marked.
    Html,
    /// Chrome Trace Event JSON of each finding's execution, for Perfetto or chrome://tracing.
    ChromeTrace,
    /// Graphviz: one graph with each finding's happens-before neighbourhood as a cluster
    /// (`dot -Tsvg`); `-o DIR/` writes a graph per finding.
    Dot,
}

impl Format {
    /// The formats that draw executions: the analysis keeps each finding's window for them.
    pub fn draws_executions(self) -> bool {
        matches!(self, Format::Html | Format::ChromeTrace | Format::Dot)
    }

    /// The formats written as one document, which `--output` can take.
    fn is_document(self) -> bool {
        self.draws_executions() || matches!(self, Format::Json | Format::Sarif)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Cann {
    Current,
    Legacy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    Warnings,
}

/// The longest `--smt-timeout` accepted: a query that z3 has not decided in a day will
/// not be decided, and the deadline must stay representable.
const MAX_SMT_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// `2s`, `500ms`, or a number of seconds (`1.5`): at least a millisecond, at most
/// [`MAX_SMT_TIMEOUT`].
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 1e-3)
    } else {
        (text.strip_suffix('s').unwrap_or(text), 1.0)
    };
    let duration = number
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(|value| Duration::try_from_secs_f64(value * scale).ok())
        .filter(|duration| (Duration::from_millis(1)..=MAX_SMT_TIMEOUT).contains(duration));
    duration.ok_or_else(|| "expected a time from `1ms` to `24h` (`86400s`), such as `2s` or `500ms`".into())
}

/// `N=4`.
fn parse_param(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text.split_once('=').ok_or("expected NAME=VALUE, such as N=4")?;
    let value = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not an integer"))?;
    Ok((name.trim().to_string(), value))
}

fn parse_target(text: &str) -> Result<Target, String> {
    syncguard_project::config::parse_target(text)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Exit status per the contract: 0 clean, 1 findings, 2 usage, I/O or internal error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Clean = 0,
    Findings = 1,
    Failure = 2,
}

/// `check`'s settings: the configuration file's, overridden by the command line.
fn configured(
    paths: &[PathBuf],
    analysis: &AnalysisArgs,
    sources: &SourceArgs,
    lint: &LintArgs,
) -> Result<
    (
        Overrides,
        syncguard_project::sources::SourceOptions,
        commands::check::Lint,
    ),
    String,
> {
    let config = syncguard_project::config::load(
        lint.config.as_deref(),
        lint.isolated,
        paths.first().map(PathBuf::as_path),
    )?;
    let mut overrides = analysis.overrides();
    let mut options = sources.options()?;
    config.settle(&mut overrides, &mut options)?;
    Ok((overrides, options, lint.lint(config)?))
}

/// "syncguard check examples/ src/": what a report document says it is of.
fn command_title(command: &str, paths: &[PathBuf]) -> String {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!("syncguard {command} {}", paths.join(" "))
}

/// The command line, with the version of the z3 library it runs on (`--version`).
fn command() -> clap::Command {
    let version = format!(
        "{} (z3 {})",
        env!("CARGO_PKG_VERSION"),
        syncguard_analyzer::smt::z3_version()
    );
    Cli::command().version(version)
}

fn main() -> ExitCode {
    let cli = match command()
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            // `--help` and `--version` are successes; everything else is a usage error.
            return ExitCode::from(if err.use_stderr() { Outcome::Failure as u8 } else { 0 });
        }
    };
    if let Command::Trace { out, command } = &cli.command {
        return commands::trace::run(out, command);
    }
    syncguard_analyzer::pool::configure(None);
    let outcome = match cli.command {
        Command::Check {
            paths,
            analysis,
            sources,
            lint,
        } => match analysis
            .validate()
            .and_then(|()| configured(&paths, &analysis, &sources, &lint))
        {
            Ok((overrides, options, lint)) => {
                let report = analysis.report(command_title("check", &paths));
                commands::check::run(&paths, &overrides, &report, &options, &lint)
            }
            Err(err) => {
                eprintln!("syncguard: {err}");
                Outcome::Failure
            }
        },
        Command::VerifyThenRun {
            path,
            backend,
            seed,
            trace_out,
            params,
            sim_memory,
            analysis,
        } => match analysis.validate() {
            Ok(()) => commands::verify_then_run::run(&commands::verify_then_run::Request {
                report: analysis.report(command_title("verify-then-run", std::slice::from_ref(&path))),
                path,
                backend,
                seed,
                trace_out,
                params,
                sim_memory_limit: sim_memory << 20,
                overrides: analysis.overrides(),
            }),
            Err(err) => {
                eprintln!("syncguard: {err}");
                Outcome::Failure
            }
        },
        Command::Skeleton {
            paths,
            output,
            config,
            isolated,
        } => match syncguard_project::config::load(config.as_deref(), isolated, paths.first().map(PathBuf::as_path)) {
            Ok(config) => commands::skeleton::run(&paths, &output, &config),
            Err(err) => {
                eprintln!("syncguard: {err}");
                Outcome::Failure
            }
        },
        Command::CheckSkeletons { paths, analysis, lint } => match analysis
            .validate()
            .and_then(|()| configured(&paths, &analysis, &SourceArgs::none(), &lint))
        {
            Ok((overrides, _, lint)) => {
                let report = analysis.report(command_title("check-skeletons", &paths));
                commands::skeleton::check(&paths, &overrides, &report, &lint)
            }
            Err(err) => {
                eprintln!("syncguard: {err}");
                Outcome::Failure
            }
        },
        Command::Rules { code } => commands::rules::run(code.as_deref()),
        Command::Fmt { paths, check } => commands::fmt::run(&paths, check),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut command(), "syncguard", &mut std::io::stdout());
            Outcome::Clean
        }
        Command::Lsp { config, isolated, .. } => {
            match syncguard_lsp::serve_stdio(syncguard_lsp::ServerOptions { config, isolated }) {
                Ok(()) => Outcome::Clean,
                Err(err) => {
                    eprintln!("syncguard lsp: {err}");
                    Outcome::Failure
                }
            }
        }
        Command::Man => match clap_mangen::Man::new(command()).render(&mut std::io::stdout()) {
            Ok(()) => Outcome::Clean,
            Err(err) => {
                eprintln!("syncguard: {err}");
                Outcome::Failure
            }
        },
        Command::Convert { path } => commands::convert::run(&path),
        Command::Trace { .. } => unreachable!("handled above: its exit status is the program's"),
    };
    ExitCode::from(outcome as u8)
}
