//! What a model reads for a few realistic pages, served from 127.0.0.1 and
//! converted by webfetch (unframed: the frame is the executor's).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use support::*;
use wrench_core::{Action, ActionPlan, AllowAll, Effect, Tool};
use wrench_tools_web::{WebFetch, WebFetchArgs};

async fn fetch_fixture(html: &'static str, path: &str) -> String {
    let s = Server::start(move |_| ok("text/html; charset=utf-8", html));
    let (_d, ctx) = context(
        "[webfetch]\nallow_hosts = [\"127.0.0.1\"]\n",
        Arc::new(AllowAll),
    );
    let tool = WebFetch::with_resolver(Fixed::new(&[]));
    let url = s.url(path);
    let plan = ActionPlan::new(
        "webfetch",
        Effect::ReadOnly,
        serde_json::json!({"url": url}),
    )
    .with(Action::Fetch {
        url: url.clone(),
        host: "127.0.0.1".into(),
    });
    let auth = ctx.authorize(plan).await.unwrap();
    let out = tool
        .run(
            WebFetchArgs {
                url,
                max_chars: None,
                offset: None,
            },
            auth,
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.kind, wrench_core::OutputKind::UntrustedContext);
    out.text
        .replace(&format!("127.0.0.1:{}", s.port()), "127.0.0.1:PORT")
}

#[tokio::test]
async fn docs_page_keeps_main_content_and_drops_navigation() {
    let md = fetch_fixture(include_str!("fixtures/docs_page.html"), "/docs/config.html").await;
    assert!(
        !md.contains("Search docs") && !md.contains("Installation") && !md.contains("dataLayer")
    );
    insta::assert_snapshot!(md);
}

#[tokio::test]
async fn blog_article_keeps_code_blocks_and_resolves_links() {
    let md = fetch_fixture(include_str!("fixtures/blog_article.html"), "/posts/cancel").await;
    assert!(md.contains("```rust"));
    assert!(!md.contains("We use cookies") && !md.contains("Related posts"));
    insta::assert_snapshot!(md);
}

#[tokio::test]
async fn table_page_renders_tables() {
    let md = fetch_fixture(include_str!("fixtures/table_page.html"), "/support").await;
    assert!(md.contains("| 3.2 |") || md.contains("| 3.2"), "{md}");
    insta::assert_snapshot!(md);
}
