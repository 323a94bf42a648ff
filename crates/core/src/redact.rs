//! Secret redaction (SPEC §6 "Redaction").
//!
//! [`Redactor::scrub`] replaces every secret it recognises by `[REDACTED:<kind>]`,
//! where `<kind>` is one of [`Redactor::kinds`]. It runs on every output path, so it
//! is built to be cheap on ordinary text:
//!
//! * **Prefilter.** Every rule names the literal keywords that any of its matches must
//!   contain (`ghp_`, `-----begin`, `password`, ...). One case-insensitive pass over
//!   the text finds which keywords occur; only the rules behind them run. Text without
//!   any keyword comes back as `Cow::Borrowed` after that single pass.
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
    pub kind: &'static str,
    pub start: usize,
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
    /// Lowercase literals, at least one of which occurs (case-insensitively) in every
    /// match. Empty: the rule always runs.
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
        keywords: &["private key"],
        check: Check::Pem,
    },
    // ---- cloud providers ----------------------------------------------------------
    Spec {
        kind: "aws_access_key_id",
        pattern: r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        keywords: &["a3t", "akia", "asia", "abia", "acca"],
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
        pattern: r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}",
        keywords: &["absk"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_api_key",
        pattern: r"AIza[0-9A-Za-z_\-]{35}",
        keywords: &["aiza"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_oauth_client_secret",
        pattern: r"GOCSPX-[0-9A-Za-z_\-]{28}",
        keywords: &["gocspx-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "google_oauth_token",
        pattern: r"\b(?:ya29\.[0-9A-Za-z_\-]{30,}|1//0[0-9A-Za-z_\-]{40,})",
        keywords: &["ya29.", "1//0"],
        check: Check::Group(0),
    },
    Spec {
        kind: "azure_storage_account_key",
        pattern: r"(?i)\bAccountKey=([a-z0-9+/]{86}==)",
        keywords: &["accountkey="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_shared_access_key",
        pattern: r"(?i)\bSharedAccessKey=([a-z0-9+/]{42,44}=)",
        keywords: &["sharedaccesskey="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_sas_signature",
        pattern: r"(?i)(?:[?&]|\b)sig=([a-z0-9%+/]{40,100}(?:=|%3d){0,2})",
        keywords: &["sig="],
        check: Check::Group(1),
    },
    Spec {
        kind: "azure_ad_client_secret",
        pattern: r"(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|\z)",
        keywords: &["q~"],
        check: Check::Group(1),
    },
    Spec {
        kind: "alibaba_access_key_id",
        pattern: r"\bLTAI[A-Za-z0-9]{12,20}\b",
        keywords: &["ltai"],
        check: Check::Group(0),
    },
    Spec {
        kind: "digitalocean_token",
        pattern: r"\bdo[por]_v1_[a-f0-9]{64}\b",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "cloudflare_origin_ca_key",
        pattern: r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b",
        keywords: &["v1.0-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "cloudflare_api_token",
        pattern: r#"(?i)(?:cloudflare|\bcf)_?(?:api_?)?(?:token|key)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9_\-]{37,40})"#,
        keywords: &["cloudflare", "cf_api", "cf_token", "cf_key", "cfapi", "cftoken", "cfkey"],
        check: Check::Group(1),
    },
    Spec {
        kind: "heroku_api_key",
        pattern: r#"(?i)\bHRKU-AA[0-9a-z_\-]{58}|heroku[a-z_\-]{0,20}(?:key|token)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"#,
        keywords: &["hrku-", "heroku"],
        check: Check::Group(1),
    },
    Spec {
        kind: "databricks_token",
        pattern: r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b",
        keywords: &["dapi"],
        check: Check::Group(0),
    },
    Spec {
        kind: "supabase_token",
        pattern: r"\b(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})",
        keywords: &["sbp_", "sb_secret_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "fly_io_token",
        pattern: r"\bfo1_[A-Za-z0-9_\-]{43}",
        keywords: &["fo1_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "planetscale_token",
        pattern: r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}",
        keywords: &["pscale_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "terraform_cloud_token",
        pattern: r"\b[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        keywords: &["atlasv1"],
        check: Check::Group(0),
    },
    Spec {
        kind: "pulumi_access_token",
        pattern: r"\bpul-[a-f0-9]{40}\b",
        keywords: &["pul-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "vault_token",
        pattern: r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
        keywords: &["hvs.", "hvb.", "hvr."],
        check: Check::Group(0),
    },
    Spec {
        kind: "doppler_token",
        pattern: r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}",
        keywords: &["dp."],
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
        pattern: r"\bgl(?:ptt|rt|dt|ft|soat|imt|cbt|agent|oas|wt|ffct)-[A-Za-z0-9_\-]{20,300}",
        keywords: &[
            "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glimt-", "glcbt-", "glagent-",
            "gloas-", "glwt-", "glffct-",
        ],
        check: Check::Group(0),
    },
    Spec {
        kind: "bitbucket_app_password",
        pattern: r"\bATBB[A-Za-z0-9_=.\-]{28,}",
        keywords: &["atbb"],
        check: Check::Group(0),
    },
    Spec {
        kind: "atlassian_api_token",
        pattern: r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=\-]{150,300}",
        keywords: &["atatt3", "atctt3"],
        check: Check::Group(0),
    },
    Spec {
        kind: "npm_token",
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        keywords: &["npm_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "pypi_token",
        pattern: r"pypi-AgE[A-Za-z0-9_\-]{50,}",
        keywords: &["pypi-age"],
        check: Check::Group(0),
    },
    Spec {
        kind: "docker_hub_pat",
        pattern: r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}",
        keywords: &["dckr_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "postman_api_key",
        pattern: r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        keywords: &["pmak-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "linear_api_key",
        pattern: r"\blin_(?:api|oauth)_[A-Za-z0-9]{40,64}\b",
        keywords: &["lin_api_", "lin_oauth_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "notion_token",
        pattern: r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})\b",
        keywords: &["secret_", "ntn_"],
        check: Check::Group(0),
    },
    // ---- chat and messaging -----------------------------------------------------------
    Spec {
        kind: "slack_token",
        pattern: r"xox(?:[abposer]|e\.xox[bp])-[0-9A-Za-z\-]{10,250}",
        keywords: &["xox"],
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
        pattern: r"\b([MNO][A-Za-z0-9_\-]{23,27})\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        keywords: &[],
        check: Check::Discord,
    },
    Spec {
        kind: "telegram_bot_token",
        pattern: r"[0-9]{5,16}:AA[A-Za-z0-9_\-]{33}",
        keywords: &[":aa"],
        check: Check::Group(0),
    },
    Spec {
        kind: "twilio_api_key",
        pattern: r"\bSK[0-9a-f]{32}\b",
        keywords: &["sk"],
        check: Check::Group(0),
    },
    Spec {
        kind: "sendgrid_api_key",
        pattern: r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        keywords: &["sg."],
        check: Check::Group(0),
    },
    Spec {
        kind: "mailgun_api_key",
        pattern: r#"(?i)\bkey-[0-9a-f]{32}\b|mailgun[a-z0-9_.\-]{0,30}(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b"#,
        keywords: &["key-", "mailgun"],
        check: Check::Group(1),
    },
    Spec {
        kind: "mailchimp_api_key",
        pattern: r"\b[0-9a-f]{32}-us[0-9]{1,2}\b",
        keywords: &["-us"],
        check: Check::Group(0),
    },
    Spec {
        kind: "brevo_api_key",
        pattern: r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b",
        keywords: &["xkeysib-"],
        check: Check::Group(0),
    },
    // ---- payments and commerce ---------------------------------------------------------
    Spec {
        kind: "stripe_secret_key",
        pattern: r"\b[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,247}",
        keywords: &["sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "stripe_webhook_secret",
        pattern: r"\bwhsec_[A-Za-z0-9+/=]{32,}",
        keywords: &["whsec_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "shopify_token",
        pattern: r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "square_token",
        pattern: r"\b(?:EAAA[A-Za-z0-9_\-]{60}|sq0atp-[0-9A-Za-z_\-]{22}|sq0csp-[0-9A-Za-z_\-]{43})",
        keywords: &["eaaa", "sq0atp-", "sq0csp-"],
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
        keywords: &["sk-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "huggingface_token",
        pattern: r"\b(?:hf_|api_org_)[A-Za-z]{34}\b",
        keywords: &["hf_", "api_org_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "replicate_api_token",
        pattern: r"\br8_[A-Za-z0-9]{37}\b",
        keywords: &["r8_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "groq_api_key",
        pattern: r"\bgsk_[A-Za-z0-9]{52}\b",
        keywords: &["gsk_"],
        check: Check::Group(0),
    },
    Spec {
        kind: "xai_api_key",
        pattern: r"\bxai-[A-Za-z0-9]{80}\b",
        keywords: &["xai-"],
        check: Check::Group(0),
    },
    Spec {
        kind: "perplexity_api_key",
        pattern: r"\bpplx-[A-Za-z0-9]{48}\b",
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
        pattern: r"\bsntr[ysu]_[A-Za-z0-9+/=_]{40,}",
        keywords: &["sntry", "sntru"],
        check: Check::Group(0),
    },
    Spec {
        kind: "grafana_token",
        pattern: r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}|eyJrIjoi[A-Za-z0-9+/]{50,400}={0,2})",
        keywords: &["glsa_", "glc_", "eyjrijoi"],
        check: Check::Group(0),
    },
    Spec {
        kind: "new_relic_key",
        pattern: r"\b(?:NR(?:AK|AA|II|IQ|RA|SP)-[A-Za-z0-9_\-]{20,40}|[a-fA-F0-9]{36}NRAL\b)",
        keywords: &["nrak-", "nraa-", "nrii-", "nriq-", "nrra-", "nrsp-", "nral"],
        check: Check::Group(0),
    },
    // ---- other distinctive formats ---------------------------------------------------------
    Spec {
        kind: "age_secret_key",
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        keywords: &["age-secret-key-1"],
        check: Check::Group(0),
    },
    Spec {
        kind: "mapbox_secret_token",
        pattern: r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
        keywords: &["sk.eyj"],
        check: Check::Group(0),
    },
    Spec {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        keywords: &["eyj"],
        check: Check::Group(0),
    },
    // ---- credentials in context --------------------------------------------------------------
    Spec {
        kind: "url_credentials",
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\[\]"'<>]{0,128}:([^\s/?#"'<>]{1,256})@[A-Za-z0-9\[]"#,
        keywords: &["://"],
        check: Check::Value(1),
    },
    Spec {
        kind: "authorization_header",
        pattern: r#"(?i)\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:(?:bearer|basic|token|bot|apikey|api-key|sso-key|key|digest|negotiate|ntlm)[ \t]+)?([a-z0-9\-._~+/=:]{8,})"#,
        keywords: &["authorization"],
        check: Check::AuthHeader,
    },
    Spec {
        kind: "bearer_token",
        pattern: r"(?i)\bbearer[ \t]+([a-z0-9\-._~+/]{16,}=*)",
        keywords: &["bearer"],
        check: Check::Bearer,
    },
    Spec {
        kind: "cli_user_password",
        pattern: r#"(?:^|[ \t])(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:([^\s"']+)"#,
        keywords: &["-u"],
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
        pattern: concat!(
            r"(?i)(?P<key>[a-z0-9_.\-]*(?:pass|pwd|secret|token|cred|key|auth|cookie|session|sid|sig|salt|hmac|jwt|bearer|dsn)[a-z0-9_.\-]*)",
            r#"(?:\\?["'])?\]?"#,
            r"(?:[ \t]*:[ \t]*[a-z_][a-z0-9_<>\[\]&:]*[ \t]+=|[ \t]*(?:=>|:=|\?=|!==?|={1,3}|:))[ \t]*",
            r#"(?:\\?"(?P<dq>[^"\\\r\n]*(?:\\[^"\r\n][^"\\\r\n]*)*)\\?"|'(?P<sq>[^'\r\n]*)'|(?P<bare>[^\s"'`,;)\]}&|>]+))"#,
        ),
        keywords: &[
            "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "sid",
            "sig", "salt", "hmac", "jwt", "bearer", "dsn",
        ],
        check: Check::Assignment,
    },
    Spec {
        kind: "password_assignment",
        pattern: r#"(?i)(?:^|[ \t])--?(?P<key>[a-z0-9][a-z0-9_\-]*)(?:=|[ \t]+)(?:"(?P<dq>[^"\r\n]*)"|'(?P<sq>[^'\r\n]*)'|(?P<bare>[^\s"'`;|&)]+))"#,
        keywords: &["--"],
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

/// At most this many find-and-replace passes in [`Redactor::scrub`]; real text needs
/// one, and a second finds nothing.
const MAX_PASSES: usize = 16;

/// How far past a PEM header the END line is looked for.
const PEM_WINDOW: usize = 64 * 1024;

struct Rule {
    kind: &'static str,
    re: Regex,
    check: Check,
}

struct Inner {
    rules: Vec<Rule>,
    /// All keywords, longest first, ASCII-case-insensitive.
    keyword_re: Option<Regex>,
    /// Lowercase keyword -> the rules it enables (including the rules of every
    /// keyword it contains, since a match only reports the longest alternative).
    keyword_rules: HashMap<String, Vec<usize>>,
    /// Rules without keywords.
    always: Vec<usize>,
    marker_re: Option<Regex>,
    pem_cont: Option<Regex>,
    pem_end_at: Option<Regex>,
    pem_end: Option<Regex>,
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
    debug_assert!(compiled.is_ok(), "redaction pattern failed to compile: {pattern}");
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
        for spec in SPECS {
            let Some(re) = compile(spec.pattern) else {
                continue;
            };
            let idx = rules.len();
            rules.push(Rule {
                kind: spec.kind,
                re,
                check: spec.check,
            });
            if spec.keywords.is_empty() {
                always.push(idx);
            }
            for kw in spec.keywords {
                keyword_rules
                    .entry(kw.to_ascii_lowercase())
                    .or_default()
                    .push(idx);
            }
        }
        // A keyword that contains another keyword shadows it in a leftmost-longest
        // scan, so it must also enable the contained keyword's rules.
        let keys: Vec<String> = keyword_rules.keys().cloned().collect();
        let mut extra: Vec<(String, Vec<usize>)> = Vec::new();
        for outer in &keys {
            let mut add = Vec::new();
            for inner in &keys {
                if inner != outer && outer.contains(inner.as_str()) {
                    if let Some(r) = keyword_rules.get(inner) {
                        add.extend_from_slice(r);
                    }
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
        let alternation: Vec<String> = sorted.iter().map(|k| regex::escape(k)).collect();
        let keyword_re = compile(&format!("(?i-u:{})", alternation.join("|")));
        let kinds_alt: Vec<String> = KINDS.iter().map(|k| regex::escape(k)).collect();
        let marker_re = compile(&format!(
            "{}(?:{})\\]",
            regex::escape(REDACTION_PREFIX),
            kinds_alt.join("|")
        ));
        let pem_cont = compile(
            r"\A(?:(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z0-9\-]*:[ \t][^\r\n\\]*)?[ \t]*)*",
        );
        let pem_end_at = compile(
            r"\A(?:\s|\\[rn])*-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        );
        let pem_end = compile(r"-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}");
        Redactor {
            inner: Arc::new(Inner {
                rules,
                keyword_re,
                keyword_rules,
                always,
                marker_re,
                pem_cont,
                pem_end_at,
                pem_end,
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
        let findings = self.find(text);
        if findings.is_empty() {
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
        if let Some(kw) = &inner.keyword_re {
            let mut seen: Vec<String> = Vec::new();
            for m in kw.find_iter(text) {
                if count == on.len() {
                    break;
                }
                let word = m.as_str().to_ascii_lowercase();
                if seen.contains(&word) {
                    continue;
                }
                if let Some(rules) = inner.keyword_rules.get(&word) {
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
        // The rules that always run are only worth it when some other rule is on, or
        // when the text could hold one of their matches at all.
        if count == inner.always.len() && !could_hold_always_rules(text) {
            return Vec::new();
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
        match &self.inner.marker_re {
            Some(re) => re.find_iter(text).map(|m| (m.start(), m.end())).collect(),
            None => Vec::new(),
        }
    }

    fn scan_rule(&self, idx: usize, text: &str, markers: &[(usize, usize)], out: &mut Vec<Raw>) {
        let Some(rule) = self.inner.rules.get(idx) else {
            return;
        };
        let mut pos = 0;
        while pos <= text.len() {
            let Some(caps) = rule.re.captures_at(text, pos) else {
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
                if is_placeholder(v) || is_auth_scheme(v) {
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
            Check::Assignment => accept_assignment(text, caps, false),
            Check::CliFlag => accept_assignment(text, caps, true),
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
            .as_ref()
            .and_then(|re| re.find(rest))
            .map_or(0, |m| m.end());
        let after = hdr_end + cont;
        if let Some(m) = inner.pem_end_at.as_ref().and_then(|re| re.find(&text[after..])) {
            return after + m.end();
        }
        let mut limit = (hdr_end + PEM_WINDOW).min(text.len());
        while !text.is_char_boundary(limit) {
            limit -= 1;
        }
        if let Some(m) = inner
            .pem_end
            .as_ref()
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

/// Whether any always-on rule (those without keywords) could match: they all need a
/// `.` between token characters.
fn could_hold_always_rules(text: &str) -> bool {
    text.contains('.')
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
        if let Some(last) = out.last_mut() {
            if r.start < last.end {
                if r.end > last.end {
                    last.end = r.end;
                }
                if len > best_len {
                    best_len = len;
                    last.kind = r.kind;
                }
                continue;
            }
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
    if lower.starts_with("your") || lower.starts_with("<your") || lower == "changeme" {
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
        && t[1..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
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
        } else if rest.starts_with('%') {
            rest[1..]
                .find('%')
                .filter(|&e| {
                    e > 0
                        && rest[1..1 + e]
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_')
                })
                .map(|e| e + 2)
        } else if rest.starts_with('$') {
            let n = rest[1..]
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            let starts_alpha = rest[1..]
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
    if !rooted || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-~".contains(&b)) {
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
    if ["ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-", "sha256:", "sha512-", "sha384-", "sha1-"]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return false;
    }
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let b64sym = v.chars().any(|c| "+/=".contains(c));
    (digits || b64sym || mixed_case_heavy(v)) && entropy(v) >= 3.0
}

/// Splits a key name into lowercase words at separators and camelCase boundaries.
fn split_words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                words.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
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
            "accesskey",
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
            | "sid"
            | "sig"
            | "signature"
            | "salt"
            | "hmac"
            | "jwt"
            | "bearer"
            | "oauth"
            | "dsn"
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
fn is_neutral_word(w: &str) -> bool {
    matches!(
        w,
        "type"
            | "types"
            | "kind"
            | "length"
            | "len"
            | "size"
            | "count"
            | "limit"
            | "max"
            | "min"
            | "num"
            | "number"
            | "total"
            | "url"
            | "uri"
            | "urls"
            | "endpoint"
            | "endpoints"
            | "path"
            | "paths"
            | "file"
            | "files"
            | "filename"
            | "dir"
            | "name"
            | "names"
            | "id"
            | "ids"
            | "version"
            | "format"
            | "prefix"
            | "suffix"
            | "header"
            | "headers"
            | "field"
            | "fields"
            | "env"
            | "var"
            | "variable"
            | "expires"
            | "expiry"
            | "expiration"
            | "exp"
            | "ttl"
            | "timeout"
            | "lifetime"
            | "hint"
            | "policy"
            | "enabled"
            | "enable"
            | "disabled"
            | "required"
            | "regex"
            | "pattern"
            | "label"
            | "placeholder"
            | "prompt"
            | "mode"
            | "strategy"
            | "provider"
            | "location"
            | "source"
            | "ref"
            | "index"
            | "position"
            | "offset"
            | "validation"
            | "validator"
            | "strength"
            | "next"
            | "page"
            | "continuation"
            | "pagination"
            | "cursor"
            | "sync"
            | "prev"
            | "previous"
            | "resume"
            | "eos"
            | "bos"
            | "pad"
            | "unk"
            | "sep"
            | "cls"
            | "mask"
            | "special"
            | "stop"
            | "input"
            | "output"
            | "completion"
            | "public"
            | "primary"
            | "foreign"
            | "partition"
            | "cache"
            | "idempotency"
            | "dedup"
            | "routing"
            | "row"
            | "sort"
            | "error"
            | "message"
            | "msg"
            | "text"
            | "title"
            | "description"
            | "desc"
            | "help"
            | "tooltip"
            | "caption"
            | "button"
            | "link"
            | "rounds"
            | "alg"
            | "algorithm"
            | "method"
            | "scheme"
            | "style"
            | "helper"
            | "manager"
            | "store"
            | "backend"
            | "stdin"
            | "command"
            | "cmd"
            | "checksum"
            | "integrity"
            | "digest"
            | "fingerprint"
    )
}

/// Classifies a key name: `password_assignment` for strongly secret names (any
/// literal value counts), `generic_secret` for weak ones (the value must look
/// random), `None` for everything else.
fn classify_key(key: &str) -> Option<&'static str> {
    let words = split_words(key);
    let mut strong = false;
    let mut weak = false;
    let mut secret_at = vec![false; words.len()];
    for (i, w) in words.iter().enumerate() {
        if is_strong_word(w) {
            strong = true;
            secret_at[i] = true;
        } else if w == "key" && i > 0 && is_key_prefix(&words[i - 1]) {
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
    ) || ["int", "uint", "float"]
        .iter()
        .any(|p| l.strip_prefix(p).is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit())))
}

/// `KEY=value` at the start of a line (optionally after `export`, `ENV`, `ARG`, `set`),
/// with nothing between key and value but `=`: env files, shell, Dockerfiles.
fn env_style(text: &str, key_start: usize, key_end: usize, value_start: usize) -> bool {
    if &text[key_end..value_start] != "=" {
        return false;
    }
    let line_start = text[..key_start].rfind('\n').map_or(0, |i| i + 1);
    let prefix = text[line_start..key_start].trim_start().to_ascii_lowercase();
    matches!(prefix.as_str(), "" | "export " | "env " | "arg " | "set " | "setx ")
}

fn accept_assignment(
    text: &str,
    caps: &Captures<'_>,
    cli: bool,
) -> Option<(&'static str, usize, usize, usize)> {
    let key = caps.name("key")?;
    if text[..key.start()].chars().next_back().is_some_and(is_key_char) {
        return None;
    }
    let kind = classify_key(key.as_str())?;
    let (val, quoted) = match (caps.name("dq"), caps.name("sq"), caps.name("bare")) {
        (Some(m), _, _) | (None, Some(m), _) => (m, true),
        (None, None, Some(m)) => (m, false),
        _ => return None,
    };
    let v = val.as_str();
    if is_placeholder(v) || is_null_word(v) {
        return None;
    }
    if v.len() < 6 && v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !quoted {
        if v.contains(['(', '[', '{', '<']) || v.starts_with(['&', '*']) {
            return None;
        }
        if cli {
            // `--token TOKEN`, `--password-file x`, `--no-password --verbose`.
            if v.starts_with('-')
                || (is_identifier(v)
                    && !v.bytes().any(|b| b.is_ascii_digit())
                    && !v.bytes().any(|b| b.is_ascii_lowercase()))
            {
                return None;
            }
        } else {
            if is_member_path(v) || is_type_name(v) || is_path_like(v) {
                return None;
            }
            if is_identifier(v)
                && !v.bytes().any(|b| b.is_ascii_digit())
                && !env_style(text, key.start(), key.end(), val.start())
            {
                return None;
            }
        }
    } else if is_path_like(v) && kind == "generic_secret" {
        return None;
    }
    if kind == "generic_secret" && !generic_value_ok(v) {
        return None;
    }
    Some((kind, key.start(), val.start(), val.end()))
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
    // TESTS
}
