//! Cloud providers and infrastructure services.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "aws_access_key_id",
        pattern: r"(?-u:\b)((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?-u:\b)",
        keywords: &["A3T", "AKIA", "ASIA", "ABIA", "ACCA"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "aws_secret_access_key",
        pattern: r#"(?i-u)(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9/+]{40})(?:(?u:[^a-z0-9/+=])|\z)"#,
        // Every alternative holds `secret`, an optional `_`, then `access` or `key`.
        keywords: &["secretaccess", "secret_access", "secretkey", "secret_key"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "aws_session_token",
        pattern: r#"(?i-u)(?:aws_?session_?token|session_?token)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9/+=]{100,})"#,
        keywords: &["sessiontoken", "session_token"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "aws_bedrock_api_key",
        pattern: r"(?-u:\b)ABSK[A-Za-z0-9+/]{109,269}={0,2}",
        keywords: &["ABSK"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "google_api_key",
        pattern: r"AIza[0-9A-Za-z_\-]{35}",
        keywords: &["AIza"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "google_oauth_client_secret",
        pattern: r"GOCSPX-[0-9A-Za-z_\-]{28}",
        keywords: &["GOCSPX-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "google_oauth_token",
        pattern: r"(?-u:\b)(?:ya29\.[0-9A-Za-z_\-]{30,}|1//0[0-9A-Za-z_\-]{40,})",
        keywords: &["ya29.", "1//0"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "azure_storage_account_key",
        pattern: r"(?i-u)(?-u:\b)AccountKey=([a-z0-9+/]{86}==)",
        keywords: &["AccountKey=", "accountkey=", "ACCOUNTKEY="],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "azure_shared_access_key",
        pattern: r"(?i-u)(?-u:\b)SharedAccessKey=([a-z0-9+/]{42,44}=)",
        keywords: &["SharedAccessKey=", "sharedaccesskey=", "SHAREDACCESSKEY="],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "azure_sas_signature",
        pattern: r"(?i-u)(?:[?&]|(?-u:\b))sig=([a-z0-9%+/]{40,100}(?:=|%3d){0,2})",
        keywords: &["sig="],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "azure_ad_client_secret",
        pattern: r"(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|\z)",
        keywords: &["Q~"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "alibaba_access_key_id",
        pattern: r"(?-u:\b)LTAI[A-Za-z0-9]{12,20}(?-u:\b)",
        keywords: &["LTAI"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "digitalocean_token",
        pattern: r"(?-u:\b)do[por]_v1_[a-f0-9]{64}(?-u:\b)",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "cloudflare_origin_ca_key",
        pattern: r"(?-u:\b)v1\.0-[a-f0-9]{24}-[a-f0-9]{146}(?-u:\b)",
        keywords: &["v1.0-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "cloudflare_api_token",
        pattern: r#"(?i-u)(?:cloudflare|(?-u:\b)cf)_?(?:api_?)?(?:token|key)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([a-z0-9_\-]{37,40})"#,
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
        reach: Reach::Line,
    },
    Spec {
        kind: "heroku_api_key",
        pattern: r#"(?i-u)(?-u:\b)HRKU-AA[0-9a-z_\-]{58}|heroku[a-z_\-]{0,20}(?:key|token)(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\\?["'])?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"#,
        keywords: &["hrku-", "heroku"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "databricks_token",
        pattern: r"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9])?(?-u:\b)",
        keywords: &["dapi"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "supabase_token",
        pattern: r"(?-u:\b)(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})",
        keywords: &["sbp_", "sb_secret_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "fly_io_token",
        pattern: r"(?-u:\b)fo1_[A-Za-z0-9_\-]{43}",
        keywords: &["fo1_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "planetscale_token",
        pattern: r"(?-u:\b)pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}",
        keywords: &["pscale_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "terraform_cloud_token",
        pattern: r"(?-u:\b)[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        keywords: &["atlasv1"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "pulumi_access_token",
        pattern: r"(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)",
        keywords: &["pul-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "vault_token",
        pattern: r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_\-]{24,}",
        keywords: &["hvs.", "hvb.", "hvr."],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "vault_token",
        // Vault's legacy service token: `s.` and 24 base62 characters. An
        // `s.` member access is on every other line of code, so the 24 must
        // look random (digits, or cases mixed heavily), not a name. No
        // keyword: `s.` would put most lines of code through the keyword
        // scan; its gate (`gates::vault_legacy`) wants exactly 24 letters
        // or digits after an `s.` that starts a word.
        pattern: r"(?-u:\b)s\.([A-Za-z0-9]{24})(?-u:\b)",
        keywords: &[],
        check: Check::RandomTail,
        reach: Reach::Line,
    },
    Spec {
        kind: "doppler_token",
        pattern: r"(?-u:\b)dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}",
        keywords: &["dp."],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_aws_access_key_id: "aws_access_key_id" => (
            "aws_access_key_id = ", format!("{}{}", concat!("AK", "IA"), rnd(4, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")), "\n"
        );
        redacts_labelled_aws_secret_access_key: "aws_secret_access_key" => (
            "aws_secret_access_key = ", rnd(5, 40, B64), "\nregion = us-east-1"
        );
        redacts_labelled_aws_session_token: "aws_session_token" => (
            "AWS_SESSION_TOKEN=", rnd(6, 300, B64), "\n"
        );
        redacts_aws_secret_key_in_camel_case: "aws_secret_access_key" => (
            "{ AwsSecretKey: '", rnd(61, 40, B64), "' }"
        );
        redacts_secret_access_key_without_underscores: "aws_secret_access_key" => (
            "SECRETACCESSKEY=", rnd(62, 40, B64), "\n"
        );
        redacts_aws_session_token_in_camel_case: "aws_session_token" => (
            "sessionToken: ", rnd(63, 120, B64), "\n"
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
        redacts_vault_legacy_token: "vault_token" => (
            "export VAULT_TOKEN=", format!("s.{}", rnd(31, 24, ALNUM)), "\n"
        );
        redacts_doppler_token: "doppler_token" => (
            "doppler ", format!("{}{}", concat!("dp", ".pt."), rnd(30, 43, ALNUM)), " end"
        );
    }
}
