use std::os::unix::fs::symlink;

use serde_json::json;

use super::*;
use crate::fs::testing::{Workspace, workspace};

/// A notebook as Jupyter writes it: one-space indent, sorted keys, trailing newline, nbformat 4.5.
const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "a1b2c3d4",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "e5f6a7b8",
   "metadata": {
    "tags": []
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "3\n"
     ]
    }
   ],
   "source": [
    "x = 1 + 2\n",
    "print(x)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

async fn edit(ws: &Workspace, args: Value) -> ToolOutput {
    ws.run(&NotebookEditTool, args).await.unwrap()
}

fn cells(ws: &Workspace, name: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(ws.path(name)).unwrap()).unwrap();
    doc["cells"].as_array().unwrap().clone()
}

#[tokio::test]
async fn replacing_a_markdown_cell_changes_only_its_source() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let out = edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "# New title\nMore\n\nEnd"}),
    )
    .await;
    assert_eq!(
        out.text,
        "Updated cell 0 in nb.ipynb: replaced the source of this markdown cell."
    );
    let expected = NOTEBOOK.replace(
        "    \"# Title\\n\",\n    \"Some text\"\n",
        "    \"# New title\\n\",\n    \"More\\n\",\n    \"\\n\",\n    \"End\"\n",
    );
    let written = std::fs::read_to_string(ws.path("nb.ipynb")).unwrap();
    assert_eq!(written, expected);
    let ToolDetails::Diffs { diffs } = &out.details else {
        panic!("no diff")
    };
    assert_eq!(
        (diffs[0].path.as_str(), diffs[0].added, diffs[0].removed),
        ("nb.ipynb", 4, 2)
    );
    assert_eq!(diffs[0].new.as_deref(), Some(expected.as_str()));
}

#[tokio::test]
async fn replacing_a_code_cell_clears_its_outputs() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let out = edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "y = 4\n"}),
    )
    .await;
    assert!(out.text.contains("cleared its outputs"), "{}", out.text);
    let cell = &cells(&ws, "nb.ipynb")[1];
    assert_eq!(cell["source"], json!(["y = 4\n"]));
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(cell["id"], "e5f6a7b8");
    assert_eq!(cell["metadata"], json!({"tags": []}));
    // The same source again changes nothing and writes nothing.
    let before = std::fs::read(ws.path("nb.ipynb")).unwrap();
    let out = edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "y = 4\n"}),
    )
    .await;
    assert!(
        out.text.contains("nothing changed") && out.details.is_none(),
        "{}",
        out.text
    );
    assert_eq!(std::fs::read(ws.path("nb.ipynb")).unwrap(), before);
}

#[tokio::test]
async fn changing_the_cell_type_reshapes_the_cell() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let out = edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "print('hi')", "cell_type": "code"}),
    )
    .await;
    assert!(out.text.contains("now a code cell (was markdown)"), "{}", out.text);
    let cell = &cells(&ws, "nb.ipynb")[0];
    let keys: Vec<&str> = cell.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]
    );
    edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "text", "cell_type": "markdown"}),
    )
    .await;
    let cell = &cells(&ws, "nb.ipynb")[1];
    let keys: Vec<&str> = cell.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["cell_type", "id", "metadata", "source"]);
}

#[tokio::test]
async fn inserting_makes_a_proper_cell() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let out = edit(
        &ws,
        json!({
            "path": "nb.ipynb", "cell_index": 1, "new_source": "import os\nos.getcwd()",
            "cell_type": "code", "edit_mode": "insert"
        }),
    )
    .await;
    assert_eq!(
        out.text,
        "Inserted a new code cell at index 1 in nb.ipynb (3 cells now)."
    );
    let all = cells(&ws, "nb.ipynb");
    let cell = all[1].as_object().unwrap();
    let keys: Vec<&str> = cell.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]
    );
    let id = cell["id"].as_str().unwrap();
    assert!(
        id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()) && id != "a1b2c3d4",
        "{id}"
    );
    assert_eq!(cell["source"], json!(["import os\n", "os.getcwd()"]));
    assert_eq!(all[2]["id"], "e5f6a7b8");
    // Appending at the end; an empty source is an empty list.
    edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 3, "new_source": "", "cell_type": "markdown", "edit_mode": "insert"}),
    )
    .await;
    let all = cells(&ws, "nb.ipynb");
    assert_eq!(
        all[3],
        json!({"cell_type": "markdown", "id": all[3]["id"], "metadata": {}, "source": []})
    );
}

#[tokio::test]
async fn older_minor_versions_get_no_cell_ids() {
    let ws = workspace();
    ws.write(
        "old.ipynb",
        NOTEBOOK.replace("\"nbformat_minor\": 5", "\"nbformat_minor\": 4"),
    );
    let args = json!({
        "path": "old.ipynb", "cell_index": 0, "new_source": "x", "cell_type": "markdown", "edit_mode": "insert"
    });
    edit(&ws, args).await;
    assert_eq!(
        cells(&ws, "old.ipynb")[0],
        json!({"cell_type": "markdown", "metadata": {}, "source": ["x"]})
    );
}

#[tokio::test]
async fn deleting_and_index_errors() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let err = ws
        .fail(
            &NotebookEditTool,
            json!({"path": "nb.ipynb", "cell_index": 2, "new_source": "x"}),
        )
        .await;
    assert!(
        err.contains("cell_index 2 is out of range") && err.contains("2 cells (indexes 0 to 1)"),
        "{err}"
    );
    let args =
        json!({"path": "nb.ipynb", "cell_index": 5, "new_source": "x", "cell_type": "code", "edit_mode": "insert"});
    let err = ws.fail(&NotebookEditTool, args).await;
    assert!(err.contains("insert at 0 to 2"), "{err}");
    let out = edit(&ws, json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "delete"})).await;
    assert_eq!(out.text, "Deleted cell 0 (markdown) from nb.ipynb (1 cell left).");
    edit(&ws, json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "delete"})).await;
    assert!(cells(&ws, "nb.ipynb").is_empty());
    let err = ws
        .fail(
            &NotebookEditTool,
            json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "delete"}),
        )
        .await;
    assert!(err.contains("it has no cells"), "{err}");
    // Metadata and layout of the rest survive.
    let text = std::fs::read_to_string(ws.path("nb.ipynb")).unwrap();
    assert!(text.starts_with("{\n \"cells\": [],\n \"metadata\": {\n  \"kernelspec\"") && text.ends_with("}\n"));
}

#[tokio::test]
async fn argument_errors() {
    let ws = workspace();
    ws.write("nb.ipynb", NOTEBOOK);
    let insert = json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "x", "edit_mode": "insert"});
    assert!(ws.fail(&NotebookEditTool, insert).await.contains("needs cell_type"));
    let replace = json!({"path": "nb.ipynb", "cell_index": 0});
    assert!(ws.fail(&NotebookEditTool, replace).await.contains("needs new_source"));
    let bad_mode = json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "x", "edit_mode": "move"});
    assert!(ws.fail(&NotebookEditTool, bad_mode).await.contains("edit_mode must be"));
    let bad_type = json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "x", "cell_type": "raw"});
    assert!(ws.fail(&NotebookEditTool, bad_type).await.contains("cell_type must be"));
    let no_index = json!({"path": "nb.ipynb", "new_source": "x"});
    assert!(ws.fail(&NotebookEditTool, no_index).await.contains("'cell_index'"));
    let empty = json!({"path": "", "cell_index": 0, "new_source": "x"});
    assert!(ws.fail(&NotebookEditTool, empty).await.contains("path is empty"));
    assert_eq!(std::fs::read_to_string(ws.path("nb.ipynb")).unwrap(), NOTEBOOK);
}

#[tokio::test]
async fn files_that_are_not_notebooks() {
    let ws = workspace();
    let args = |p: &str| json!({"path": p, "cell_index": 0, "new_source": "x"});
    ws.write("data.json", NOTEBOOK);
    assert!(
        ws.fail(&NotebookEditTool, args("data.json"))
            .await
            .contains("not a Jupyter notebook (.ipynb)")
    );
    ws.write("broken.ipynb", "{\"cells\": [");
    let err = ws.fail(&NotebookEditTool, args("broken.ipynb")).await;
    assert!(err.contains("invalid JSON") && err.contains("line 1"), "{err}");
    ws.write("plain.ipynb", "{\"nbformat\": 4, \"metadata\": {}}");
    assert!(
        ws.fail(&NotebookEditTool, args("plain.ipynb"))
            .await
            .contains("no \"cells\" list")
    );
    ws.write("v3.ipynb", "{\"nbformat\": 3, \"worksheets\": []}");
    assert!(
        ws.fail(&NotebookEditTool, args("v3.ipynb"))
            .await
            .contains("nbformat 3")
    );
    ws.write("list.ipynb", "[1, 2]");
    assert!(
        ws.fail(&NotebookEditTool, args("list.ipynb"))
            .await
            .contains("not an object")
    );
    ws.write("bin.ipynb", b"\xff\xfe{}");
    assert!(
        ws.fail(&NotebookEditTool, args("bin.ipynb"))
            .await
            .contains("not UTF-8")
    );
    assert!(
        ws.fail(&NotebookEditTool, args("missing.ipynb"))
            .await
            .contains("Notebook not found")
    );
    std::fs::create_dir(ws.path("dir.ipynb")).unwrap();
    assert!(
        ws.fail(&NotebookEditTool, args("dir.ipynb"))
            .await
            .contains("is a directory")
    );
}

#[tokio::test]
async fn paths_outside_are_refused() {
    let ws = workspace();
    std::fs::write(ws.outside("out.ipynb"), NOTEBOOK).unwrap();
    let args = |p: &str| json!({"path": p, "cell_index": 0, "new_source": "x"});
    assert!(
        ws.fail(&NotebookEditTool, args("../out.ipynb"))
            .await
            .contains("outside the workspace")
    );
    let abs = ws.outside("out.ipynb");
    assert!(
        ws.fail(&NotebookEditTool, args(abs.to_str().unwrap()))
            .await
            .contains("outside the workspace")
    );
    symlink(ws.outside("out.ipynb"), ws.path("link.ipynb")).unwrap();
    assert!(
        ws.fail(&NotebookEditTool, args("link.ipynb"))
            .await
            .contains("outside the workspace")
    );
    symlink(ws.outside("gone.ipynb"), ws.path("dangling.ipynb")).unwrap();
    assert!(
        ws.fail(&NotebookEditTool, args("dangling.ipynb"))
            .await
            .contains("outside the workspace")
    );
    assert_eq!(std::fs::read_to_string(ws.outside("out.ipynb")).unwrap(), NOTEBOOK);
}

#[tokio::test]
async fn foreign_layouts_and_escapes_are_kept() {
    let ws = workspace();
    // Two-space indent, unsorted keys, ASCII escapes, string sources, no trailing newline.
    let text = r#"{
  "nbformat": 4,
  "nbformat_minor": 2,
  "metadata": {},
  "cells": [
    {
      "source": "caf\u00e9",
      "cell_type": "markdown",
      "metadata": {}
    },
    {
      "source": "old",
      "cell_type": "markdown",
      "metadata": {}
    }
  ]
}"#;
    ws.write("nb.ipynb", text);
    edit(
        &ws,
        json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "naïve\nline"}),
    )
    .await;
    let written = std::fs::read_to_string(ws.path("nb.ipynb")).unwrap();
    let expected = text.replace(
        "\"source\": \"old\"",
        "\"source\": [\n        \"na\\u00efve\\n\",\n        \"line\"\n      ]",
    );
    assert_eq!(written, expected);
}

#[tokio::test]
async fn an_edit_makes_the_next_read_show_content_again() {
    let ws = workspace();
    let read = crate::fs::tools()
        .into_iter()
        .find(|t| t.name() == "read_file")
        .unwrap();
    ws.write("nb.ipynb", NOTEBOOK);
    ws.run(read.as_ref(), json!({"path": "nb.ipynb"})).await.unwrap();
    assert!(
        ws.run(read.as_ref(), json!({"path": "nb.ipynb"}))
            .await
            .unwrap()
            .text
            .starts_with("[File unchanged")
    );
    edit(&ws, json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "z = 0"})).await;
    let out = ws.run(read.as_ref(), json!({"path": "nb.ipynb"})).await.unwrap();
    assert!(out.text.contains("\"z = 0\""), "{}", out.text);
}

#[test]
fn source_helpers() {
    assert_eq!(source_lines("a\nb\n"), json!(["a\n", "b\n"]));
    assert_eq!(source_lines("a\n\nb"), json!(["a\n", "\n", "b"]));
    assert_eq!(source_lines(""), json!([]));
    assert_eq!(source_text(Some(&json!(["a\n", "b"]))), "a\nb");
    assert_eq!(source_text(Some(&json!("s"))), "s");
    assert_eq!(source_text(None), "");
}
