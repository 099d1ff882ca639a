//! Managing servers from the command line and the UI against the real server-everything: `tern mcp add`, `get` and
//! `remove` on a user config of the test's own (comments kept, keys not echoed).

use crate::harness::everything;
use crate::support::tern::Scratch;

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_get_remove_round_trip_keeps_the_users_comments() {
    let Some(js) = everything() else { return };
    let s = Scratch::new();
    let config = s.home.path().join("config/tern/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let original = "# my own settings\nmax_iterations = 30 # enough\n";
    std::fs::write(&config, original).unwrap();
    let js = js.display().to_string();

    let add = [
        "mcp",
        "add",
        "every",
        "--env",
        "DEBUG=1",
        "--env",
        "EVERY_API_KEY=sk-test-0123456789",
        "--",
        "node",
        &js,
        "stdio",
    ];
    let out = s.run(None, &add).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("Added MCP server \"every\" to the user config"),
        "{stdout}"
    );
    assert!(
        stdout.contains("DEBUG=1") && stdout.contains("EVERY_API_KEY=(hidden)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("sk-test") && !stderr.contains("sk-test"),
        "{stdout}{stderr}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.starts_with(original), "{written}");
    assert!(written.contains("[mcp_servers.every]"), "{written}");

    // The same name again is refused and the file is left alone.
    let out = s.run(None, &add).await;
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), written);

    let out = s.run(None, &["mcp", "get", "every"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("every  (stdio: node "), "{stdout}");
    assert!(stdout.contains(&format!("from:   {}", config.display())), "{stdout}");
    assert!(stdout.contains("status: ready:"), "{stdout}");
    assert!(stdout.contains("mcp_every_echo"), "{stdout}");
    assert!(stdout.contains("EVERY_API_KEY=(hidden)"), "{stdout}");
    assert!(!stdout.contains("sk-test"), "{stdout}");

    let out = s.run(None, &["mcp", "get", "other"]).await;
    assert!(!out.status.success());
    assert!(text(&out).1.contains("no MCP server named \"other\""));

    let out = s.run(None, &["mcp", "remove", "every"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let out = s.run(None, &["mcp", "remove", "every"]).await;
    assert!(!out.status.success());
    assert!(text(&out).1.contains("no MCP server named \"every\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_servers_and_project_scope() {
    let s = Scratch::new();
    let out = s
        .run(
            None,
            &[
                "mcp",
                "add",
                "--scope",
                "project",
                "docs",
                "--url",
                "http://127.0.0.1:9/sse",
                "--transport",
                "sse",
                "--header",
                "Authorization=Bearer abc",
            ],
        )
        .await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("Authorization=(hidden)") && !stdout.contains("abc"),
        "{stdout}"
    );
    assert!(stderr.contains("not trusted"), "{stderr}");
    let project = s.work.path().join(".tern/config.toml");
    let written = std::fs::read_to_string(&project).unwrap();
    assert!(
        written.contains("type = \"sse\"") && written.contains("url = \"http://127.0.0.1:9/sse\""),
        "{written}"
    );

    for (args, expected) in [
        (&["mcp", "add", "bad name", "--", "x"][..], "invalid server name"),
        (
            &["mcp", "add", "w", "--url", "ftp://example.com"][..],
            "unsupported scheme",
        ),
        (&["mcp", "add", "e", "--env", "NOEQUALS", "--", "x"][..], "KEY=VALUE"),
    ] {
        let out = s.run(None, args).await;
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).1.contains(expected), "{args:?}: {}", text(&out).1);
    }
    // Without --scope, remove finds the file that defines it.
    let out = s.run(None, &["mcp", "remove", "docs"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("project config"), "{stdout}");
    assert!(!std::fs::read_to_string(&project).unwrap().contains("docs"));
}
