//! Secret redaction (SPEC §6 "Redaction").
//!
//! [`Redactor::scrub`] replaces every secret it recognises by `[REDACTED:<kind>]`,
//! where `<kind>` is one of [`Redactor::kinds`]. It runs on every output path, so it
//! is built to be cheap on ordinary text:
//!
//! * **Prefilter.** Most rules name literal keywords that any of their matches must
//!   contain (`ghp_`, `PRIVATE KEY`, `hooks.slack.com`, ...); a few SIMD multi-literal
//!   scans find which occur, and only the rules behind them run. Words too common to
//!   count (`key`, `token`, `pass`, ...) are only tested for presence, by one
//!   early-exit search, and enable the key/value rules. Rules with a short literal
//!   prefix (`sk-`, `eyJ`, `://`, `xox`) skip the prefilter: the regex engine's own
//!   literal search is as fast. Text with no finding comes back as `Cow::Borrowed`.
//!   The key/value rule finds candidates with a regex and takes them apart by hand
//!   (capture groups would cost a slow engine on every `key = ...` line of code).
//!   In release, 10 MB of ordinary source scrubs in roughly 0.15–0.35 s of CPU.
//! * **Rules.** A rule is a regex plus a check. Distinctive token formats (a unique
//!   prefix such as `ghp_`, `xoxb-`, `sk-ant-`) need no check. Context rules
//!   (`password = ...`, `Authorization: Bearer ...`, `user:pass@host`) redact only the
//!   value and keep the key, scheme or host, and refuse values that are code
//!   (`get_password()`, `self.token`, `String`), empty, or placeholders (`${VAR}`,
//!   `$VAR`, `<your-password>`, `{{ .Values.x }}`, `****`). The low-confidence
//!   `generic_secret` rule (a weakly secret-named key such as `key` or `auth`) also
//!   wants a high-entropy value.
//! * **Not secrets.** Nothing matches bare hex digests (git SHAs, md5 ... sha512),
//!   UUIDs, lockfile integrity strings (`sha512-...`, `checksum = "..."`,
//!   `--hash=sha256:...`), public keys or certificates: no rule fires on them, and the
//!   key-based rules ignore keys such as `checksum`, `integrity`, `public_key`,
//!   `token_type`, `max_tokens`, `key_length`.
//! * **Overlaps.** Findings that overlap are merged into one span (their union, so no
//!   byte of either leaks); the merged span takes the kind of its longest member, then
//!   the earliest, then the rule listed first (specific formats before generic ones).
//! * **Idempotence.** Markers already in the text (`[REDACTED:<known kind>]`) are
//!   opaque: no finding may overlap one. `scrub` repeats find-and-replace until the
//!   text has no finding left (each pass strictly shrinks the unredacted text, and in
//!   practice the second pass finds nothing), so `scrub(scrub(x)) == scrub(x)`.
//!
//! A false positive costs a few characters of output; a false negative leaks a
//! credential to a model and its logs, so doubtful cases lean towards redacting,
//! except where a common non-secret shape would be damaged (hashes, lockfiles, code).

use regex::{Captures, Regex};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Every redaction marker starts with this text: `[REDACTED:<kind>]`.
pub const REDACTION_PREFIX: &str = "[REDACTED:";

/// One secret found in a text: its kind and its byte range (`start..end`), the part
/// that [`Redactor::scrub`] replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Finding {
    /// One of [`Redactor::kinds`].
    pub kind: &'static str,
    /// Byte offset of the first byte of the secret.
    pub start: usize,
    /// Byte offset just past the secret.
    pub end: usize,
}

/// How a rule's match becomes a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
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
}

/// A rule as written: compiled once by [`Redactor::new`].
struct Spec {
    kind: &'static str,
    pattern: &'static str,
    /// Literals at least one of which occurs in every match: as written for
    /// case-sensitive patterns, in their case variants for `(?i)` patterns (see
    /// [`case_variants`]). At least 4 bytes, so the multi-literal scan stays fast.
    /// Empty: the rule always runs (its regex starts from a short literal that the
    /// regex engine finds quickly by itself).
    keywords: &'static [&'static str],
    check: Check,
}

/// The rules, most specific first (the order breaks ties between equal spans).
const SPECS: &[Spec] = &[
    // ---- private keys -------------------------------------------------------------
    Spec {
        kind: "gcp_service_account_private_key",
        pattern: r#""private_key"[ \t]*:[ \t]*"(-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY-----(?:[^"\\]|\\.)*)""#,
        keywords: &["\"private_key\""],
        check: Check::Group(1),
    },
    Spec {
        kind: "private_key",
        pattern: r"-{4,5} ?BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        keywords: &["PRIVATE KEY"],
        check: Check::Pem,
    },
    // ---- cloud providers ----------------------------------------------------------
    Spec {
        kind: "aws_access_key_id",
        pattern: r"(?-u:\b)((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?-u:\b)",
        keywords: &[],
        check: Check::Group(1),
    },
    Spec {
        kind: "aws_secret_access_key",
        pattern: r#"(?i)(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9/+]{40})(?:[^a-z0-9/+=]|\z)"#,
        keywords: &["secret"],
        check: Check::Group(1),
    },
    Spec {
        kind: "aws_session_token",
        pattern: r#"(?i)(?:aws_?session_?token|session_?token)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9/+=]{100,})"#,
        keywords: &["session"],
        check: Check::Group(1),
    },
    Spec {
        kind: "aws_bedrock_api_key",
        pattern: r"(?-u:\b)ABSK[A-Za-z0-9+/]{109,269}={0,2}",
        keywords: &["ABSK"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_api_key",
        pattern: r"AIza[0-9A-Za-z_\-]{35}",
        keywords: &["AIza"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_oauth_client_secret",
        pattern: r"GOCSPX-[0-9A-Za-z_\-]{28}",
        keywords: &["GOCSPX-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_oauth_token",
        pattern: r"(?-u:\b)(?:ya29\.[0-9A-Za-z_\-]{30,}|1//0[0-9A-Za-z_\-]{40,})",
        keywords: &["ya29.", "1//0"],
        check: Check::Group(0),
    },
    Spec {
        kind: "azure_storage_account_key",
        pattern: r"(?i)(?-u:\b)AccountKey=([a-z0-9+/]{86}==)",
        keywords: &["AccountKey=", "accountkey=", "ACCOUNTKEY="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_shared_access_key",
        pattern: r"(?i)(?-u:\b)SharedAccessKey=([a-z0-9+/]{42,44}=)",
        keywords: &["SharedAccessKey=", "sharedaccesskey=", "SHAREDACCESSKEY="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_sas_signature",
        pattern: r"(?i)(?:[?&]|(?-u:\b))sig=([a-z0-9%+/]{40,100}(?:=|%3d){0,2})",
        keywords: &["sig="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_ad_client_secret",
        pattern: r"(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|\z)",
        keywords: &[],
        check: Check::Group(1),
    },
    Spec {
        kind: "alibaba_access_key_id",
        pattern: r"(?-u:\b)LTAI[A-Za-z0-9]{12,20}(?-u:\b)",
        keywords: &["LTAI"],
        check: Check::Group(0),
    },
    Spec {
        kind: "digitalocean_token",
        pattern: r"(?-u:\b)do[por]_v1_[a-f0-9]{64}(?-u:\b)",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "cloudflare_origin_ca_key",
        pattern: r"(?-u:\b)v1\.0-[a-f0-9]{24}-[a-f0-9]{146}(?-u:\b)",
        keywords: &["v1.0-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "cloudflare_api_token",
        pattern: r#"(?i)(?:cloudflare|(?-u:\b)cf)_?(?:api_?)?(?:token|key)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9_\-]{37,40})"#,
        keywords: &[
            "cloudflare",
            "cf_api",
            "cf_token",
            "cf_key",
            "cfapi",
            "cftoken",
            "cfkey",
        ],
        check: Check::Group(1),
    },
    Spec {
        kind: "heroku_api_key",
        pattern: r#"(?i)(?-u:\b)HRKU-AA[0-9a-z_\-]{58}|heroku[a-z_\-]{0,20}(?:key|token)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"#,
        keywords: &["hrku-", "heroku"],
        check: Check::Group(1),
    },
    Spec {
        kind: "databricks_token",
        pattern: r"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9])?(?-u:\b)",
        keywords: &["dapi"],
        check: Check::Group(0),
    },
    Spec {
        kind: "supabase_token",
        pattern: r"(?-u:\b)(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})",
        keywords: &["sbp_", "sb_secret_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "fly_io_token",
        pattern: r"(?-u:\b)fo1_[A-Za-z0-9_\-]{43}",
        keywords: &["fo1_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "planetscale_token",
        pattern: r"(?-u:\b)pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}",
        keywords: &["pscale_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "terraform_cloud_token",
        pattern: r"(?-u:\b)[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        keywords: &["atlasv1"],
        check: Check::Group(0),
    },
    Spec {
        kind: "pulumi_access_token",
        pattern: r"(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)",
        keywords: &["pul-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "vault_token",
        pattern: r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_\-]{24,}",
        keywords: &["hvs.", "hvb.", "hvr."],
        check: Check::Group(0),
    },
    Spec {
        kind: "doppler_token",
        pattern: r"(?-u:\b)dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}",
        keywords: &[],
        check: Check::Group(0),
    },
    // ---- code hosting and package registries ---------------------------------------
    Spec {
        kind: "github_fine_grained_pat",
        pattern: r"github_pat_[A-Za-z0-9_]{60,255}",
        keywords: &["github_pat_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "github_pat",
        pattern: r"ghp_[A-Za-z0-9]{36,255}",
        keywords: &["ghp_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "github_oauth_token",
        pattern: r"gho_[A-Za-z0-9]{36,255}",
        keywords: &["gho_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "github_app_token",
        pattern: r"gh[us]_[A-Za-z0-9]{36,255}",
        keywords: &["ghu_", "ghs_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "github_refresh_token",
        pattern: r"ghr_[A-Za-z0-9]{36,255}",
        keywords: &["ghr_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "gitlab_pat",
        pattern: r"glpat-[A-Za-z0-9_\-]{20,300}(?:\.[A-Za-z0-9_\-]{2,12}){0,2}",
        keywords: &["glpat-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "gitlab_token",
        pattern: r"(?-u:\b)gl(?:ptt|rt|dt|ft|soat|imt|cbt|agent|oas|wt|ffct)-[A-Za-z0-9_\-]{20,300}",
        keywords: &[
            "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glimt-", "glcbt-", "glagent-",
            "gloas-", "glwt-", "glffct-",
        ],
        check: Check::Group(0),
    },
    Spec {
        kind: "bitbucket_app_password",
        pattern: r"(?-u:\b)ATBB[A-Za-z0-9_=.\-]{28,}",
        keywords: &["ATBB"],
        check: Check::Group(0),
    },
    Spec {
        kind: "atlassian_api_token",
        pattern: r"(?-u:\b)AT(?:ATT|CTT)3[A-Za-z0-9_=\-]{150,300}",
        keywords: &["ATATT3", "ATCTT3"],
        check: Check::Group(0),
    },
    Spec {
        kind: "npm_token",
        pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        keywords: &["npm_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "pypi_token",
        pattern: r"pypi-AgE[A-Za-z0-9_\-]{50,}",
        keywords: &["pypi-AgE"],
        check: Check::Group(0),
    },
    Spec {
        kind: "docker_hub_pat",
        pattern: r"(?-u:\b)dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}",
        keywords: &["dckr_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "postman_api_key",
        pattern: r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?-u:\b)",
        keywords: &["PMAK-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "linear_api_key",
        pattern: r"(?-u:\b)lin_(?:api|oauth)_[A-Za-z0-9]{40,64}(?-u:\b)",
        keywords: &["lin_api_", "lin_oauth_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "notion_token",
        pattern: r"(?-u:\b)(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})(?-u:\b)",
        keywords: &["secret_", "ntn_"],
        check: Check::Group(0),
    },
    // ---- chat and messaging -----------------------------------------------------------
    Spec {
        kind: "slack_token",
        pattern: r"xox(?:[abposer]|e\.xox[bp])-[0-9A-Za-z\-]{10,250}",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "slack_app_token",
        pattern: r"(?i)xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Z0-9]+",
        keywords: &["xapp-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "slack_webhook",
        pattern: r"hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,120})",
        keywords: &["hooks.slack.com"],
        check: Check::Group(1),
    },
    Spec {
        kind: "discord_webhook",
        pattern: r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/([0-9]{17,20}/[A-Za-z0-9_\-]{60,68})",
        keywords: &["discord"],
        check: Check::Group(1),
    },
    Spec {
        kind: "discord_bot_token",
        pattern: r"(?-u:\b)([MNO][A-Za-z0-9_\-]{23,27})\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        keywords: &[],
        check: Check::Discord,
    },
    Spec {
        kind: "telegram_bot_token",
        pattern: r"[0-9]{5,16}:AA[A-Za-z0-9_\-]{33}",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "twilio_api_key",
        pattern: r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "sendgrid_api_key",
        pattern: r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "mailgun_api_key",
        pattern: r#"(?i)(?-u:\b)key-[0-9a-f]{32}(?-u:\b)|mailgun[a-z0-9_.\-]{0,30}(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?-u:\b)"#,
        keywords: &["key-", "mailgun"],
        check: Check::Group(1),
    },
    Spec {
        kind: "mailchimp_api_key",
        pattern: r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "brevo_api_key",
        pattern: r"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}(?-u:\b)",
        keywords: &["xkeysib-"],
        check: Check::Group(0),
    },
    // ---- payments and commerce ---------------------------------------------------------
    Spec {
        kind: "stripe_secret_key",
        pattern: r"(?-u:\b)[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,247}",
        keywords: &[
            "sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_",
        ],
        check: Check::Group(0),
    },
    Spec {
        kind: "stripe_webhook_secret",
        pattern: r"(?-u:\b)whsec_[A-Za-z0-9+/=]{32,}",
        keywords: &["whsec_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "shopify_token",
        pattern: r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?-u:\b)",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "square_token",
        pattern: r"(?-u:\b)(?:EAAA[A-Za-z0-9_\-]{60}|sq0atp-[0-9A-Za-z_\-]{22}|sq0csp-[0-9A-Za-z_\-]{43})",
        keywords: &["EAAA", "sq0atp-", "sq0csp-"],
        check: Check::Group(0),
    },
    // ---- AI providers ----------------------------------------------------------------
    Spec {
        kind: "anthropic_api_key",
        pattern: r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_\-]{32,300}",
        keywords: &["sk-ant-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "openrouter_api_key",
        pattern: r"sk-or-v1-[a-f0-9]{64}",
        keywords: &["sk-or-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "openai_api_key",
        pattern: r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,300}|[A-Za-z0-9_\-]{0,150}T3BlbkFJ[A-Za-z0-9_\-]{10,150})",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "huggingface_token",
        pattern: r"(?-u:\b)(?:hf_|api_org_)[A-Za-z]{34}(?-u:\b)",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "replicate_api_token",
        pattern: r"(?-u:\b)r8_[A-Za-z0-9]{37}(?-u:\b)",
        keywords: &[],
        check: Check::Group(0),
    },
    Spec {
        kind: "groq_api_key",
        pattern: r"(?-u:\b)gsk_[A-Za-z0-9]{52}(?-u:\b)",
        keywords: &["gsk_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "xai_api_key",
        pattern: r"(?-u:\b)xai-[A-Za-z0-9]{80}(?-u:\b)",
        keywords: &["xai-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "perplexity_api_key",
        pattern: r"(?-u:\b)pplx-[A-Za-z0-9]{48}(?-u:\b)",
        keywords: &["pplx-"],
        check: Check::Group(0),
    },
    // ---- observability ------------------------------------------------------------------
    Spec {
        kind: "sentry_dsn",
        pattern: r"https?://([a-f0-9]{32}(?::[a-f0-9]{32})?)@[A-Za-z0-9.\-]*sentry[A-Za-z0-9.\-]*",
        keywords: &["sentry"],
        check: Check::Group(1),
    },
    Spec {
        kind: "sentry_token",
        pattern: r"(?-u:\b)sntry[su]_[A-Za-z0-9+/=_]{40,}",
        keywords: &["sntry"],
        check: Check::Group(0),
    },
    Spec {
        kind: "grafana_token",
        pattern: r"(?-u:\b)(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}|eyJrIjoi[A-Za-z0-9+/]{50,400}={0,2})",
        keywords: &["glsa_", "glc_", "eyJrIjoi"],
        check: Check::Group(0),
    },
    Spec {
        kind: "new_relic_key",
        pattern: r"(?-u:\b)(?:NR(?:AK|AA|II|IQ|RA|SP)-[A-Za-z0-9_\-]{20,40}|[a-fA-F0-9]{36}NRAL(?-u:\b))",
        keywords: &["NRAK-", "NRAA-", "NRII-", "NRIQ-", "NRRA-", "NRSP-", "NRAL"],
        check: Check::Group(0),
    },
    // ---- other distinctive formats ---------------------------------------------------------
    Spec {
        kind: "age_secret_key",
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        keywords: &["AGE-SECRET-KEY-1"],
        check: Check::Group(0),
    },
    Spec {
        kind: "mapbox_secret_token",
        pattern: r"(?-u:\b)sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
        keywords: &["sk.eyJ"],
        check: Check::Group(0),
    },
    Spec {
        kind: "jwt",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        keywords: &[],
        check: Check::Group(0),
    },
    // ---- credentials in context --------------------------------------------------------------
    Spec {
        kind: "url_credentials",
        pattern: r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@\[\]"'<>]*:([^\s/?#"'<>]+)@[A-Za-z0-9\[]"#,
        keywords: &[],
        check: Check::Value(1),
    },
    Spec {
        kind: "authorization_header",
        pattern: r#"(?i)(?-u:\b)(?:proxy-)?authorization(?:\\?["'])?:[ \t]*(?:\\?["'])?(?:(?:bearer|basic|token|bot|apikey|api-key|sso-key|key|digest|negotiate|ntlm)[ \t]+)?([a-z0-9\-._~+/=:]{8,})"#,
        keywords: &["authorization"],
        check: Check::AuthHeader,
    },
    Spec {
        kind: "bearer_token",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+([a-z0-9\-._~+/]{16,}=*)",
        keywords: &["bearer"],
        check: Check::Bearer,
    },
    Spec {
        kind: "cli_user_password",
        pattern: r#"(?:^|[ \t])(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:([^\s"']+)"#,
        keywords: &[],
        check: Check::CliUser,
    },
    Spec {
        kind: "password_assignment",
        pattern: r"(?:machine[ \t\r\n]+\S+|default)[ \t\r\n]+login[ \t\r\n]+\S+[ \t\r\n]+password[ \t\r\n]+(\S+)",
        keywords: &["password"],
        check: Check::Value(1),
    },
    Spec {
        kind: "password_assignment",
        // Candidates only: `parse_assignment` reads the operator and value.
        pattern: concat!(
            r"[A-Za-z0-9_.\-]*(?:pass|PASS|Pass|pwd|PWD|Pwd|secret|SECRET|Secret|token|TOKEN|Token|cred|CRED|Cred|key|KEY|Key|auth|AUTH|Auth|cookie|COOKIE|Cookie|session|SESSION|Session|salt|SALT|Salt|hmac|HMAC|Hmac|jwt|JWT|Jwt|bearer|BEARER|Bearer)",
            r#"[A-Za-z0-9_.\-]*(?:\\?["'])?\]?[ \t]*[:=!?]"#,
        ),
        keywords: &[
            "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt",
            "hmac", "jwt", "bearer",
        ],
        check: Check::Assignment,
    },
    Spec {
        kind: "password_assignment",
        // Candidates only: `parse_cli_flag` reads the value.
        pattern: concat!(
            r"(?:(?m:^)|[ \t])--?[A-Za-z0-9_\-]*(?:pass|PASS|Pass|pwd|PWD|Pwd|secret|SECRET|Secret|token|TOKEN|Token|cred|CRED|Cred|key|KEY|Key|auth|AUTH|Auth|cookie|COOKIE|Cookie|session|SESSION|Session|salt|SALT|Salt|hmac|HMAC|Hmac|jwt|JWT|Jwt|bearer|BEARER|Bearer)",
            r"[A-Za-z0-9_\-]*(?:=|[ \t])",
        ),
        keywords: &[
            "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt",
            "hmac", "jwt", "bearer",
        ],
        check: Check::CliFlag,
    },
];

/// Every kind name that [`Redactor::kinds`] reports (and that can appear in a marker).
const KINDS: &[&str] = &[
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
    "jwt",
    "url_credentials",
    "authorization_header",
    "bearer_token",
    "cli_user_password",
    "password_assignment",
    "generic_secret",
];

/// Words so common in code and prose (`key`, `token`, `pass`, ...) that scanning
/// for every occurrence would cost more than the rules they enable: the rules whose
/// keywords all contain one run as soon as any of them occurs (found by one
/// early-exit search), and their own regexes, which start from these words, do the
/// rest.
const COMMON_WORDS: &[&str] = &[
    "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt", "hmac",
    "jwt", "bearer",
];

/// Keywords per prefilter regex.
const KEYWORD_CHUNK: usize = 48;

/// At most this many find-and-replace passes in [`Redactor::scrub`]; real text needs
/// one, and a second finds nothing.
const MAX_PASSES: usize = 16;

/// How far past a PEM header the END line is looked for.
const PEM_WINDOW: usize = 64 * 1024;

struct Rule {
    kind: &'static str,
    re: LazyRegex,
    check: Check,
}

/// A rule's regex, compiled the first time a text needs it. Most rules are
/// gated by keywords that most texts never contain; compiling every rule
/// up front cost each process (a one-shot `wrench read` too) ~25 ms.
struct LazyRegex {
    pattern: Cow<'static, str>,
    cell: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    fn new(pattern: impl Into<Cow<'static, str>>) -> Self {
        LazyRegex {
            pattern: pattern.into(),
            cell: OnceLock::new(),
        }
    }

    /// The compiled regex; None only for a pattern that does not compile
    /// (a bug `every_rule_compiles` catches), whose rule then finds nothing.
    fn get(&self) -> Option<&Regex> {
        self.cell.get_or_init(|| compile(&self.pattern)).as_ref()
    }
}

struct Inner {
    rules: Vec<Rule>,
    /// All keywords, longest first, in chunks of [`KEYWORD_CHUNK`].
    keyword_res: Vec<Regex>,
    /// Keyword variant -> the rules it enables (including the rules of every
    /// variant it contains, since a match only reports one alternative).
    keyword_rules: HashMap<String, Vec<usize>>,
    /// Rules without keywords.
    always: Vec<usize>,
    /// Rules all of whose keywords contain one of [`COMMON_WORDS`].
    common: Vec<usize>,
    /// Any of [`COMMON_WORDS`] (in its case variants).
    common_re: Option<Regex>,
    marker_re: LazyRegex,
    pem_cont: LazyRegex,
    pem_end_at: LazyRegex,
    pem_end: LazyRegex,
    /// Recent texts that held no secret.
    clean: std::sync::Mutex<CleanCache>,
}

/// Clean verdicts are remembered for texts up to this long: a long-lived
/// server (MCP, batch) re-reads the same files and repeats the same names,
/// paths and digests in structured output, and scanning with every rule
/// costs ~7 ns a byte plus ~1-2 us a text, while a lookup costs a CRC and a
/// compare of the whole text (~0.2 ns a byte). The compare makes a
/// remembered verdict exact: a CRC collision only costs a scan.
const CLEAN_CACHE_MAX_TEXT: usize = 1 << 20;
/// Bytes of clean text remembered (oldest forgotten first).
const CLEAN_CACHE_BYTES: usize = 16 << 20;
/// Clean texts remembered (oldest forgotten first).
const CLEAN_CACHE_ENTRIES: usize = 4096;

/// Recent texts that held no secret, verbatim, by (length, CRC-32).
#[derive(Default)]
struct CleanCache {
    map: HashMap<(usize, u32), Vec<Box<str>>>,
    order: std::collections::VecDeque<(usize, u32)>,
    bytes: usize,
}

fn clean_key(text: &str) -> (usize, u32) {
    (text.len(), crc32fast::hash(text.as_bytes()))
}

impl CleanCache {
    fn contains(&self, key: (usize, u32), text: &str) -> bool {
        self.map
            .get(&key)
            .is_some_and(|v| v.iter().any(|t| **t == *text))
    }

    fn insert(&mut self, key: (usize, u32), text: &str) {
        if text.len() > CLEAN_CACHE_MAX_TEXT || self.contains(key, text) {
            return;
        }
        self.map.entry(key).or_default().push(text.into());
        self.order.push_back(key);
        self.bytes += text.len();
        while self.bytes > CLEAN_CACHE_BYTES || self.order.len() > CLEAN_CACHE_ENTRIES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            // The oldest text under a key is the first one pushed.
            if let Some(v) = self.map.get_mut(&old) {
                if !v.is_empty() {
                    let t = v.remove(0);
                    self.bytes -= t.len();
                }
                if v.is_empty() {
                    self.map.remove(&old);
                }
            }
        }
    }
}

/// The secret redactor: built-in rules compiled once. Cloning is cheap (an `Arc`).
#[derive(Clone)]
pub struct Redactor {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("rules", &self.inner.rules.len())
            .finish()
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

fn compile(pattern: &str) -> Option<Regex> {
    let compiled = Regex::new(pattern);
    debug_assert!(
        compiled.is_ok(),
        "redaction pattern failed to compile: {pattern}"
    );
    compiled.ok()
}

/// A raw finding before merging: kind, span, and the rule's index (its priority).
#[derive(Debug, Clone, Copy)]
struct Raw {
    kind: &'static str,
    start: usize,
    end: usize,
    rule: usize,
}

impl Redactor {
    /// Compiles the built-in rules. Build once and share (`Arc`, a static, or
    /// [`Redactor::global`]); clones share the compiled rules.
    pub fn new() -> Redactor {
        let mut rules = Vec::with_capacity(SPECS.len());
        let mut keyword_rules: HashMap<String, Vec<usize>> = HashMap::new();
        let mut always = Vec::new();
        let mut common = Vec::new();
        let common_variants: Vec<String> =
            COMMON_WORDS.iter().flat_map(|k| case_variants(k)).collect();
        for spec in SPECS {
            let idx = rules.len();
            rules.push(Rule {
                kind: spec.kind,
                re: LazyRegex::new(spec.pattern),
                check: spec.check,
            });
            let variants: Vec<String> = if spec.pattern.starts_with("(?i)") {
                spec.keywords
                    .iter()
                    .flat_map(|k| case_variants(k))
                    .collect()
            } else {
                spec.keywords.iter().map(|k| (*k).to_string()).collect()
            };
            if variants.is_empty() {
                always.push(idx);
            } else if variants
                .iter()
                .all(|v| common_variants.iter().any(|c| v.contains(c.as_str())))
            {
                // Every keyword of the rule contains a common word: the rule runs
                // whenever a common word occurs, which one early-exit search tells.
                common.push(idx);
            } else {
                for variant in variants {
                    keyword_rules.entry(variant).or_default().push(idx);
                }
            }
        }
        // A keyword that contains another keyword shadows it in a leftmost-first scan
        // (longest alternatives first), so it must also enable the contained one's rules.
        let keys: Vec<String> = keyword_rules.keys().cloned().collect();
        let mut extra: Vec<(String, Vec<usize>)> = Vec::new();
        for outer in &keys {
            let mut add = Vec::new();
            for inner in &keys {
                if inner != outer
                    && outer.contains(inner.as_str())
                    && let Some(r) = keyword_rules.get(inner)
                {
                    add.extend_from_slice(r);
                }
            }
            if !add.is_empty() {
                extra.push((outer.clone(), add));
            }
        }
        for (k, add) in extra {
            if let Some(v) = keyword_rules.get_mut(&k) {
                v.extend(add);
            }
        }
        for v in keyword_rules.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        let mut sorted = keys;
        sorted.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        // Chunks small enough for the regex crate's SIMD multi-literal search.
        let keyword_res: Vec<Regex> = sorted
            .chunks(KEYWORD_CHUNK)
            .filter_map(|chunk| {
                let alternation: Vec<String> = chunk.iter().map(|k| regex::escape(k)).collect();
                compile(&alternation.join("|"))
            })
            .collect();
        let common_alt: Vec<String> = common_variants.iter().map(|k| regex::escape(k)).collect();
        let common_re = compile(&common_alt.join("|"));
        let kinds_alt: Vec<String> = KINDS.iter().map(|k| regex::escape(k)).collect();
        let marker_re = LazyRegex::new(format!(
            "{}(?:{})\\]",
            regex::escape(REDACTION_PREFIX),
            kinds_alt.join("|")
        ));
        let pem_cont = LazyRegex::new(
            r"\A(?:(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[A-Za-z][A-Za-z0-9\-]*:[ \t][^\r\n\\]*|[A-Za-z0-9+/=]+)?[ \t]*)*",
        );
        let pem_end_at = LazyRegex::new(
            r"\A(?:\s|\\[rn])*-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        );
        let pem_end =
            LazyRegex::new(r"-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}");
        Redactor {
            inner: Arc::new(Inner {
                rules,
                keyword_res,
                keyword_rules,
                always,
                common,
                common_re,
                marker_re,
                pem_cont,
                pem_end_at,
                pem_end,
                clean: std::sync::Mutex::new(CleanCache::default()),
            }),
        }
    }

    /// The shared instance, built on first use.
    pub fn global() -> &'static Redactor {
        static GLOBAL: OnceLock<Redactor> = OnceLock::new();
        GLOBAL.get_or_init(Redactor::new)
    }

    /// Every kind name a marker can carry, for docs.
    pub fn kinds() -> Vec<&'static str> {
        KINDS.to_vec()
    }

    /// Whether `text` holds anything [`Redactor::scrub`] would replace.
    pub fn contains_secret(&self, text: &str) -> bool {
        !self.find(text).is_empty()
    }

    /// Replaces each secret in `text` by `[REDACTED:<kind>]`. Text without secrets is
    /// returned borrowed. Idempotent: scrubbing the result again changes nothing.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let lock = || {
            self.inner
                .clean
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let key = clean_key(text);
        if lock().contains(key, text) {
            return Cow::Borrowed(text);
        }
        let findings = self.find(text);
        if findings.is_empty() {
            lock().insert(key, text);
            return Cow::Borrowed(text);
        }
        let mut out = replace(text, &findings);
        for _ in 1..MAX_PASSES {
            let more = self.find(&out);
            if more.is_empty() {
                break;
            }
            out = replace(&out, &more);
        }
        Cow::Owned(out)
    }

    /// The secrets in `text`, merged (no two overlap) and sorted by position.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let inner = &*self.inner;
        let active = self.active_rules(text);
        if active.is_empty() {
            return Vec::new();
        }
        let markers = self.markers(text);
        let mut raw = Vec::new();
        for idx in active {
            self.scan_rule(idx, text, &markers, &mut raw);
        }
        if raw.is_empty() {
            return Vec::new();
        }
        debug_assert!(raw.iter().all(|r| r.rule < inner.rules.len()));
        merge(raw)
    }

    /// The rules whose keywords occur in `text`, in priority order.
    fn active_rules(&self, text: &str) -> Vec<usize> {
        let inner = &*self.inner;
        let mut on = vec![false; inner.rules.len()];
        let mut count = 0usize;
        for &i in &inner.always {
            if !on[i] {
                on[i] = true;
                count += 1;
            }
        }
        if inner.common_re.as_ref().is_some_and(|re| re.is_match(text)) {
            for &i in &inner.common {
                if !on[i] {
                    on[i] = true;
                    count += 1;
                }
            }
        }
        let mut seen: Vec<&str> = Vec::new();
        for kw in &inner.keyword_res {
            if count == on.len() {
                break;
            }
            for m in kw.find_iter(text) {
                if count == on.len() {
                    break;
                }
                let word = m.as_str();
                if seen.contains(&word) {
                    continue;
                }
                if let Some(rules) = inner.keyword_rules.get(word) {
                    for &i in rules {
                        if !on[i] {
                            on[i] = true;
                            count += 1;
                        }
                    }
                }
                seen.push(word);
            }
        }
        on.iter()
            .enumerate()
            .filter_map(|(i, &b)| b.then_some(i))
            .collect()
    }

    /// Spans of markers already in the text (known kinds only).
    fn markers(&self, text: &str) -> Vec<(usize, usize)> {
        if !text.contains(REDACTION_PREFIX) {
            return Vec::new();
        }
        match self.inner.marker_re.get() {
            Some(re) => re.find_iter(text).map(|m| (m.start(), m.end())).collect(),
            None => Vec::new(),
        }
    }

    fn scan_rule(&self, idx: usize, text: &str, markers: &[(usize, usize)], out: &mut Vec<Raw>) {
        let Some(rule) = self.inner.rules.get(idx) else {
            return;
        };
        match rule.check {
            Check::Group(0) => return self.scan_plain(idx, rule, text, markers, out),
            Check::Assignment | Check::CliFlag => {
                return self.scan_assignments(idx, rule, text, markers, out);
            }
            _ => {}
        }
        let Some(re) = rule.re.get() else {
            return;
        };
        let mut pos = 0;
        while pos <= text.len() {
            let Some(caps) = re.captures_at(text, pos) else {
                break;
            };
            let Some(whole) = caps.get(0) else {
                break;
            };
            let retry = next_char(text, whole.start());
            match self.accept(rule, text, &caps) {
                Some((kind, guard, start, end))
                    if start < end && !overlaps(markers, guard.min(start), end) =>
                {
                    out.push(Raw {
                        kind,
                        start,
                        end,
                        rule: idx,
                    });
                    pos = end.max(retry);
                }
                _ => pos = retry,
            }
        }
    }

    /// A rule whose whole match is the secret: no capture groups needed.
    fn scan_plain(
        &self,
        idx: usize,
        rule: &Rule,
        text: &str,
        markers: &[(usize, usize)],
        out: &mut Vec<Raw>,
    ) {
        let Some(re) = rule.re.get() else {
            return;
        };
        let mut pos = 0;
        while pos <= text.len() {
            let Some(m) = re.find_at(text, pos) else {
                break;
            };
            if m.start() < m.end() && !overlaps(markers, m.start(), m.end()) {
                out.push(Raw {
                    kind: rule.kind,
                    start: m.start(),
                    end: m.end(),
                    rule: idx,
                });
                pos = m.end();
            } else {
                pos = next_char(text, m.start());
            }
        }
    }

    /// The key/value rules: the regex only finds candidates (capture groups would
    /// cost a slow engine on each of the many `key = ...` lines of ordinary code);
    /// [`parse_assignment`] and [`parse_cli_flag`] take them apart.
    fn scan_assignments(
        &self,
        idx: usize,
        rule: &Rule,
        text: &str,
        markers: &[(usize, usize)],
        out: &mut Vec<Raw>,
    ) {
        let cli = rule.check == Check::CliFlag;
        let Some(re) = rule.re.get() else {
            return;
        };
        let mut pos = 0;
        while pos <= text.len() {
            let Some(m) = re.find_at(text, pos) else {
                break;
            };
            let parsed = if cli {
                parse_cli_flag(text, m.start())
            } else {
                parse_assignment(text, m.start())
            };
            let mut retry = next_char(text, m.start());
            if let Some(a) = parsed {
                // A match starting inside a rejected key would start mid-word (and be
                // refused for that); a key inside the value can still match.
                retry = retry.max(a.key.1);
                if let Some((kind, start, end)) = accept_assignment(text, &a, cli)
                    && start < end
                    && !overlaps(markers, a.key.0, end)
                {
                    out.push(Raw {
                        kind,
                        start,
                        end,
                        rule: idx,
                    });
                    retry = retry.max(end);
                }
            }
            pos = retry;
        }
    }

    /// Turns a match into `(kind, guard_start, start, end)`: the secret is
    /// `start..end`; `guard_start..end` must not overlap an existing marker.
    fn accept(
        &self,
        rule: &Rule,
        text: &str,
        caps: &Captures<'_>,
    ) -> Option<(&'static str, usize, usize, usize)> {
        match rule.check {
            Check::Group(n) => {
                let m = caps.get(n).or_else(|| caps.get(0))?;
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Value(n) => {
                let m = caps.get(n)?;
                if is_placeholder(m.as_str()) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Pem => {
                let m = caps.get(0)?;
                let end = self.pem_extent(text, m.end());
                Some((rule.kind, m.start(), m.start(), end))
            }
            Check::Discord => {
                let id = caps.get(1)?;
                if !decodes_to_digits(id.as_str()) {
                    return None;
                }
                let m = caps.get(0)?;
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::AuthHeader => {
                let m = caps.get(1)?;
                let v = m.as_str();
                let code = (is_member_path(v) || is_identifier(v))
                    && !v.bytes().any(|b| b.is_ascii_digit())
                    && !case_scrambled(v);
                if is_placeholder(v) || is_auth_scheme(v) || code {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Bearer => {
                let m = caps.get(1)?;
                let v = m.as_str();
                if is_placeholder(v) || !looks_random(v) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::CliUser => {
                let m = caps.get(1)?;
                let v = m.as_str();
                if is_placeholder(v) || v.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Assignment | Check::CliFlag => None,
        }
    }

    /// Where a PEM private-key block that starts with a header ending at `hdr_end`
    /// ends: through its END line when there is one, else through the key-looking
    /// lines after the header (a truncated key is still redacted).
    fn pem_extent(&self, text: &str, hdr_end: usize) -> usize {
        let inner = &*self.inner;
        let rest = &text[hdr_end..];
        let cont = inner
            .pem_cont
            .get()
            .and_then(|re| re.find(rest))
            .map_or(0, |m| m.end());
        let mut after = hdr_end + cont;
        // Leave the line break that ends the last key line outside the block.
        loop {
            let head = &text[hdr_end..after];
            if let Some(h) = head
                .strip_suffix("\\n")
                .or_else(|| head.strip_suffix("\\r"))
            {
                after = hdr_end + h.len();
            } else if let Some(c) = head.chars().next_back().filter(|c| c.is_whitespace()) {
                after -= c.len_utf8();
            } else {
                break;
            }
        }
        if let Some(m) = inner
            .pem_end_at
            .get()
            .and_then(|re| re.find(&text[after..]))
        {
            return after + m.end();
        }
        let mut limit = (hdr_end + PEM_WINDOW).min(text.len());
        while !text.is_char_boundary(limit) {
            limit -= 1;
        }
        if let Some(m) = inner
            .pem_end
            .get()
            .and_then(|re| re.find(&text[hdr_end..limit]))
        {
            let between = &text[hdr_end..hdr_end + m.start()];
            if !between.contains(|c: char| "{}()<>[]|&!?@$%^~`".contains(c)) {
                return hdr_end + m.end();
            }
        }
        after
    }
}

/// The spellings a keyword is looked for in: as written when it has capitals, else
/// lowercase, UPPERCASE and Capitalized (`password`, `PASSWORD`, `Password`), which
/// covers snake, SCREAMING and camel case key names. A plain case-sensitive literal
/// set keeps the prefilter on the regex crate's fast multi-literal search.
fn case_variants(kw: &str) -> Vec<String> {
    if kw.bytes().any(|b| b.is_ascii_uppercase()) {
        return vec![kw.to_string()];
    }
    let mut capital = String::with_capacity(kw.len());
    let mut first = true;
    for c in kw.chars() {
        if first && c.is_ascii_alphabetic() {
            capital.push(c.to_ascii_uppercase());
            first = false;
        } else {
            capital.push(c);
        }
    }
    let mut v = vec![kw.to_string(), kw.to_ascii_uppercase(), capital];
    v.sort();
    v.dedup();
    v
}

fn next_char(text: &str, at: usize) -> usize {
    match text[at..].chars().next() {
        Some(c) => at + c.len_utf8(),
        None => at + 1,
    }
}

fn overlaps(markers: &[(usize, usize)], start: usize, end: usize) -> bool {
    // Markers are sorted; find the first whose end is past `start`.
    let i = markers.partition_point(|&(_, e)| e <= start);
    markers.get(i).is_some_and(|&(s, _)| s < end)
}

/// Merges overlapping raw findings into their union; kind of the longest member,
/// then the earliest, then the highest-priority rule.
fn merge(mut raw: Vec<Raw>) -> Vec<Finding> {
    raw.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(a.rule.cmp(&b.rule))
    });
    let mut out: Vec<Finding> = Vec::new();
    let mut best_len = 0usize;
    for r in raw {
        let len = r.end - r.start;
        if let Some(last) = out.last_mut()
            && r.start < last.end
        {
            if r.end > last.end {
                last.end = r.end;
            }
            if len > best_len {
                best_len = len;
                last.kind = r.kind;
            }
            continue;
        }
        best_len = len;
        out.push(Finding {
            kind: r.kind,
            start: r.start,
            end: r.end,
        });
    }
    out
}

fn replace(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        out.push_str(&text[at..f.start]);
        out.push_str(REDACTION_PREFIX);
        out.push_str(f.kind);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

// ---- value and key heuristics -------------------------------------------------------

/// A value that stands for a secret rather than being one: empty, a template or
/// variable reference, a mask, a `<placeholder>`.
fn is_placeholder(v: &str) -> bool {
    let t = v.trim();
    if t.is_empty() || t.starts_with(REDACTION_PREFIX) {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("your")
        || lower.starts_with("<your")
        || matches!(
            lower.as_str(),
            "changeme"
                | "password"
                | "passwd"
                | "pass"
                | "secret"
                | "token"
                | "apikey"
                | "api_key"
                | "redacted"
                | "hidden"
                | "masked"
                | "example"
        )
    {
        return true;
    }
    let mut chars = t.chars();
    if let Some(first) = chars.next() {
        let same = chars.all(|c| c == first);
        if same && (t.chars().count() >= 3 || "*x.-#•".contains(first)) {
            return true;
        }
    }
    // SQL bind parameters and format directives.
    if t == "?" || is_format_directive(t) {
        return true;
    }
    if (t.starts_with(':') || t.starts_with('@'))
        && t.len() > 1
        && t[1..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return true;
    }
    let rest = strip_templates(t);
    rest.len() < t.len() && rest.chars().all(|c| " \t-_./:@\"'*,;".contains(c))
}

fn is_format_directive(t: &str) -> bool {
    let b = t.as_bytes();
    match b {
        [b'%', c] => c.is_ascii_alphabetic(),
        [b'%', b'(', .., b')', c] => c.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Removes `${...}`, `$(...)`, `{{...}}`, `{...}`, `<...>`, `%VAR%` and `$VAR` pieces.
fn strip_templates(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &t[i..];
        let skip = if rest.starts_with("${") || rest.starts_with("{{") {
            rest.find('}').map(|e| {
                let mut e = e + 1;
                while rest[e..].starts_with('}') {
                    e += 1;
                }
                e
            })
        } else if rest.starts_with("$(") {
            rest.find(')').map(|e| e + 1)
        } else if rest.starts_with('{') {
            rest.find('}').map(|e| e + 1)
        } else if rest.starts_with('<') {
            rest.find('>').map(|e| e + 1)
        } else if let Some(tail) = rest.strip_prefix('%') {
            tail.find('%')
                .filter(|&e| {
                    e > 0
                        && tail[..e]
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_')
                })
                .map(|e| e + 2)
        } else if let Some(tail) = rest.strip_prefix('$') {
            let n = tail
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            let starts_alpha = tail
                .bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
            (n > 0 && starts_alpha).then_some(n + 1)
        } else {
            None
        };
        match skip {
            Some(n) if n > 0 => i += n,
            _ => {
                let c = rest.chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8().max(1);
            }
        }
    }
    out
}

fn is_null_word(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "true"
            | "false"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "null"
            | "nil"
            | "none"
            | "undefined"
            | "nan"
            | "required"
            | "optional"
            | "bearer"
            | "basic"
            | "token"
    )
}

fn is_auth_scheme(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "bearer" | "basic" | "token" | "digest" | "negotiate" | "ntlm" | "apikey" | "api-key"
    )
}

/// Shannon entropy in bits per character.
fn entropy(v: &str) -> f64 {
    let mut counts: HashMap<char, usize> = HashMap::new();
    let mut n = 0usize;
    for c in v.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A token-like value: long enough, with digits or symbols, not a word.
fn looks_random(v: &str) -> bool {
    let len = v.chars().count();
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let symbols = v.chars().any(|c| "-._~+/=".contains(c));
    len >= 16 && (letters || digits) && (digits || symbols || mixed_case_heavy(v))
}

/// Letters whose case flips often (`dXNlcjpwYXNz`), as in base64, unlike names
/// (`authHeader`, `AuthorizationToken`).
fn case_scrambled(v: &str) -> bool {
    let letters: Vec<bool> = v
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .map(|b| b.is_ascii_uppercase())
        .collect();
    let flips = letters.windows(2).filter(|w| w[0] != w[1]).count();
    flips >= 4 && flips * 4 >= letters.len()
}

fn mixed_case_heavy(v: &str) -> bool {
    let n = v.chars().count();
    let upper = v.chars().filter(|c| c.is_ascii_uppercase()).count();
    let lower = v.chars().filter(|c| c.is_ascii_lowercase()).count();
    n >= 20 && upper * 10 >= n * 3 && lower * 10 >= n * 3
}

fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// An absolute or relative file path (`/home/me/x`, `./key.pem`, `/tmp`), not a
/// base64 value that happens to start with `/`.
fn is_path_like(v: &str) -> bool {
    let rooted = ["/", "./", "../", "~/"].iter().any(|p| v.starts_with(p));
    if !rooted
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-~".contains(&b))
    {
        return false;
    }
    v.matches('/').count() >= 2
        || v[1..]
            .bytes()
            .all(|b| !b.is_ascii_uppercase() && !b.is_ascii_digit())
}

/// A high-entropy value for the low-confidence `generic_secret` rule.
fn generic_value_ok(v: &str) -> bool {
    let n = v.chars().count();
    if n < 12 || v.chars().any(char::is_whitespace) {
        return false;
    }
    if is_uuid(v) || v.contains("://") || is_path_like(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if [
        "ssh-",
        "ecdsa-",
        "sk-ssh-",
        "sk-ecdsa-",
        "sha256:",
        "sha512-",
        "sha384-",
        "sha1-",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
    {
        return false;
    }
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let b64sym =
        v.contains(['+', '/']) || v.ends_with('=') && !v.trim_end_matches('=').contains('=');
    (digits || b64sym || mixed_case_heavy(v)) && entropy(v) >= 3.0
}

/// Splits a key name into words at separators and camelCase boundaries, as slices
/// of `lower` (the key in lowercase; keys are ASCII).
fn split_words<'a>(key: &str, lower: &'a str) -> Vec<&'a str> {
    let b = key.as_bytes();
    let mut words = Vec::with_capacity(4);
    let mut start: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if let Some(s) = start.take() {
                words.push(&lower[s..i]);
            }
            continue;
        }
        if let Some(s) = start {
            let prev = b[i - 1];
            let next_lower = b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if c.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower))
            {
                words.push(&lower[s..i]);
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&lower[s..]);
    }
    words
}

fn is_strong_word(w: &str) -> bool {
    w.contains("passw")
        || matches!(
            w,
            "pwd"
                | "pass"
                | "passphrase"
                | "passcode"
                | "secret"
                | "secrets"
                | "token"
                | "credential"
                | "credentials"
                | "creds"
                | "cred"
        )
        || [
            "token",
            "secret",
            "pwd",
            "apikey",
            "secretkey",
            "privatekey",
            "passphrase",
        ]
        .iter()
        .any(|s| w.ends_with(s))
}

fn is_weak_word(w: &str) -> bool {
    matches!(
        w,
        "key"
            | "auth"
            | "cookie"
            | "session"
            | "sessionid"
            | "salt"
            | "hmac"
            | "jwt"
            | "bearer"
            | "oauth"
            | "authkey"
            | "sessionkey"
    )
}

/// Words before `key` that make it a secret key (`api_key`, `signing_key`, ...).
fn is_key_prefix(w: &str) -> bool {
    matches!(
        w,
        "api"
            | "access"
            | "secret"
            | "private"
            | "auth"
            | "encryption"
            | "encrypt"
            | "signing"
            | "sign"
            | "master"
            | "client"
            | "service"
            | "app"
            | "application"
            | "account"
            | "license"
            | "licence"
            | "shared"
            | "hmac"
            | "webhook"
            | "deploy"
            | "admin"
            | "root"
            | "consumer"
            | "subscription"
            | "storage"
            | "write"
            | "ingest"
            | "crypto"
            | "cipher"
            | "aes"
            | "jwt"
            | "session"
    )
}

/// Words that, next to a secret word, make the key name something other than a
/// secret (`token_type`, `password_file`, `public_key`, `max_tokens`, `NextToken`).
/// Sorted, for binary search.
const NEUTRAL_WORDS: &[&str] = &[
    "accesskey",
    "alg",
    "algorithm",
    "authentication",
    "backend",
    "bos",
    "button",
    "cache",
    "caption",
    "checksum",
    "cls",
    "cmd",
    "command",
    "completion",
    "complexity",
    "continuation",
    "count",
    "cursor",
    "dedup",
    "desc",
    "description",
    "digest",
    "dir",
    "disabled",
    "enable",
    "enabled",
    "encoding",
    "encryption",
    "endpoint",
    "endpoints",
    "env",
    "eos",
    "error",
    "exp",
    "expiration",
    "expires",
    "expiry",
    "field",
    "fields",
    "file",
    "filename",
    "files",
    "fingerprint",
    "foreign",
    "format",
    "hash",
    "hasher",
    "hashing",
    "header",
    "headers",
    "help",
    "helper",
    "hint",
    "id",
    "idempotency",
    "ids",
    "index",
    "input",
    "integrity",
    "kind",
    "label",
    "len",
    "length",
    "lifetime",
    "limit",
    "link",
    "location",
    "manager",
    "mask",
    "max",
    "message",
    "method",
    "mgr",
    "min",
    "mode",
    "msg",
    "name",
    "names",
    "next",
    "num",
    "number",
    "offset",
    "output",
    "pad",
    "page",
    "pagination",
    "partition",
    "path",
    "paths",
    "pattern",
    "placeholder",
    "placement",
    "policy",
    "position",
    "prefix",
    "prev",
    "previous",
    "primary",
    "prompt",
    "provider",
    "public",
    "range",
    "ref",
    "regex",
    "required",
    "resume",
    "rounds",
    "routing",
    "row",
    "scheme",
    "sep",
    "size",
    "sort",
    "source",
    "spec",
    "special",
    "stdin",
    "stmt",
    "stop",
    "store",
    "strategy",
    "strength",
    "style",
    "suffix",
    "sync",
    "text",
    "timeout",
    "title",
    "tooltip",
    "total",
    "ttl",
    "type",
    "types",
    "unk",
    "uri",
    "url",
    "urls",
    "validation",
    "validator",
    "var",
    "variable",
    "version",
];

fn is_neutral_word(w: &str) -> bool {
    NEUTRAL_WORDS.binary_search(&w).is_ok()
}

/// Classifies a key name: `password_assignment` for strongly secret names (any
/// literal value counts), `generic_secret` for weak ones (the value must look
/// random), `None` for everything else.
fn classify_key(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    let words = split_words(key, &lower);
    let mut strong = false;
    let mut weak = false;
    let mut secret_at = vec![false; words.len()];
    for (i, &w) in words.iter().enumerate() {
        if is_strong_word(w) {
            strong = true;
            secret_at[i] = true;
        } else if w == "key" && i > 0 && is_key_prefix(words[i - 1]) {
            strong = true;
            secret_at[i] = true;
            secret_at[i - 1] = true;
        } else if is_weak_word(w) {
            weak = true;
            secret_at[i] = true;
        }
    }
    if !strong && !weak {
        return None;
    }
    if words
        .iter()
        .zip(&secret_at)
        .any(|(w, &s)| !s && is_neutral_word(w))
    {
        return None;
    }
    if strong {
        Some("password_assignment")
    } else {
        Some("generic_secret")
    }
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

fn is_identifier(v: &str) -> bool {
    let mut chars = v.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_member_path(v: &str) -> bool {
    v.contains('.')
        && v.split('.').all(|p| {
            let p = p.strip_prefix('$').unwrap_or(p);
            is_identifier(p)
        })
}

/// A numeric literal of code: `0x1F`, `0o17`, `0b101`, `1_000`, `3.5`, `-7`, `42u32`
/// (a plain run of six or more digits may still be a PIN and is not one of these).
fn is_number_literal(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let (signed, l) = match l.strip_prefix(['-', '+']) {
        Some(rest) => (true, rest.to_string()),
        None => (false, l),
    };
    for p in ["0x", "0o", "0b"] {
        if let Some(rest) = l.strip_prefix(p) {
            return !rest.is_empty()
                && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        }
    }
    let (num, suffix) = match l.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&l[..i], &l[i..]),
        None => (l.as_str(), ""),
    };
    let typed = matches!(
        suffix,
        "" | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
            | "l"
            | "ul"
            | "ll"
            | "ull"
            | "f"
            | "d"
            | "n"
    );
    let num_ok = num.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && num
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'_' || b == b'.');
    num_ok && typed && (signed || !suffix.is_empty() || num.contains(['_', '.']))
}

/// `snake_case` or `SCREAMING_CASE` with an underscore between words: a variable or
/// constant name in code, not a generated secret.
fn is_snake_or_screaming(v: &str) -> bool {
    let t = v.trim_start_matches('_');
    is_identifier(v)
        && t.contains('_')
        && (t.bytes().all(|b| !b.is_ascii_uppercase())
            || t.bytes().all(|b| !b.is_ascii_lowercase()))
}

fn is_type_name(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let l = l.as_str();
    matches!(
        l,
        "i8" | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "f32"
            | "f64"
    ) || ["int", "uint", "float"].iter().any(|p| {
        l.strip_prefix(p)
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// `KEY=value` at the start of a line (optionally after `export`, `ENV`, `ARG`, `set`),
/// with nothing between key and value but `=`: env files, shell, Dockerfiles.
fn env_style(text: &str, key_start: usize, key_end: usize, value: (usize, usize)) -> bool {
    if &text[key_end..value.0] != "=" {
        return false;
    }
    // The key opens its line (no indentation: that would be code or yaml)...
    let before = &text[..key_start];
    let at_line_start = |s: &str| s.is_empty() || s.ends_with('\n');
    let opens = at_line_start(before)
        || ["export ", "ENV ", "ARG ", "set ", "setx "]
            .iter()
            .any(|p| before.strip_suffix(p).is_some_and(at_line_start));
    // ...and the value closes it (`KEY=value,` is an argument list).
    let rest = text.as_bytes()[value.1..].iter().take(256);
    let closes = rest
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .is_none_or(|b| b == b'\n' || b == b'#');
    opens && closes
}

/// A `key <op> value` candidate taken apart: byte ranges of the key and the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Assign {
    key: (usize, usize),
    value: (usize, usize),
    quoted: bool,
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn skip_hws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// `: Type =` (a typed declaration: `val password: String = "..."`), returning the
/// end of the `=`.
fn annotated_eq(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) != Some(&b':') {
        return None;
    }
    j = skip_hws(b, j + 1);
    if !b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    while b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || b"_<>[]&:".contains(c))
    {
        j += 1;
    }
    let k = skip_hws(b, j);
    (k > j && b.get(k) == Some(&b'=') && !matches!(b.get(k + 1), Some(b'=' | b'>')))
        .then_some(k + 1)
}

/// An assignment operator at `i`: `=>`, `:=`, `?=`, `=` (blanks allowed before), or
/// a `:` right at `i` (`key: value`; `key : value` is prose). Comparisons (`==`,
/// `!=`) are code and do not count.
fn parse_op(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) == Some(&b':') && b.get(i + 1) != Some(&b':') {
        return Some(i + 1);
    }
    let j = skip_hws(b, i);
    let rest = &b[j.min(b.len())..];
    for op in [&b"=>"[..], b":=", b"?="] {
        if rest.starts_with(op) {
            return Some(j + op.len());
        }
    }
    (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'=')).then_some(j + 1)
}

/// A double-quoted value starting at `i` (just after the opening quote): the end of
/// its content, which is followed by `"` or `\"`. Backslash escapes are skipped.
fn dq_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match b.get(i)? {
            b'"' => return Some(i),
            b'\r' | b'\n' => return None,
            b'\\' => match b.get(i + 1)? {
                b'"' => return Some(i),
                b'\r' | b'\n' => return None,
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
}

/// The value at `v`: `"..."` (also `\"...\"` inside JSON strings), `'...'`, or a bare
/// run up to a blank, quote or delimiter.
fn parse_value(b: &[u8], v: usize, bare_stop: &[u8]) -> Option<((usize, usize), bool)> {
    match b.get(v)? {
        b'\\' if b.get(v + 1) == Some(&b'"') => Some(((v + 2, dq_end(b, v + 2)?), true)),
        b'"' => Some(((v + 1, dq_end(b, v + 1)?), true)),
        b'\'' => {
            let mut i = v + 1;
            while *b.get(i)? != b'\'' {
                if matches!(b[i], b'\r' | b'\n') {
                    return None;
                }
                i += 1;
            }
            Some(((v + 1, i), true))
        }
        _ => {
            let mut i = v;
            while b
                .get(i)
                .is_some_and(|c| !c.is_ascii_whitespace() && !bare_stop.contains(c))
            {
                i += 1;
            }
            (i > v).then_some(((v, i), false))
        }
    }
}

/// `key <op> value` at `start` (where the candidate regex matched).
fn parse_assignment(text: &str, start: usize) -> Option<Assign> {
    let b = text.as_bytes();
    let mut i = start;
    while b.get(i).is_some_and(|c| is_key_byte(*c)) {
        i += 1;
    }
    let key = (start, i);
    if key.0 == key.1 {
        return None;
    }
    if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
        i += 2;
    } else if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    let op_end = annotated_eq(b, i).or_else(|| parse_op(b, i))?;
    let v = skip_hws(b, op_end);
    let (value, quoted) = parse_value(b, v, b"\"'`,;)]}&|>\\")?;
    Some(Assign { key, value, quoted })
}

/// `--flag value` / `--flag=value` / `-flag value` at `start` (a blank or the start).
fn parse_cli_flag(text: &str, start: usize) -> Option<Assign> {
    let b = text.as_bytes();
    let mut i = start;
    if matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let dashes = b[i.min(b.len())..]
        .iter()
        .take_while(|c| **c == b'-')
        .count();
    if !(1..=2).contains(&dashes) {
        return None;
    }
    i += dashes;
    let k0 = i;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
    {
        i += 1;
    }
    if i == k0 {
        return None;
    }
    let key = (k0, i);
    let v = if b.get(i) == Some(&b'=') {
        i + 1
    } else {
        let j = skip_hws(b, i);
        if j == i {
            return None;
        }
        j
    };
    let (value, quoted) = parse_value(b, v, b"\"'`;|&)\\")?;
    Some(Assign { key, value, quoted })
}

fn accept_assignment(text: &str, a: &Assign, cli: bool) -> Option<(&'static str, usize, usize)> {
    let before = &text[..a.key.0];
    // A key starts at a word boundary (the CLI pattern anchors its own), and
    // `scheme://user:pass@` is the URL rule's business.
    if !cli && before.chars().next_back().is_some_and(is_key_char) || before.ends_with("://") {
        return None;
    }
    // Docstring fields: `:param token: ...`, `@param password ...`.
    let tail = before.trim_end_matches([' ', '\t']);
    if [
        ":param", ":type", ":ivar", ":cvar", ":arg", "@param", "@type", ":raises",
    ]
    .iter()
    .any(|p| tail.ends_with(p))
    {
        return None;
    }
    let quoted = a.quoted;
    let v = &text[a.value.0..a.value.1];
    if v.chars().count() < 3 || v.contains("://") || v.starts_with([':', '!']) {
        // Too short to be a secret; a URL (its password is the URL rule's); a
        // symbol, rst role, YAML tag or negation.
        return None;
    }
    // Cheap value checks first: most candidates in code are calls and identifiers.
    if !quoted {
        if v.contains(['(', '[', '{', '<']) || v.starts_with(['&', '*']) {
            return None;
        }
        let env = !cli && env_style(text, a.key.0, a.key.1, a.value);
        let plain_word = is_identifier(v) && !v.bytes().any(|b| b.is_ascii_digit());
        if cli {
            // `--token TOKEN`, `--password-file x`, `--password options`.
            if v.starts_with('-') || plain_word {
                return None;
            }
        } else {
            if is_member_path(v)
                || v.contains("::")
                || is_type_name(v)
                || is_path_like(v)
                || is_number_literal(v)
            {
                return None;
            }
            if (plain_word || is_snake_or_screaming(v)) && !env {
                return None;
            }
        }
    } else if is_template_fragment(text, a) {
        return None;
    }
    let kind = classify_key(&text[a.key.0..a.key.1])?;
    if is_placeholder(v) || is_null_word(v) {
        return None;
    }
    if v.len() < 6 && v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if is_snake_or_screaming(v) && classify_key(v).is_some() {
        // `refresh_token_key = 'refresh_token'`: the name of a secret, not one.
        return None;
    }
    if v.contains(char::is_whitespace) {
        // Prose (`'pass': 'The pass statement'`), except where a passphrase fits.
        let key = text[a.key.0..a.key.1].to_ascii_lowercase();
        if !["passw", "passphrase", "secret"]
            .iter()
            .any(|w| key.contains(w))
        {
            return None;
        }
    }
    if quoted && is_path_like(v) && kind == "generic_secret" {
        return None;
    }
    if kind == "generic_secret" && !generic_value_ok(v) {
        return None;
    }
    Some((kind, a.value.0, a.value.1))
}

/// A quoted string that is a format template (`"%s:%s"`, `"{}"`) or a fragment
/// concatenated with code (`" --user=" + name`, `"%s" % x`, `"{}".format(x)`).
fn is_template_fragment(text: &str, a: &Assign) -> bool {
    let v = &text[a.value.0..a.value.1];
    let b = v.as_bytes();
    let directive = b.windows(2).any(|w| {
        w[0] == b'%' && (w[1].is_ascii_alphabetic() || w[1] == b'(')
            || w[0] == b'{' && (w[1] == b'}' || w[1].is_ascii_digit())
    });
    if directive {
        return true;
    }
    // After the closing quote (one or two bytes: `"` or `\"`).
    let after = text.as_bytes()[a.value.1..].iter().skip(1).take(64);
    let mut next = after
        .copied()
        .skip_while(|c| matches!(c, b' ' | b'\t' | b'"' | b'\\'));
    matches!(next.next(), Some(b'+' | b'%' | b'.' | b'|'))
}

/// Whether `segment` is unpadded base64 (standard or URL alphabet) of ASCII digits,
/// as the first part of a Discord bot token is (the bot's numeric id).
fn decodes_to_digits(segment: &str) -> bool {
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    let mut bytes = 0usize;
    for c in segment.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return false,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = (acc >> bits) & 0xff;
            if !(u32::from(b'0')..=u32::from(b'9')).contains(&byte) {
                return false;
            }
            bytes += 1;
        }
    }
    bytes >= 17
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Fake secrets are generated (a fixed-seed PRNG over each format's alphabet) and
    // their prefixes split with `concat!`, so this file holds no literal token that a
    // secret scanner would flag, and none of them can be a real credential.

    const DIGITS: &str = "0123456789";
    const HEX: &str = "0123456789abcdef";
    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const PK: &str = concat!("PRIV", "ATE KEY");

    fn r() -> &'static Redactor {
        Redactor::global()
    }

    /// Deterministic pseudo-random text over `alphabet` (splitmix64).
    fn rnd(seed: u64, len: usize, alphabet: &str) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        (0..len)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                chars[(z % chars.len() as u64) as usize]
            })
            .collect()
    }

    fn b64(bytes: &[u8], alphabet: &str) -> String {
        let a = alphabet.as_bytes();
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.len();
            let v = (u32::from(chunk[0]) << 16)
                | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                | u32::from(*chunk.get(2).unwrap_or(&0));
            for i in 0..=n {
                out.push(a[((v >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }

    fn marker(kind: &str) -> String {
        format!("{REDACTION_PREFIX}{kind}]")
    }

    /// `before + secret + after` scrubs to `before + [REDACTED:kind] + after`.
    fn assert_redacted(kind: &str, before: &str, secret: &str, after: &str) {
        assert!(KINDS.contains(&kind), "unknown kind {kind}");
        let text = format!("{before}{secret}{after}");
        let out = r().scrub(&text);
        assert_eq!(
            out,
            format!("{before}{}{after}", marker(kind)),
            "input: {text:?}"
        );
        assert_eq!(r().scrub(&out), out, "not idempotent");
        let found = r().find(&text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, kind);
        assert_eq!(&text[found[0].start..found[0].end], secret);
        assert!(r().contains_secret(&text));
    }

    fn assert_untouched(text: &str) {
        let out = r().scrub(text);
        assert!(
            matches!(out, Cow::Borrowed(_)),
            "changed: {text:?}\n   -> {out:?}\n   findings: {:?}",
            r().find(text)
        );
        assert!(!r().contains_secret(text));
    }

    fn pem(label: &str, body_lines: usize, seed: u64, headers: &str) -> String {
        let mut s = format!("-----BEGIN {label}-----\n{headers}");
        for i in 0..body_lines {
            s.push_str(&rnd(seed + i as u64, 64, B64));
            s.push('\n');
        }
        s.push_str(&rnd(seed + 99, 24, B64));
        s.push_str("==\n");
        s.push_str(&format!("-----END {label}-----"));
        s
    }

    fn discord_token() -> String {
        let id = b64(b"123456789012345678", URLSAFE);
        format!("{id}.{}.{}", rnd(46, 6, URLSAFE), rnd(47, 38, URLSAFE))
    }

    fn jwt() -> String {
        format!(
            "{}.{}.{}",
            concat!("eyJhbGciOiJIUzI1Ni", "IsInR5cCI6IkpXVCJ9"),
            concat!("eyJzdWIiOiIxMjM0NTY3", "ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ"),
            rnd(71, 43, URLSAFE)
        )
    }

    macro_rules! format_tests {
        ($($name:ident: $kind:literal => ($before:expr, $secret:expr, $after:expr);)*) => {
            $(
                #[test]
                fn $name() {
                    let secret: String = $secret;
                    assert_redacted($kind, $before, &secret, $after);
                }
            )*
            /// Every kind exercised by a format test above.
            const TESTED_KINDS: &[&str] = &[$($kind),*];
        };
    }

    format_tests! {
        redacts_gcp_service_account_private_key: "gcp_service_account_private_key" => (
            r#"{"type": "service_account", "private_key_id": "4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b", "private_key": ""#,
            format!("-----BEGIN {PK}-----\\n{}\\n{}\\n-----END {PK}-----\\n", rnd(1, 64, B64), rnd(2, 40, B64)),
            r#"", "client_email": "bot@proj.iam.gserviceaccount.com"}"#
        );
        redacts_rsa_private_key_block: "private_key" => (
            "key file:\n", pem(&format!("RSA {PK}"), 6, 3, ""), "\nnext line"
        );
        redacts_aws_access_key_id: "aws_access_key_id" => (
            "aws_access_key_id = ", format!("{}{}", concat!("AK", "IA"), rnd(4, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")), "\n"
        );
        redacts_labelled_aws_secret_access_key: "aws_secret_access_key" => (
            "aws_secret_access_key = ", rnd(5, 40, B64), "\nregion = us-east-1"
        );
        redacts_labelled_aws_session_token: "aws_session_token" => (
            "AWS_SESSION_TOKEN=", rnd(6, 300, B64), "\n"
        );
        redacts_aws_bedrock_api_key: "aws_bedrock_api_key" => (
            "key: ", format!("{}{}", concat!("AB", "SK"), rnd(7, 120, B64)), " end"
        );
        redacts_google_api_key: "google_api_key" => (
            "https://maps.googleapis.com/maps/api/js?key=", format!("{}{}", concat!("AI", "za"), rnd(8, 35, URLSAFE)), "&callback=init"
        );
        redacts_google_oauth_client_secret: "google_oauth_client_secret" => (
            "secret ", format!("{}{}", concat!("GOC", "SPX-"), rnd(9, 28, URLSAFE)), " here"
        );
        redacts_google_oauth_access_token: "google_oauth_token" => (
            "got ", format!("{}{}", concat!("ya", "29."), rnd(10, 120, URLSAFE)), " ok"
        );
        redacts_azure_storage_account_key: "azure_storage_account_key" => (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=", format!("{}==", rnd(11, 86, B64)), ";EndpointSuffix=core.windows.net"
        );
        redacts_azure_shared_access_key: "azure_shared_access_key" => (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=",
            format!("{}=", rnd(12, 43, B64)), ";EntityPath=q"
        );
        redacts_azure_sas_signature: "azure_sas_signature" => (
            "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=rl&se=2030-01-01T00:00:00Z&spr=https&sig=",
            format!("{}%3D", rnd(13, 43, ALNUM)), " done"
        );
        redacts_azure_ad_client_secret: "azure_ad_client_secret" => (
            "value ", format!("{}7Q~{}", rnd(14, 3, ALNUM), rnd(15, 34, ALNUM)), " end"
        );
        redacts_alibaba_access_key_id: "alibaba_access_key_id" => (
            "id ", format!("{}{}", concat!("LT", "AI"), rnd(16, 20, ALNUM)), " end"
        );
        redacts_digitalocean_token: "digitalocean_token" => (
            "do ", format!("{}{}", concat!("dop", "_v1_"), rnd(17, 64, HEX)), " end"
        );
        redacts_cloudflare_origin_ca_key: "cloudflare_origin_ca_key" => (
            "ca ", format!("{}{}-{}", concat!("v1", ".0-"), rnd(18, 24, HEX), rnd(19, 146, HEX)), " end"
        );
        redacts_labelled_cloudflare_api_token: "cloudflare_api_token" => (
            "CLOUDFLARE_API_TOKEN=", rnd(20, 40, URLSAFE), "\n"
        );
        redacts_heroku_api_key: "heroku_api_key" => (
            "heroku ", format!("{}{}", concat!("HR", "KU-AA"), rnd(21, 58, URLSAFE)), " end"
        );
        redacts_databricks_token: "databricks_token" => (
            "db ", format!("{}{}", concat!("da", "pi"), rnd(22, 32, HEX)), " end"
        );
        redacts_supabase_token: "supabase_token" => (
            "sb ", format!("{}{}", concat!("sb", "p_"), rnd(23, 40, HEX)), " end"
        );
        redacts_fly_io_token: "fly_io_token" => (
            "fly ", format!("{}{}", concat!("fo", "1_"), rnd(24, 43, URLSAFE)), " end"
        );
        redacts_planetscale_token: "planetscale_token" => (
            "ps ", format!("{}{}", concat!("pscale", "_tkn_"), rnd(25, 43, ALNUM)), " end"
        );
        redacts_terraform_cloud_token: "terraform_cloud_token" => (
            "tf ", format!("{}{}{}", rnd(26, 14, "abcdefghijklmnopqrstuvwxyz0123456789"), concat!(".atlas", "v1."), rnd(27, 67, ALNUM)), " end"
        );
        redacts_pulumi_access_token: "pulumi_access_token" => (
            "pulumi ", format!("{}{}", concat!("pu", "l-"), rnd(28, 40, HEX)), " end"
        );
        redacts_vault_token: "vault_token" => (
            "VAULT ", format!("{}{}", concat!("hv", "s."), rnd(29, 95, URLSAFE)), " end"
        );
        redacts_doppler_token: "doppler_token" => (
            "doppler ", format!("{}{}", concat!("dp", ".pt."), rnd(30, 43, ALNUM)), " end"
        );
        redacts_github_fine_grained_pat: "github_fine_grained_pat" => (
            "gh ", format!("{}{}_{}", concat!("github", "_pat_"), rnd(31, 22, ALNUM), rnd(32, 59, ALNUM)), " end"
        );
        redacts_github_classic_pat: "github_pat" => (
            "git clone https://x-access-token:", format!("{}{}", concat!("gh", "p_"), rnd(33, 36, ALNUM)), "@github.com/o/r.git"
        );
        redacts_github_oauth_token: "github_oauth_token" => (
            "gh ", format!("{}{}", concat!("gh", "o_"), rnd(34, 36, ALNUM)), " end"
        );
        redacts_github_app_token: "github_app_token" => (
            "gh ", format!("{}{}", concat!("gh", "s_"), rnd(35, 36, ALNUM)), " end"
        );
        redacts_github_refresh_token: "github_refresh_token" => (
            "gh ", format!("{}{}", concat!("gh", "r_"), rnd(36, 76, ALNUM)), " end"
        );
        redacts_gitlab_pat: "gitlab_pat" => (
            "gl ", format!("{}{}", concat!("glp", "at-"), rnd(37, 20, URLSAFE)), " end"
        );
        redacts_gitlab_pipeline_trigger_token: "gitlab_token" => (
            "gl ", format!("{}{}", concat!("glp", "tt-"), rnd(38, 40, HEX)), " end"
        );
        redacts_bitbucket_app_password: "bitbucket_app_password" => (
            "bb ", format!("{}{}", concat!("AT", "BB"), rnd(39, 32, ALNUM)), " end"
        );
        redacts_atlassian_api_token: "atlassian_api_token" => (
            "jira ", format!("{}{}={}", concat!("ATA", "TT3"), rnd(40, 180, URLSAFE), rnd(41, 8, "0123456789ABCDEF")), " end"
        );
        redacts_npm_token: "npm_token" => (
            "//registry.npmjs.org/:_authToken=", format!("{}{}", concat!("np", "m_"), rnd(42, 36, ALNUM)), "\n"
        );
        redacts_pypi_token: "pypi_token" => (
            "password = ", format!("{}{}", concat!("pypi-AgEI", "cHlwaS5vcmc"), rnd(43, 70, URLSAFE)), "\n"
        );
        redacts_docker_hub_pat: "docker_hub_pat" => (
            "docker login -p ", format!("{}{}", concat!("dckr", "_pat_"), rnd(44, 27, URLSAFE)), " user"
        );
        redacts_postman_api_key: "postman_api_key" => (
            "pm ", format!("{}{}-{}", concat!("PM", "AK-"), rnd(45, 24, HEX), rnd(46, 34, HEX)), " end"
        );
        redacts_linear_api_key: "linear_api_key" => (
            "linear ", format!("{}{}", concat!("lin", "_api_"), rnd(47, 40, ALNUM)), " end"
        );
        redacts_notion_token: "notion_token" => (
            "notion ", format!("{}{}{}", concat!("nt", "n_"), rnd(48, 11, DIGITS), rnd(49, 35, ALNUM)), " end"
        );
        redacts_slack_bot_token: "slack_token" => (
            "slack ", format!("{}{}-{}-{}", concat!("xo", "xb-"), rnd(50, 12, DIGITS), rnd(51, 13, DIGITS), rnd(52, 24, ALNUM)), " end"
        );
        redacts_slack_app_token: "slack_app_token" => (
            "slack ", format!("{}A{}-{}-{}", concat!("xa", "pp-1-"), rnd(53, 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(54, 13, DIGITS), rnd(55, 64, HEX)), " end"
        );
        redacts_slack_webhook_path: "slack_webhook" => (
            "https://hooks.slack.com/", format!("services/T{}/B{}/{}", rnd(56, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(57, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rnd(58, 24, ALNUM)), " end"
        );
        redacts_discord_webhook_path: "discord_webhook" => (
            "https://discord.com/api/webhooks/", format!("{}/{}", rnd(59, 18, DIGITS), rnd(60, 68, URLSAFE)), " end"
        );
        redacts_discord_bot_token: "discord_bot_token" => (
            "DISCORD ", discord_token(), " end"
        );
        redacts_telegram_bot_token_in_api_url: "telegram_bot_token" => (
            "https://api.telegram.org/bot", format!("{}{}{}", rnd(61, 10, DIGITS), concat!(":A", "A"), rnd(62, 33, URLSAFE)), "/sendMessage"
        );
        redacts_twilio_api_key: "twilio_api_key" => (
            "twilio ", format!("{}{}", concat!("S", "K"), rnd(63, 32, HEX)), " end"
        );
        redacts_sendgrid_api_key: "sendgrid_api_key" => (
            "sg ", format!("{}{}.{}", concat!("S", "G."), rnd(64, 22, URLSAFE), rnd(65, 43, URLSAFE)), " end"
        );
        redacts_mailgun_api_key: "mailgun_api_key" => (
            "mg ", format!("{}{}", concat!("ke", "y-"), rnd(66, 32, HEX)), " end"
        );
        redacts_mailchimp_api_key: "mailchimp_api_key" => (
            "mc ", format!("{}{}", rnd(67, 32, HEX), concat!("-u", "s14")), " end"
        );
        redacts_brevo_api_key: "brevo_api_key" => (
            "brevo ", format!("{}{}-{}", concat!("xkey", "sib-"), rnd(68, 64, HEX), rnd(69, 16, ALNUM)), " end"
        );
        redacts_stripe_secret_key: "stripe_secret_key" => (
            "Stripe.api_key = '", format!("{}{}", concat!("sk_l", "ive_"), rnd(70, 99, ALNUM)), "'"
        );
        redacts_stripe_webhook_secret: "stripe_webhook_secret" => (
            "wh ", format!("{}{}", concat!("wh", "sec_"), rnd(71, 32, ALNUM)), " end"
        );
        redacts_shopify_token: "shopify_token" => (
            "shop ", format!("{}{}", concat!("shp", "at_"), rnd(72, 32, HEX)), " end"
        );
        redacts_square_token: "square_token" => (
            "sq ", format!("{}{}", concat!("EA", "AA"), rnd(73, 60, URLSAFE)), " end"
        );
        redacts_anthropic_api_key: "anthropic_api_key" => (
            "x-api-key: ", format!("{}{}AA", concat!("sk-an", "t-api03-"), rnd(74, 93, URLSAFE)), "\n"
        );
        redacts_openrouter_api_key: "openrouter_api_key" => (
            "or ", format!("{}{}", concat!("sk-o", "r-v1-"), rnd(75, 64, HEX)), " end"
        );
        redacts_openai_project_key: "openai_api_key" => (
            "OPENAI ", format!("{}{}", concat!("sk-pr", "oj-"), rnd(76, 156, URLSAFE)), " end"
        );
        redacts_huggingface_token: "huggingface_token" => (
            "hf ", format!("{}{}", concat!("h", "f_"), rnd(77, 34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")), " end"
        );
        redacts_replicate_api_token: "replicate_api_token" => (
            "rep ", format!("{}{}", concat!("r", "8_"), rnd(78, 37, ALNUM)), " end"
        );
        redacts_groq_api_key: "groq_api_key" => (
            "groq ", format!("{}{}", concat!("gs", "k_"), rnd(79, 52, ALNUM)), " end"
        );
        redacts_xai_api_key: "xai_api_key" => (
            "grok ", format!("{}{}", concat!("xa", "i-"), rnd(80, 80, ALNUM)), " end"
        );
        redacts_perplexity_api_key: "perplexity_api_key" => (
            "pplx ", format!("{}{}", concat!("pp", "lx-"), rnd(81, 48, ALNUM)), " end"
        );
        redacts_sentry_dsn_key_keeps_host: "sentry_dsn" => (
            "SENTRY_DSN=https://", rnd(82, 32, HEX), "@o123456.ingest.us.sentry.io/4504"
        );
        redacts_sentry_auth_token: "sentry_token" => (
            "sentry ", format!("{}{}", concat!("sntr", "ys_"), rnd(83, 120, ALNUM)), " end"
        );
        redacts_grafana_service_account_token: "grafana_token" => (
            "grafana ", format!("{}{}_{}", concat!("gl", "sa_"), rnd(84, 32, ALNUM), rnd(85, 8, HEX)), " end"
        );
        redacts_new_relic_user_key: "new_relic_key" => (
            "nr ", format!("{}{}", concat!("NR", "AK-"), rnd(86, 27, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")), " end"
        );
        redacts_age_secret_key: "age_secret_key" => (
            "# created: 2024\n", format!("{}{}", concat!("AGE-SECRET", "-KEY-1"), rnd(87, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")), "\n"
        );
        redacts_mapbox_secret_token: "mapbox_secret_token" => (
            "mapbox ", format!("{}{}.{}", concat!("sk.ey", "J1Ijoi"), rnd(88, 40, ALNUM), rnd(89, 22, URLSAFE)), " end"
        );
        redacts_jwt: "jwt" => (
            "session=", jwt(), "; Path=/"
        );
        redacts_only_the_password_of_url_credentials: "url_credentials" => (
            "DATABASE_URL=postgres://app:", format!("s3cr3t-{}", rnd(90, 12, ALNUM)), "@db.internal:5432/app"
        );
        redacts_basic_authorization_header_value: "authorization_header" => (
            "Authorization: Basic ", b64(format!("admin:{}", rnd(91, 12, ALNUM)).as_bytes(), B64), "\r\nHost: x"
        );
        redacts_bare_bearer_token: "bearer_token" => (
            "echo \"Bearer ", rnd(92, 40, ALNUM), "\""
        );
        redacts_curl_user_password: "cli_user_password" => (
            "curl -u admin:", format!("hunter2-{}", rnd(93, 8, ALNUM)), " https://api.example.com"
        );
        redacts_password_assignment_in_env_file: "password_assignment" => (
            "DB_USER=app\nDB_PASSWORD=", "hunter2".to_string(), "\nDB_HOST=localhost"
        );
        redacts_high_entropy_value_under_weak_key: "generic_secret" => (
            r#"{"auths": {"ghcr.io": {"auth": ""#, b64(format!("user:{}", rnd(94, 16, ALNUM)).as_bytes(), B64), r#""}}}"#
        );
    }

    #[test]
    fn every_kind_has_a_format_test() {
        let kinds = Redactor::kinds();
        assert!(kinds.len() >= 40, "only {} kinds", kinds.len());
        for k in &kinds {
            assert!(TESTED_KINDS.contains(k), "kind {k} has no test");
            assert!(
                k.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{k} is not snake_case"
            );
        }
        for k in TESTED_KINDS {
            assert!(kinds.contains(k));
        }
        let mut dedup = kinds.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), kinds.len(), "duplicate kinds");
        for spec in SPECS {
            assert!(
                KINDS.contains(&spec.kind),
                "{} missing from KINDS",
                spec.kind
            );
        }
    }

    #[test]
    fn every_rule_compiles() {
        assert_eq!(r().inner.rules.len(), SPECS.len());
        for rule in &r().inner.rules {
            assert!(
                rule.re.get().is_some(),
                "{} does not compile",
                rule.re.pattern
            );
        }
        assert!(!r().inner.keyword_res.is_empty());
        for spec in SPECS {
            for k in spec.keywords {
                let common = COMMON_WORDS.iter().any(|c| k.contains(c));
                assert!(
                    common || k.len() >= 4,
                    "keyword {k:?} is too short for the prefilter"
                );
            }
        }
        assert!(
            NEUTRAL_WORDS.windows(2).all(|w| w[0] < w[1]),
            "NEUTRAL_WORDS unsorted"
        );
        assert!(r().inner.common_re.is_some());
        assert!(r().inner.marker_re.get().is_some());
        assert!(r().inner.pem_cont.get().is_some());
        assert!(r().inner.pem_end_at.get().is_some());
        assert!(r().inner.pem_end.get().is_some());
    }

    // ---- more forms of the same formats -------------------------------------------------

    #[test]
    fn redacts_every_pem_private_key_flavour_whole() {
        for (i, label) in ["EC", "OPENSSH", "DSA", "ENCRYPTED", "PGP"]
            .iter()
            .enumerate()
        {
            let full = if *label == "PGP" {
                format!("PGP {PK} BLOCK")
            } else {
                format!("{label} {PK}")
            };
            let headers = if *label == "PGP" {
                "Version: GnuPG v2\nComment: Alice <alice@example.org>\n\n"
            } else {
                ""
            };
            let block = pem(&full, 4, 100 + i as u64, headers);
            assert_redacted("private_key", "before\n", &block, "\nafter");
        }
        let pkcs8 = pem(PK, 3, 120, "");
        assert_redacted("private_key", "", &pkcs8, "");
        let legacy_encrypted = pem(
            &format!("RSA {PK}"),
            3,
            130,
            "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n",
        );
        assert_redacted("private_key", "x ", &legacy_encrypted, " y");
    }

    #[test]
    fn redacts_truncated_pem_private_key_through_its_key_lines() {
        let head = format!(
            "-----BEGIN OPENSSH {PK}-----\n{}\n{}",
            rnd(140, 70, B64),
            rnd(141, 70, B64)
        );
        let text = format!("$ head -3 id_ed25519\n{head}\n$ ls");
        assert_eq!(
            r().scrub(&text),
            format!("$ head -3 id_ed25519\n{}\n$ ls", marker("private_key"))
        );
    }

    #[test]
    fn redacts_pem_private_key_inside_yaml_block_and_string_concatenation() {
        let yaml = format!(
            "tls:\n  key: |\n    -----BEGIN RSA {PK}-----\n    {}\n    {}\n    -----END RSA {PK}-----\n  crt: x",
            rnd(150, 64, B64),
            rnd(151, 30, B64)
        );
        let out = r().scrub(&yaml);
        assert_eq!(
            out,
            format!("tls:\n  key: |\n    {}\n  crt: x", marker("private_key"))
        );
        let go = format!(
            "const k = \"-----BEGIN EC {PK}-----\\n\" +\n\t\"{}\\n\" +\n\t\"-----END EC {PK}-----\\n\"",
            rnd(152, 64, B64)
        );
        let out = r().scrub(&go);
        assert_eq!(out, format!("const k = \"{}\\n\"", marker("private_key")));
    }

    #[test]
    fn leaves_pem_parser_source_code_alone() {
        let code = format!(
            "const BEGIN: &str = \"-----BEGIN RSA {PK}-----\";\nfn parse(s: &str) -> Option<Key> {{ todo() }}\nconst END: &str = \"-----END RSA {PK}-----\";"
        );
        let out = r().scrub(&code);
        // Only the header itself (and nothing of the code) is taken.
        assert!(
            out.contains("fn parse(s: &str) -> Option<Key> { todo() }"),
            "{out}"
        );
    }

    #[test]
    fn redacts_restricted_stripe_key_and_legacy_openai_key() {
        let rk = format!("{}{}", concat!("rk_l", "ive_"), rnd(160, 40, ALNUM));
        assert_redacted("stripe_secret_key", "k=", &rk, "");
        let legacy = format!(
            "{}{}{}{}",
            "sk-",
            rnd(161, 20, ALNUM),
            concat!("T3Blbk", "FJ"),
            rnd(162, 20, ALNUM)
        );
        assert_redacted("openai_api_key", "OPENAI: ", &legacy, "\n");
    }

    #[test]
    fn redacts_labelled_heroku_uuid_key_and_mailgun_new_key() {
        let uuid = "3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f";
        assert_redacted("heroku_api_key", "HEROKU_API_KEY=", uuid, "\n");
        let mg = format!(
            "{}-{}-{}",
            rnd(163, 32, HEX),
            rnd(164, 8, HEX),
            rnd(165, 8, HEX)
        );
        assert_redacted("mailgun_api_key", "MAILGUN_API_KEY=", &mg, "\n");
    }

    #[test]
    fn redacts_bearer_authorization_header_keeps_scheme() {
        let tok = rnd(166, 40, ALNUM);
        assert_redacted("authorization_header", "Authorization: Bearer ", &tok, "\n");
        assert_redacted(
            "authorization_header",
            "curl -H \"authorization: token ",
            &tok,
            "\" https://api",
        );
        // A JWT in the header is reported as a JWT (the more specific kind).
        assert_redacted("jwt", "Authorization: Bearer ", &jwt(), "\n");
    }

    #[test]
    fn redacts_url_credentials_for_many_schemes() {
        for (before, pw, after) in [
            (
                "mongodb+srv://admin:",
                "Pa55word1",
                "@cluster0.example.net/db",
            ),
            ("redis://:", "r3dis-pass", "@cache:6379/0"),
            ("amqp://guest:", "gu3st!x", "@rabbit:5672/"),
            ("https://user:", "p@ss2024", "@example.com/path"),
            ("mysql://root:", "toor1234", "@127.0.0.1:3306/app"),
        ] {
            assert_redacted("url_credentials", before, pw, after);
        }
    }

    #[test]
    fn redacts_password_assignment_in_many_syntaxes_keeping_the_key() {
        let cases: &[(&str, &str, &str)] = &[
            ("password=", "hunter2", ""),
            ("export PGPASSWORD=", "correcthorse", "\n"),
            ("passwd: ", "s3cret-pass", "\n"),
            ("secret = \"", "my super secret", "\"\n"),
            ("api_key = \"", "abc123def456", "\"\n"),
            ("  token: ", "tok-1234-abcd", "\n"),
            ("{\"password\": \"", "hunter2", "\", \"user\": \"bob\"}"),
            ("{\\\"password\\\":\\\"", "hunter2", "\\\"}"),
            ("[db]\npassword = ", "hunter2", "\nport = 5432"),
            ("let password = \"", "hunter2", "\";"),
            ("const API_KEY = '", "k-1234567890", "';"),
            ("os.environ[\"API_KEY\"] = \"", "abc123xyz", "\""),
            ("val password: String = \"", "hunter2", "\""),
            ("client_secret: ", "Zx9-8Yw7", "\n"),
            ("Password=", "Pa55w0rd", ";Database=app;"),
            ("$password = '", "hunter2", "';"),
            ("'password' => '", "hunter2", "',"),
            ("mysql --user=app --password=", "hunter2", " app"),
            ("docker login --password ", "hunter2x", " --username bob"),
            (
                "machine api.example.com login bob password ",
                "hunter2",
                "\n",
            ),
            ("SECRET_KEY_BASE=", "9f86d081884c7d659a2feaa0c55ad015", "\n"),
            (
                "https://api.example.com/v1?access_token=",
                "a1b2c3d4e5",
                "&page=2",
            ),
        ];
        for (before, secret, after) in cases {
            assert_redacted("password_assignment", before, secret, after);
        }
    }

    // ---- things that are not secrets -----------------------------------------------------

    #[test]
    fn leaves_git_shas_and_hex_digests_alone() {
        assert_untouched("commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@b.c>");
        assert_untouched("md5 d41d8cd98f00b204e9800998ecf8427e  file");
        assert_untouched("sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_untouched(
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt",
        );
        assert_untouched(&format!("sha512: {}", rnd(170, 128, HEX)));
        assert_untouched(
            "image@sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1",
        );
        assert_untouched(
            "git log --oneline\n9fceb02 fix: key handling\n1a2b3c4 feat: token refresh",
        );
    }

    #[test]
    fn leaves_uuids_alone() {
        assert_untouched("request 123e4567-e89b-12d3-a456-426614174000 done");
        assert_untouched(
            "{\"id\": \"3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f\", \"key\": \"3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f\"}",
        );
    }

    const PACKAGE_LOCK: &str = r#"{
  "name": "web",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "web",
      "version": "1.0.0",
      "dependencies": {
        "js-tokens": "^4.0.0",
        "safe-buffer": "^5.2.1"
      }
    },
    "node_modules/js-tokens": {
      "version": "4.0.0",
      "resolved": "https://registry.npmjs.org/js-tokens/-/js-tokens-4.0.0.tgz",
      "integrity": "sha512-RQ4EEU4UFBPi5mdIMKwveMLXYkGJJy9RbFhKr8P1GgTqhOCje3M2T3k3z3HzKahhnx7INptCpnj524Gog3KQEw==",
      "license": "MIT"
    },
    "node_modules/safe-buffer": {
      "version": "5.2.1",
      "resolved": "https://registry.npmjs.org/safe-buffer/-/safe-buffer-5.2.1.tgz",
      "integrity": "sha512-wwncLgIJzEw1kM+3X5XyAdQhhIeWENpD81vr95Jw8s4WB33dhFe2Rr/s6+urGuoWo2nkeSpQ/DC9RZaI6XQm9w==",
      "funding": [
        {
          "type": "github",
          "url": "https://github.com/sponsors/feross"
        }
      ]
    },
    "node_modules/keygrip": {
      "version": "1.1.0",
      "resolved": "https://registry.npmjs.org/keygrip/-/keygrip-1.1.0.tgz",
      "integrity": "sha512-cm7WxyJyeuE3tDd+dMr9+Byeq2cDLNucYbcXh7+cTY8nocDuBO37s0Zg6Og9lhIz/jnM4+1GpNTzSoa/9BqaMw==",
      "dependencies": {
        "tsscmp": "1.0.6"
      }
    },
    "node_modules/tsscmp": {
      "version": "1.0.6",
      "integrity": "sha1-cr2rdYIetrW5qmGnI79mNjUiUyk=",
      "engines": {
        "node": ">=0.6.x"
      }
    }
  }
}
"#;

    const CARGO_LOCK: &str = r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 4

[[package]]
name = "aho-corasick"
version = "1.1.5"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "c982642fa9e8606056828ee9a8505737230110bb1099153c79efe865c59d12ba"
dependencies = [
 "memchr",
]

[[package]]
name = "async-trait"
version = "0.1.92"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "82f6aeea286b8eb4dd3431a1be1b59d290ace00f5bfd8e2a159bc2a05e2c1667"
dependencies = [
 "proc-macro2",
 "quote",
 "syn",
]

[[package]]
name = "base64"
version = "0.22.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "72b3254f16251a8381aa12e40e3c4d2f0199f8c6508fbecb9d91f575e0fbb8c6"

[[package]]
name = "wrench-core"
version = "0.1.0"
dependencies = [
 "async-trait",
 "base64",
]
"#;

    #[test]
    fn package_lock_json_comes_back_byte_identical() {
        assert_untouched(PACKAGE_LOCK);
    }

    #[test]
    fn cargo_lock_comes_back_byte_identical() {
        assert_untouched(CARGO_LOCK);
    }

    #[test]
    fn leaves_other_lockfile_integrity_strings_alone() {
        assert_untouched(
            "requests==2.31.0 \\\n    --hash=sha256:58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f \\\n    --hash=sha256:942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1",
        );
        assert_untouched(
            "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=\ngolang.org/x/text v0.14.0/go.mod h1:18ZOQIKpY8NJVqYksKHtTdi31H5itFRjB5/qKTNYzSU=",
        );
        assert_untouched(
            "js-tokens@^4.0.0:\n  version \"4.0.0\"\n  resolved \"https://registry.yarnpkg.com/js-tokens/-/js-tokens-4.0.0.tgz#19203fb59991df98e3a287050d4647cdeaf32499\"\n  integrity sha512-DQrfYKJ+YtHxcDhVmr7F5x1pMeivP1P66UyWWChkXchMzEfwrXSibUuYekb7h8ZajNiHdZB7j5TvKZKWUAfKyQ==",
        );
        assert_untouched("\"hashes\": [\"sha256:tfuTzPP/0+5gZOAgPdn5y/Af/CIzeUpJ4pfk5+mmgck=\"]");
        assert_untouched(
            "<script src=\"x.js\" integrity=\"sha384-gDeilS5PpoovBi9E7d1WgoQ2yR+blB9t9BKovmhYPyABF98avteCEWUM\" crossorigin=\"anonymous\"></script>",
        );
        assert_untouched(
            "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345",
        );
    }

    #[test]
    fn leaves_public_keys_and_certificates_alone() {
        assert_untouched(&pem("PUBLIC KEY", 3, 180, ""));
        assert_untouched(&pem("CERTIFICATE", 6, 181, ""));
        assert_untouched(&format!(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} alice@laptop",
            rnd(182, 43, B64)
        ));
        assert_untouched(&format!(
            "public_key: \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{}\"",
            rnd(183, 43, B64)
        ));
    }

    #[test]
    fn leaves_code_that_names_secrets_alone() {
        for code in [
            "let password = get_password();",
            "password: String,",
            "pub password: Option<String>,",
            "fn login(user: &str, password: &str) -> bool",
            "token = self.next_token()",
            "const token = await getToken();",
            "password = os.environ[\"PASSWORD\"]",
            "password = os.getenv('DB_PASSWORD')",
            "secret: process.env.SECRET,",
            "password: req.body.password,",
            "if password == other_password {",
            "let api_key = config.api_key.clone();",
            "Token: os.Getenv(\"TOKEN\"),",
            "password: string;",
            "token: i32 = 0",
            "Password string `json:\"password\"`",
            "self.session = requests.Session()",
            "key = cache.get(key)",
            "for key, value in items:",
            "let key = map.keys().next();",
            "connect(user=user, password=password)",
            "auth = HTTPBasicAuth(user, pw)",
            "let (key, value) = pair;",
            "match token { Token::Ident(s) => s }",
        ] {
            assert_untouched(code);
        }
    }

    #[test]
    fn leaves_empty_and_placeholder_values_alone() {
        for text in [
            "password=\"\"",
            "password=''",
            "password=",
            "PASSWORD=${PASSWORD}",
            "password=$PASSWORD",
            "password: ${{ secrets.DB_PASSWORD }}",
            "password: \"{{ .Values.password }}\"",
            "password=<your-password>",
            "api_key: <API_KEY>",
            "token: \"********\"",
            "password = %(password)s",
            "password = \"%s\"",
            "DB_PASSWORD=${DB_PASSWORD:-}",
            "password: $(cat /run/secrets/db)",
            "WHERE password = ?",
            "WHERE password = :password",
            "token: null",
            "password: true",
            "secret: none",
            "https://user:${PASS}@example.com",
            "https://user:****@example.com",
            "Authorization: Bearer $TOKEN",
            "Authorization: Bearer ${API_TOKEN}",
            "Authorization: Bearer <token>",
            "curl -u user:$PASS https://x",
            "--password <password>",
            "--token TOKEN",
            "api_key=YOUR_API_KEY",
            "OLDPWD=/home/user/src",
            "PWD=/tmp",
        ] {
            assert_untouched(text);
        }
    }

    #[test]
    fn leaves_non_secret_keys_alone() {
        for text in [
            "max_tokens: 4096",
            "token_type: \"Bearer\"",
            "\"token_type\": \"bearer\", \"expires_in\": 3600",
            "key_length = 32",
            "primary_key = \"user_id\"",
            "public_key: \"abcdef0123456789abcdef\"",
            "sort_key = \"created_at_2024\"",
            "\"NextToken\": \"eyJ2IjoxfQ==\"",
            "next_page_token: \"CAoQAA\"",
            "secret_name: my-secret",
            "secretName: db-credentials",
            "password_file: /run/secrets/db",
            "PASSWORD_FILE=/run/secrets/db",
            "token_endpoint: https://auth.example.com/oauth/token",
            "\"checksum\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"",
            "eos_token: \"</s>\"",
            "\"passwordLabel\": \"Password\"",
            "\"password_error\": \"Password is too short\"",
            "git config credential.helper=store",
            "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.123",
            "\"key\": \"Content-Type\", \"value\": \"application/json\"",
            "auth: true",
            "session: default",
            "keyboard = \"us\"",
            "monkey = \"b4n4n4-split-2024\"",
        ] {
            assert_untouched(text);
        }
    }

    #[test]
    fn leaves_look_alike_prose_and_public_identifiers_alone() {
        for text in [
            "GitHub classic tokens start with ghp_ and fine-grained ones with github_pat_.",
            "<div class=\"sk-spinner sk-spinner-wave\"></div>",
            "Stripe publishable key pk_live_51H8aBcDeFgHiJkLmNoPqRsTuV is public",
            "client_id: 123456789012-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com",
            "arn:aws:iam::123456789012:role/deploy",
            "request id req_8f7a6b5c4d3e2f1a",
            "color: #ff00aa; background: #0a0b0c;",
            "created_at: 1717171717171",
            "see https://example.com:8443/path?x=1#frag and mailto:bob@example.com",
            "git@github.com:org/repo.git",
            "ssh://git@github.com:22/org/repo.git",
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
            "The password must be at least 12 characters; the token expires after an hour.",
            "Authorization: Bearer",
            "docker run -u 1000:1000 image",
        ] {
            assert_untouched(text);
        }
    }

    #[test]
    fn leaves_existing_markers_alone() {
        assert_untouched("password=[REDACTED:password_assignment]");
        assert_untouched("https://user:[REDACTED:url_credentials]@example.com");
        assert_untouched("[REDACTED:github_pat] and [REDACTED:jwt]");
        assert_untouched("{\"token\": \"[REDACTED:password_assignment]\"}");
    }

    #[test]
    fn a_fake_marker_cannot_hide_a_secret() {
        let npm = format!(
            "{}{}",
            concat!("np", "m_"),
            rnd(190, 36, "abcdefghijklmnopqrstuvwxyz0123456789")
        );
        let text = format!("[REDACTED:{npm}]");
        assert_eq!(
            r().scrub(&text),
            format!("[REDACTED:{}]", marker("npm_token"))
        );
    }

    #[test]
    fn text_without_candidates_is_borrowed() {
        let text = "fn main() {\n    println!(\"hello\");\n}\n".repeat(100);
        assert!(matches!(r().scrub(&text), Cow::Borrowed(_)));
        assert!(r().find("").is_empty());
        assert!(matches!(r().scrub(""), Cow::Borrowed("")));
    }

    #[test]
    fn overlapping_findings_merge_into_one_marker() {
        // `token: ghp_...` is both an assignment and a GitHub PAT: one marker, the
        // specific kind.
        let pat = format!("{}{}", concat!("gh", "p_"), rnd(191, 36, ALNUM));
        assert_redacted("github_pat", "GITHUB_TOKEN=", &pat, "\n");
        // Two secrets glued together come out as one marker covering both.
        let glued = format!("{pat}{}", concat!("AK", "IAABCDEFGHIJKLMNOP"));
        let out = r().scrub(&glued);
        assert!(!out.contains("ghp_") && !out.contains("AKIA"), "{out}");
        // Adjacent, separate secrets keep separate markers.
        let two = format!("{pat} {pat}");
        assert_eq!(
            r().scrub(&two),
            format!("{} {}", marker("github_pat"), marker("github_pat"))
        );
    }

    #[test]
    fn merge_prefers_longest_then_earliest_then_priority() {
        let raw = vec![
            Raw {
                kind: "b",
                start: 5,
                end: 20,
                rule: 2,
            },
            Raw {
                kind: "a",
                start: 0,
                end: 10,
                rule: 1,
            },
            Raw {
                kind: "c",
                start: 0,
                end: 10,
                rule: 0,
            },
            Raw {
                kind: "d",
                start: 30,
                end: 31,
                rule: 0,
            },
        ];
        let merged = merge(raw);
        assert_eq!(
            merged,
            vec![
                Finding {
                    kind: "b",
                    start: 0,
                    end: 20
                },
                Finding {
                    kind: "d",
                    start: 30,
                    end: 31
                },
            ]
        );
        let raw = vec![
            Raw {
                kind: "a",
                start: 0,
                end: 10,
                rule: 1,
            },
            Raw {
                kind: "c",
                start: 0,
                end: 10,
                rule: 0,
            },
            Raw {
                kind: "b",
                start: 5,
                end: 12,
                rule: 2,
            },
        ];
        assert_eq!(
            merge(raw),
            vec![Finding {
                kind: "c",
                start: 0,
                end: 12
            }]
        );
    }

    #[test]
    fn redacts_secrets_in_json_escaped_and_log_forms() {
        let pat = format!("{}{}", concat!("gh", "p_"), rnd(192, 36, ALNUM));
        let text = format!("{{\"msg\":\"token={pat}\\nnext\"}}");
        assert_eq!(
            r().scrub(&text),
            format!("{{\"msg\":\"token={}\\nnext\"}}", marker("github_pat"))
        );
        let ansi = format!("\x1b[32m{pat}\x1b[0m");
        assert_eq!(
            r().scrub(&ansi),
            format!("\x1b[32m{}\x1b[0m", marker("github_pat"))
        );
    }

    #[test]
    fn scrub_of_large_ordinary_source_is_unchanged() {
        let text = ordinary_source(200_000);
        let out = r().scrub(&text);
        assert!(
            matches!(out, Cow::Borrowed(_)),
            "{:?}",
            r().find(&text).first()
        );
    }

    #[test]
    fn a_remembered_clean_text_never_hides_a_secret_added_later() {
        let clean = ordinary_source(20_000);
        assert!(matches!(r().scrub(&clean), Cow::Borrowed(_)));
        assert!(matches!(r().scrub(&clean), Cow::Borrowed(_)));
        let dirty = format!("{clean}\nlet t = \"ghp_{}\";\n", "a1B2".repeat(9));
        for _ in 0..2 {
            let out = r().scrub(&dirty);
            assert!(
                out.contains("[REDACTED:"),
                "secret kept on a repeated scrub"
            );
            assert!(!out.contains("ghp_a1B2"));
        }
    }

    #[test]
    fn a_cache_key_collision_is_not_taken_for_the_same_text() {
        let mut c = CleanCache::default();
        let key = (3, 7);
        c.insert(key, "abc");
        assert!(c.contains(key, "abc"));
        assert!(!c.contains(key, "xyz"), "same key, other text");
        c.insert(key, "xyz");
        assert!(c.contains(key, "xyz") && c.contains(key, "abc"));
        // The byte budget forgets the oldest first.
        let big = "x".repeat(CLEAN_CACHE_MAX_TEXT);
        for i in 0..(CLEAN_CACHE_BYTES / CLEAN_CACHE_MAX_TEXT) {
            c.insert((big.len(), i as u32), &big);
        }
        assert!(!c.contains(key, "abc"));
        assert!(c.bytes <= CLEAN_CACHE_BYTES);
    }

    #[test]
    fn texts_are_remembered_only_when_clean() {
        let red = Redactor::new();
        let secret = format!("ghp_{}", "a1B2".repeat(9));
        for _ in 0..3 {
            assert!(matches!(red.scrub("src/main.rs"), Cow::Borrowed(_)));
            let out = red.scrub(&secret);
            assert!(out.starts_with("[REDACTED:"), "{out}");
        }
        // Past the cache's size the oldest are forgotten; answers stay the same.
        for i in 0..(CLEAN_CACHE_ENTRIES + 10) {
            assert!(matches!(red.scrub(&format!("name-{i}")), Cow::Borrowed(_)));
        }
        assert!(red.scrub(&secret).starts_with("[REDACTED:"));
    }

    /// Rust-like source that names keys, tokens and passwords without holding any.
    fn ordinary_source(bytes: usize) -> String {
        let chunk = r#"
use std::collections::HashMap;

/// Looks a key up in the cache; the token is refreshed when stale.
pub fn lookup(cache: &HashMap<String, String>, key: &str) -> Option<String> {
    let token = self.next_token();
    let password = get_password();
    let hash = "9fceb02d0ae598e95dc970b74767f19372d61af8";
    let id = "123e4567-e89b-12d3-a456-426614174000";
    for (key, value) in cache.iter() {
        if key.len() > 32 && value.starts_with("sk") { continue; }
    }
    // max_tokens: 4096, token_type: "Bearer", key_length = 32
    let url = format!("https://example.com/api/v1/items?page={}", 2);
    cache.get(key).cloned()
}
"#;
        let mut s = String::with_capacity(bytes + chunk.len());
        while s.len() < bytes {
            s.push_str(chunk);
        }
        s
    }

    /// Run with `cargo test --release -- --ignored`: 10 MB of source in well under a
    /// second.
    #[test]
    #[ignore]
    fn scrubs_ten_megabytes_of_source_fast() {
        let text = ordinary_source(10 * 1024 * 1024);
        let red = Redactor::new();
        let t = std::time::Instant::now();
        let out = red.scrub(&text);
        let took = t.elapsed();
        eprintln!("10 MB of source: {took:?}");
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(took.as_secs_f64() < 1.0, "took {took:?}");
        let t = std::time::Instant::now();
        let plain = "The quick brown fox jumps over the lazy dog.\n".repeat(240_000);
        assert!(matches!(red.scrub(&plain), Cow::Borrowed(_)));
        assert!(
            t.elapsed().as_secs_f64() < 1.0,
            "prose took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn redactor_is_cheap_to_clone_and_default_matches_new() {
        let a = Redactor::default();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        let pat = format!("{}{}", concat!("gh", "p_"), rnd(193, 36, ALNUM));
        assert_eq!(a.find(&pat), Redactor::new().find(&pat));
    }

    // ---- properties ------------------------------------------------------------------------

    fn sample_secrets() -> Vec<String> {
        vec![
            format!("{}{}", concat!("gh", "p_"), rnd(200, 36, ALNUM)),
            format!(
                "{}{}",
                concat!("AK", "IA"),
                rnd(201, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
            ),
            jwt(),
            discord_token(),
            format!("{}{}", concat!("xo", "xb-"), rnd(202, 30, ALNUM)),
            format!("{}{}", concat!("sk-pr", "oj-"), rnd(203, 60, URLSAFE)),
            pem(&format!("RSA {PK}"), 2, 204, ""),
            format!("-----BEGIN {PK}-----\n{}", rnd(205, 64, B64)),
            "postgres://u:pw1234@h/db".to_string(),
            "password=hunter2".to_string(),
            "\"api_key\": \"abc123def\"".to_string(),
            "Authorization: Basic dXNlcjpwYXNzMTIz".to_string(),
            format!("{}{}", concat!("np", "m_"), rnd(206, 36, ALNUM)),
            format!("auth: {}", rnd(207, 24, B64)),
        ]
    }

    fn piece() -> impl Strategy<Value = String> {
        let secrets = sample_secrets();
        let kinds: Vec<String> = KINDS.iter().map(|k| marker(k)).collect();
        prop_oneof![
            3 => proptest::sample::select(secrets),
            2 => proptest::sample::select(kinds),
            4 => proptest::sample::select(vec![
                "password", "token", "api_key", "secret", "auth", "key", "PASSWORD", "Bearer ",
                "Authorization: ", "=", ": ", " = ", "\"", "'", "\\\"", "\n", " ", "\t", "://", "@",
                ":", "/", "[REDACTED:", "]", "[", "-----BEGIN ", "-----END ", "PRIVATE KEY-----",
                "$", "${X}", "<x>", "ghp_", "eyJ", ".", "_", "-", "sk-", "AKIA", ";", ",", "(", ")",
                "export ", "--password ", "-u ", "x", "0", "==",
            ]).prop_map(str::to_string),
            2 => "[ -~]{0,12}",
            1 => "[a-zA-Z0-9+/=_-]{0,40}",
            1 => any::<String>().prop_map(|s| s.chars().take(6).collect()),
        ]
    }

    fn adversarial_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(piece(), 0..16).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
            ..ProptestConfig::default()
        })]

        #[test]
        fn scrub_is_idempotent(text in adversarial_text()) {
            let once = r().scrub(&text).into_owned();
            let twice = r().scrub(&once).into_owned();
            prop_assert_eq!(&twice, &once);
            prop_assert!(r().find(&once).is_empty(), "left: {:?}", r().find(&once));
        }

        #[test]
        fn findings_are_sorted_disjoint_and_on_char_boundaries(text in adversarial_text()) {
            let found = r().find(&text);
            let mut last = 0;
            for f in &found {
                prop_assert!(f.start < f.end && f.start >= last);
                prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
                prop_assert!(KINDS.contains(&f.kind));
                last = f.end;
            }
            prop_assert_eq!(r().contains_secret(&text), !found.is_empty());
            prop_assert_eq!(matches!(r().scrub(&text), Cow::Borrowed(_)), found.is_empty());
        }

        #[test]
        fn scrub_is_idempotent_on_arbitrary_strings(text in any::<String>()) {
            let once = r().scrub(&text).into_owned();
            prop_assert_eq!(r().scrub(&once).into_owned(), once);
        }

        #[test]
        fn sample_secrets_never_survive_scrub(i in 0usize..14, pre in "[ -~]{0,8}", post in "[ \n;,]{0,3}") {
            let secrets = sample_secrets();
            let s = &secrets[i % secrets.len()];
            let text = format!("{pre} {s}{post}");
            let out = r().scrub(&text);
            prop_assert!(out.contains(REDACTION_PREFIX), "{:?}", out);
        }
    }
}
