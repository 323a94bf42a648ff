//! The rules as a table: one file per family, most specific first (the order
//! breaks ties between equal spans). [`specs`] lists them in priority order.

/// How a rule's match becomes a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The secret is capture group `n` (0: the whole match); no further check.
    Group(usize),
    /// Capture group `n`, refused when it is a placeholder.
    Value(usize),
    /// A PEM header; the block's extent is computed from the text after it.
    Pem,
    /// A Discord bot token: the first segment must be base64 of a decimal id.
    Discord,
    /// `Authorization: <scheme> <credential>`: group 1, not a placeholder.
    AuthHeader,
    /// `Bearer <token>` anywhere: group 1, random-looking.
    Bearer,
    /// `key = value` in code, env, yaml, json, ini: classify the key, vet the value.
    Assignment,
    /// `--password value` / `--token=value` on a command line.
    CliFlag,
    /// `curl -u user:password`: group 1, not a placeholder nor numeric.
    CliUser,
    /// A token in pieces over several lines: the pieces joined hold a
    /// secret that runs past the first one.
    Joined,
    /// A base64 run: decoded, a secret when the decoded text holds one.
    Base64,
    /// A YAML block scalar (`key: |`): group 2 is the key, group 1 what
    /// comes before it on its line; the value is the lines after the match
    /// indented deeper than the key.
    Block,
    /// A quoted value whose quote is not closed on its key's line (a `.env`
    /// value over several lines): group 1 is the key, group 2 the opening
    /// quote; the value runs to the closing quote on a later line.
    Quoted,
    /// The whole match, when group 1 (its random part, after a fixed
    /// prefix) looks random: Vault's legacy `s.` tokens.
    RandomTail,
}

/// How far from a shown piece of a source a rule must look to decide on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Its matches lie within one line (they never hold a line break, except
    /// a `\n` taken as the context around the match) and its check reads
    /// only that line: the lines shown are enough (`line_rules_stay_on_their_line`
    /// proves it on every pattern).
    Line,
    /// Its matches may run over several lines (a PEM block, a `.netrc`
    /// entry): it runs on the whole source, when one of its keywords occurs there.
    Source,
}

/// A rule as written: compiled once by [`Redactor::new`].
pub(crate) struct Spec {
    pub(crate) kind: &'static str,
    pub(crate) pattern: &'static str,
    /// Literals at least one of which occurs in every match: looked for in any
    /// ASCII case when written in lowercase or when the pattern is `(?i-u)`,
    /// else as written (see [`crate::engine::Keywords`]). The rule runs, and its
    /// regex is compiled, only when one occurs. Empty only for a rule with
    /// no literal at all (Discord bot tokens), which has a gate of its own.
    pub(crate) keywords: &'static [&'static str],
    pub(crate) check: Check,
    pub(crate) reach: Reach,
}

mod ai;
mod cloud;
mod code_hosting;
pub(crate) mod context;
mod distinctive;
mod messaging;
mod observability;
mod payments;
mod private_keys;
mod services;

/// Every rule, family by family, in priority order.
pub(crate) fn specs() -> impl Iterator<Item = &'static Spec> {
    [
        private_keys::SPECS,
        cloud::SPECS,
        code_hosting::SPECS,
        messaging::SPECS,
        payments::SPECS,
        ai::SPECS,
        observability::SPECS,
        services::SPECS,
        distinctive::SPECS,
        context::SPECS,
    ]
    .into_iter()
    .flatten()
}

/// Every kind name that [`Redactor::kinds`] reports (and that can appear in a marker).
pub(crate) const KINDS: &[&str] = &[
    "gcp_service_account_private_key",
    "private_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "aws_bedrock_api_key",
    "google_api_key",
    "google_oauth_client_secret",
    "google_oauth_token",
    "azure_storage_account_key",
    "azure_shared_access_key",
    "azure_sas_signature",
    "azure_ad_client_secret",
    "alibaba_access_key_id",
    "digitalocean_token",
    "cloudflare_origin_ca_key",
    "cloudflare_api_token",
    "heroku_api_key",
    "databricks_token",
    "supabase_token",
    "fly_io_token",
    "planetscale_token",
    "terraform_cloud_token",
    "pulumi_access_token",
    "vault_token",
    "doppler_token",
    "github_fine_grained_pat",
    "github_pat",
    "github_oauth_token",
    "github_app_token",
    "github_refresh_token",
    "gitlab_pat",
    "gitlab_token",
    "bitbucket_app_password",
    "atlassian_api_token",
    "npm_token",
    "pypi_token",
    "docker_hub_pat",
    "postman_api_key",
    "linear_api_key",
    "notion_token",
    "slack_token",
    "slack_app_token",
    "slack_webhook",
    "discord_webhook",
    "discord_bot_token",
    "telegram_bot_token",
    "twilio_api_key",
    "sendgrid_api_key",
    "mailgun_api_key",
    "mailchimp_api_key",
    "brevo_api_key",
    "stripe_secret_key",
    "stripe_webhook_secret",
    "shopify_token",
    "square_token",
    "anthropic_api_key",
    "openrouter_api_key",
    "openai_api_key",
    "huggingface_token",
    "replicate_api_token",
    "groq_api_key",
    "xai_api_key",
    "perplexity_api_key",
    "sentry_dsn",
    "sentry_token",
    "grafana_token",
    "new_relic_key",
    "age_secret_key",
    "mapbox_secret_token",
    "onepassword_token",
    "dynatrace_token",
    "rubygems_token",
    "prefect_token",
    "readme_token",
    "sourcegraph_token",
    "shippo_token",
    "clojars_token",
    "duffel_token",
    "easypost_token",
    "flutterwave_secret_key",
    "frameio_token",
    "openshift_token",
    "octopus_deploy_api_key",
    "scalingo_token",
    "settlemint_token",
    "artifactory_token",
    "teams_webhook",
    "jwt",
    "base64_secret",
    "split_secret",
    "url_credentials",
    "authorization_header",
    "bearer_token",
    "cli_user_password",
    "password_assignment",
    "netrc_password",
    "generic_secret",
];

/// Every kind some family's format tests exercise.
#[cfg(test)]
pub(crate) fn tested_kinds() -> Vec<&'static str> {
    [
        ai::tests::TESTED_KINDS,
        cloud::tests::TESTED_KINDS,
        code_hosting::tests::TESTED_KINDS,
        context::tests::TESTED_KINDS,
        distinctive::tests::TESTED_KINDS,
        messaging::tests::TESTED_KINDS,
        observability::tests::TESTED_KINDS,
        services::tests::TESTED_KINDS,
        payments::tests::TESTED_KINDS,
        private_keys::tests::TESTED_KINDS,
    ]
    .into_iter()
    .flatten()
    .copied()
    .collect()
}
