//! What makes a shell command impossible to vet with argv rules. Any hazard means no rule may auto-allow the command
//! and no "always" rule is proposed for it; the first one found becomes the reason shown to the user.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// `$(...)`: runs a command whose output becomes words.
    CommandSubstitution,
    /// `` `...` ``, the old form of `$(...)`.
    Backticks,
    /// `<(...)` or `>(...)`.
    ProcessSubstitution,
    /// `$((...))`, `((...))`, `for ((...))`: bash evaluates variable values as expressions, which can run commands.
    Arithmetic,
    /// `( ... )` at the start of a command.
    Subshell,
    /// `{ ...; }`.
    Group,
    /// `<<EOF`: the body is not parsed.
    HereDoc,
    /// Output redirected to a file (not /dev/null and friends).
    Redirect(String),
    /// A builtin that runs text as code or changes how later commands resolve (`eval`, `source`, `hash`, `trap` ...).
    Builtin(String),
    /// A keyword whose syntax the gate does not follow (`case`, `select`, `function`, `coproc`).
    Keyword(String),
    /// `name() ...`: a function can shadow any program.
    FunctionDef,
    /// A variable assignment that can change what programs run or load (PATH, LD_PRELOAD, GIT_PAGER ...).
    Assignment(String),
    /// `sudo`, `doas`, `su` ...: never covered by a rule.
    Privilege(String),
    /// The program, or a word that decides where the program starts, is only known at run time.
    DynamicProgram,
    /// An option that makes an otherwise vetted program run other programs or write files (`find -exec`).
    Option { program: String, option: String },
    /// Unbalanced quotes or brackets, or an operator with nothing after it.
    Syntax(&'static str),
    /// Nesting deeper than the parser follows.
    TooDeep,
}

impl Hazard {
    /// One short line saying why the command cannot be auto-allowed.
    pub fn reason(&self) -> String {
        match self {
            Hazard::Privilege(program) => format!("command runs `{program}`, which rules never allow"),
            Hazard::Syntax(what) => format!("command has {what}, so it cannot be analysed"),
            Hazard::TooDeep => "command is nested too deeply to analyse".to_string(),
            other => format!("command {other}, which rules cannot vet"),
        }
    }
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hazard::CommandSubstitution => f.write_str("uses $(...)"),
            Hazard::Backticks => f.write_str("uses `...`"),
            Hazard::ProcessSubstitution => f.write_str("uses <(...)"),
            Hazard::Arithmetic => f.write_str("uses $((...))"),
            Hazard::Subshell => f.write_str("uses a ( ... ) subshell"),
            Hazard::Group => f.write_str("uses a { ...; } group"),
            Hazard::HereDoc => f.write_str("uses a here-document"),
            Hazard::Redirect(target) => write!(f, "writes to a file (> {target})"),
            Hazard::Builtin(name) => write!(f, "uses `{name}`"),
            Hazard::Keyword(name) => write!(f, "uses `{name}`"),
            Hazard::FunctionDef => f.write_str("defines a shell function"),
            Hazard::Assignment(name) => write!(f, "sets {name}"),
            Hazard::Privilege(program) => write!(f, "runs `{program}`"),
            Hazard::DynamicProgram => f.write_str("has a program or wrapper argument known only at run time"),
            Hazard::Option { program, option } => write!(f, "uses `{program} {option}`"),
            Hazard::Syntax(what) => f.write_str(what),
            Hazard::TooDeep => f.write_str("is nested too deeply"),
        }
    }
}

/// Adds `hazard` unless it is already listed (the same construct often appears many times in one command).
pub fn push(hazards: &mut Vec<Hazard>, hazard: Hazard) {
    if !hazards.contains(&hazard) {
        hazards.push(hazard);
    }
}
