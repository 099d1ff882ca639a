//! The file tools: read_file (streaming, paged, images), write_file (atomic, with a diff) and list_dir
//! (gitignore-aware).
//!
//! Every path goes through the session's `PathPolicy`; every write goes through `atomic_write`. Blocking filesystem
//! work runs on tokio's blocking pool and checks the cancellation token, so an interrupt stops a long read promptly.
//! Nothing here loads a file whole unless it is small (an image under the cap, the old content for a diff).

mod attach;
mod lines;
mod list;
mod read;
mod sniff;
pub(crate) mod write;

pub use attach::{AttachedImage, read_image, read_pasted_image};

use std::sync::Arc;

use serde_json::Value;

use super::{Tool, ToolError};

pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(read::ReadFileTool),
        Arc::new(write::WriteFileTool),
        Arc::new(list::ListDirTool),
    ]
}

/// A required string argument. The registry validated the call already; this only guards against a caller that
/// skipped it, so the error names the argument instead of panicking.
pub(super) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Invalid(format!("missing required string argument '{name}'")))
}

/// An optional string argument; `None` when absent or null.
pub(super) fn opt_str_arg<'a>(args: &'a Value, name: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::Invalid(format!("argument '{name}' must be a string"))),
    }
}

/// An optional non-negative integer argument within `min..=max`, `default` when absent. Integral floats (`5.0`) and
/// numeric strings are accepted, as the registry's cast would.
pub(super) fn int_arg(args: &Value, name: &str, default: u64, min: u64, max: u64) -> Result<u64, ToolError> {
    let value = match args.get(name) {
        None | Some(Value::Null) => return Ok(default),
        Some(v) => v,
    };
    let parsed = match value {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        Some(n) if n < min => Err(ToolError::Invalid(format!(
            "argument '{name}' must be >= {min}, got {n}"
        ))),
        Some(n) => Err(ToolError::Invalid(format!(
            "argument '{name}' must be <= {max}, got {n}"
        ))),
        None => Err(ToolError::Invalid(format!(
            "argument '{name}' must be a non-negative integer, got {value}"
        ))),
    }
}

/// An optional boolean argument, `default` when absent.
pub(super) fn bool_arg(args: &Value, name: &str, default: bool) -> Result<bool, ToolError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ToolError::Invalid(format!(
            "argument '{name}' must be true or false, got {other}"
        ))),
    }
}

pub(super) use super::run_blocking;
pub(super) use tern_text::units::human_size;

/// What the file tools' tests share: a workspace inside a temp dir (so there is an "outside" next to it) and a way to
/// run a tool in it.
#[cfg(test)]
pub(crate) mod testing {
    use super::super::{PathPolicy, Tool, ToolContext, ToolError};
    use serde_json::Value;
    use std::path::PathBuf;
    use tern_protocol::ToolOutput;

    pub(crate) struct Workspace {
        pub tmp: tempfile::TempDir,
        pub root: PathBuf,
        pub ctx: ToolContext,
    }

    impl Workspace {
        /// A file next to the workspace, outside it.
        pub(crate) fn outside(&self, name: &str) -> PathBuf {
            self.tmp.path().join(name)
        }

        pub(crate) fn path(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }

        pub(crate) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
            let p = self.path(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            std::fs::write(&p, bytes).unwrap();
            p
        }

        pub(crate) async fn run(&self, tool: &dyn Tool, args: Value) -> Result<ToolOutput, ToolError> {
            tool.execute(args, &self.ctx).await
        }

        /// Runs a call expected to fail and returns its message.
        pub(crate) async fn fail(&self, tool: &dyn Tool, args: Value) -> String {
            match tool.execute(args.clone(), &self.ctx).await {
                Ok(out) => panic!("{} {args} should fail, got: {}", tool.name(), out.text),
                Err(e) => e.to_string(),
            }
        }
    }

    pub(crate) fn workspace() -> Workspace {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        let policy = PathPolicy::new(tmp.path().join("ws")).unwrap();
        let root = policy.root().to_path_buf();
        Workspace {
            tmp,
            root,
            ctx: ToolContext::new(policy),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_arg_defaults_bounds_and_strings() {
        let args = json!({"a": 5, "b": "7", "c": 0, "d": -1, "e": 2.0, "f": "x", "g": null});
        assert_eq!(int_arg(&args, "a", 1, 1, 10).unwrap(), 5);
        assert_eq!(int_arg(&args, "b", 1, 1, 10).unwrap(), 7);
        assert_eq!(int_arg(&args, "missing", 3, 1, 10).unwrap(), 3);
        assert_eq!(int_arg(&args, "g", 3, 1, 10).unwrap(), 3);
        assert_eq!(int_arg(&args, "e", 1, 1, 10).unwrap(), 2);
        assert!(int_arg(&args, "c", 1, 1, 10).unwrap_err().to_string().contains(">= 1"));
        assert!(int_arg(&args, "a", 1, 1, 4).unwrap_err().to_string().contains("<= 4"));
        assert!(int_arg(&args, "d", 1, 0, 10).is_err());
        assert!(int_arg(&args, "f", 1, 0, 10).unwrap_err().to_string().contains("'f'"));
    }

    #[test]
    fn string_and_bool_args() {
        let args = json!({"p": "x", "n": 3, "b": true});
        assert_eq!(str_arg(&args, "p").unwrap(), "x");
        assert!(str_arg(&args, "n").is_err());
        assert!(str_arg(&args, "q").unwrap_err().to_string().contains("'q'"));
        assert_eq!(opt_str_arg(&args, "q").unwrap(), None);
        assert!(opt_str_arg(&args, "n").is_err());
        assert!(bool_arg(&args, "b", false).unwrap());
        assert!(!bool_arg(&args, "q", false).unwrap());
        assert!(bool_arg(&args, "p", false).is_err());
    }

    #[test]
    fn all_file_tools_are_offered() {
        let names: Vec<String> = tools().iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["read_file", "write_file", "list_dir"]);
        for tool in tools() {
            let schema = tool.parameters();
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            for (name, prop) in schema["properties"].as_object().unwrap() {
                assert!(prop["description"].is_string(), "{} {name}", tool.name());
            }
        }
    }
}
